"""Judge faults end in one clear line: every fault leaves its items unscored with a reason that is counted, the run
completes, and a judge that is down costs seconds (the client's circuit breaker), not minutes per item.

The items are the Agent-X mini split judged by Agent-X's `judge_item` (nine calls per item) against the
scripted loopback judge (`judges/testing.py`).  Fast tests shrink timeouts and the breaker window; the slow ones
(marker ``reliability_slow``) use the default configuration (and the real CLI) and print their timings."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import lmms_agentic
from lmms_agentic.judges import JudgeClient, JudgeConfig, coverage_summary
from lmms_agentic.judges.result import JUDGE_UNAVAILABLE, PARSE_FAILURE, REFUSAL
from lmms_agentic.judges.testing import ScriptedCall, ScriptedJudgeServer, ScriptedReply
from lmms_agentic.tasks.agentx.core import release_data
from lmms_agentic.tasks.agentx.judge import judge_item

from ..conftest import CliRun, run_lmms_eval

MINI = Path(lmms_agentic.tasks_dir()) / "agentx" / "data" / "mini"
DATA: dict[str, Any] = json.loads((MINI / "data.json").read_text())
N_CALLS = sum(8 if key in release_data.GENERATIVE_IDS else 9 for key in DATA)
"""Judge results of a run (nine metrics per text item, eight per generative one).  Two of them are the same request
(same template, same fields), which the client sends once: ``distinct`` counts requests."""
GOOD = "{'Score': 0.7}"


def judge_run(client: JudgeClient) -> tuple[dict[str, list[dict[str, Any]]], float]:
    """Judge every mini item as lmms-eval's process_results does (one item after the other): {metric: results}."""
    by_metric: dict[str, list[dict[str, Any]]] = {}
    start = time.perf_counter()
    for key, (record,) in DATA.items():
        judged = judge_item(key, record, {}, query_type=record["query_type"],
                            is_generative=key in release_data.GENERATIVE_IDS, client=client)
        for metric, result in judged.items():
            by_metric.setdefault(metric, []).append(result)
    return by_metric, time.perf_counter() - start


def reasons(by_metric: dict[str, list[dict[str, Any]]]) -> Counter[str | None]:
    return Counter(r["unscored_reason"] for results in by_metric.values() for r in results)


def distinct(by_metric: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """One result per request (by cache key)."""
    return {r["request_key"]: r for results in by_metric.values() for r in results}


@pytest.fixture
def serve() -> Iterator[Callable[..., ScriptedJudgeServer]]:
    servers: list[ScriptedJudgeServer] = []

    def start(script: Callable[[ScriptedCall], ScriptedReply]) -> ScriptedJudgeServer:
        servers.append(ScriptedJudgeServer(script).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Callable[..., JudgeClient]]:
    made: list[JudgeClient] = []

    def build(server: ScriptedJudgeServer | str, **overrides: Any) -> JudgeClient:
        url = server if isinstance(server, str) else server.base_url
        settings: dict[str, Any] = {"base_url": url, "model": "judge-2024-08-06", "cache_dir": tmp_path / "cache",
                                    "timeout": 2.0, "max_retries": 2, "backoff_base": 0.01, "backoff_max": 0.05,
                                    "breaker_window": 0.5}
        settings.update(overrides)
        made.append(JudgeClient(JudgeConfig(**settings)))
        return made[-1]

    yield build
    for c in made:
        c.close()


# ------------------------------------------------------------------ each fault: unscored, with its reason, counted

def _fault(call: ScriptedCall) -> str:
    """A fixed fault per request (by a hash of the prompt), so the expected count of each reason is known."""
    kinds = ("ok", "ok", "ok", "parse", "refusal", "malformed_once", "status_once", "retry_after_once")
    return kinds[hashlib.sha256(call.prompt.encode()).digest()[0] % len(kinds)]


def _faulty(call: ScriptedCall) -> ScriptedReply:
    kind = _fault(call)
    if kind == "parse":
        return ScriptedReply("{'Score': ")  # malformed JSON verdict
    if kind == "refusal":
        return ScriptedReply(None, refusal="I can't help with grading this.")
    if call.seen == 0 and kind == "malformed_once":
        return ScriptedReply(body=b'{"choices": [{"message": ')  # a truncated body: retried
    if call.seen == 0 and kind == "status_once":
        return ScriptedReply(status=503)
    if call.seen == 0 and kind == "retry_after_once":
        return ScriptedReply(status=429, headers={"retry-after-ms": "150"})
    return ScriptedReply(GOOD)


def test_every_fault_is_unscored_with_its_reason_and_counted(serve: Callable[..., ScriptedJudgeServer],
                                                             client: Callable[..., JudgeClient],
                                                             caplog: pytest.LogCaptureFixture) -> None:
    server = serve(_faulty)
    judge = client(server)
    by_metric, _ = judge_run(judge)
    first_tries = [c for c in server.calls if c.seen == 0]
    expected = Counter({"parse": PARSE_FAILURE, "refusal": REFUSAL}.get(_fault(c)) for c in first_tries)
    results = distinct(by_metric)
    assert sum(expected.values()) == len(results) and expected[PARSE_FAILURE] and expected[REFUSAL]
    assert Counter(r["unscored_reason"] for r in results.values()) == expected  # transient faults: retried, scored
    assert sum(reasons(by_metric).values()) == N_CALLS
    with caplog.at_level(logging.WARNING):
        summary = coverage_summary("ground_s", by_metric["ground_s"])
    assert summary["n_scored"] + summary["n_unscored"] == len(DATA)
    assert dict(summary["unscored_reasons"]) == {k: v for k, v in Counter(
        r["unscored_reason"] for r in by_metric["ground_s"] if r["unscored_reason"]).items()}
    assert judge.available and judge.stats["breaker"]["trips"] == 0


#: the default retry schedule (4 retries, backoff doubling from 1 s; breaker window 5 s) at 1/5 scale
DOWN = {"max_retries": 4, "backoff_base": 0.2, "backoff_max": 6.0, "breaker_window": 1.0}


@pytest.mark.parametrize(("name", "reply", "timeout", "reason"), [
    ("hanging", ScriptedReply(GOOD, delay=5.0), 0.2, "timeout after 0.2s"),
    ("permanent_429_retry_after", ScriptedReply(status=429, headers={"Retry-After": "1"}), 2.0, "HTTP 429"),
    ("permanent_malformed_body", ScriptedReply(body=b"<html>502 Bad Gateway"), 2.0, "not valid JSON"),
    ("permanent_500", ScriptedReply(status=500), 2.0, "HTTP 500"),
    ("dripping_a_byte_every_50ms", ScriptedReply(GOOD, drip=0.05), 0.2, "timeout after 0.2s in all"),
])
def test_a_judge_that_is_down_costs_seconds_and_says_so_once(serve: Callable[..., ScriptedJudgeServer],
                                                             client: Callable[..., JudgeClient],
                                                             caplog: pytest.LogCaptureFixture, name: str,
                                                             reply: ScriptedReply, timeout: float, reason: str) -> None:
    server = serve(lambda call: reply)
    judge = client(server, timeout=timeout, **DOWN)
    with caplog.at_level(logging.WARNING):
        by_metric, seconds = judge_run(judge)
    assert reasons(by_metric) == Counter({JUDGE_UNAVAILABLE: N_CALLS})  # nobody waited out all retries
    assert seconds < 60, seconds  # a wide margin; the request count below is the check
    assert server.request_count < 50  # without the breaker: 87 requests x 5 attempts
    lines = [r.getMessage() for r in caplog.records if "JUDGE UNAVAILABLE" in r.getMessage()]
    assert len(lines) == 1 and reason in lines[0]
    assert "LOW JUDGE COVERAGE" not in caplog.text  # that is the aggregation's line, below
    summary = coverage_summary("ground_s", by_metric["ground_s"], warn=False)
    assert summary["ground_s_coverage"] == 0.0 and JUDGE_UNAVAILABLE in summary["unscored_reasons"]


def test_connection_refused(client: Callable[..., JudgeClient], caplog: pytest.LogCaptureFixture) -> None:
    judge = client("http://127.0.0.1:9/v1", **DOWN)
    with caplog.at_level(logging.WARNING):
        by_metric, seconds = judge_run(judge)
    assert seconds < 60 and reasons(by_metric) == Counter({JUDGE_UNAVAILABLE: N_CALLS})
    assert sum("JUDGE UNAVAILABLE" in r.getMessage() and "ConnectError" in r.getMessage()
               for r in caplog.records) == 1


def test_unavailable_items_are_judged_by_the_next_run(serve: Callable[..., ScriptedJudgeServer],
                                                      client: Callable[..., JudgeClient]) -> None:
    down = serve(lambda call: ScriptedReply(status=503))
    first, _ = judge_run(client(down))
    assert reasons(first)[None] == 0
    up = serve(lambda call: ScriptedReply(GOOD))
    second, _ = judge_run(client(up))  # same cache folder
    assert reasons(second) == Counter({None: N_CALLS}) and up.request_count == len(distinct(second))
    third, _ = judge_run(client(up))
    assert up.request_count == len(distinct(second)) and all(r["cached"] for rs in third.values() for r in rs)


def test_damaged_cache_entries_are_re_requested_and_rewritten(serve: Callable[..., ScriptedJudgeServer],
                                                              client: Callable[..., JudgeClient]) -> None:
    server = serve(lambda call: ScriptedReply(GOOD))
    first, _ = judge_run(client(server))
    sent = server.request_count
    assert sent == len(distinct(first))
    files = sorted((client(server).cache.root).rglob("*.json"))  # type: ignore[union-attr]
    damages: list[Callable[[bytes], bytes]] = [
        lambda b: b[: len(b) // 2],                                  # torn write (power loss)
        lambda b: b[:40] + b"\xff\xfe\x80" + b[40:],                 # non-UTF-8 bytes
        lambda b: b.replace(b"0.7", b"1.0"),                         # hand-edited verdict
        lambda b: b"",                                               # empty file
    ]
    for i, path in enumerate(files[:8]):
        path.write_bytes(damages[i % len(damages)](path.read_bytes()))
    again = client(server)
    by_metric, _ = judge_run(again)
    assert reasons(by_metric) == Counter({None: N_CALLS})
    assert all(r["score"] == 0.7 for rs in by_metric.values() for r in rs)  # never the edited 1.0
    assert server.request_count == sent + 8
    assert again.cache is not None and again.cache.stats.corrupt == 8
    assert all(again.cache.get(p.stem) is not None for p in files)  # rewritten


# ------------------------------------------------------------------ slow: default configuration, real CLI

@pytest.mark.reliability_slow
@pytest.mark.parametrize(("name", "script", "timeout", "budget"), [
    ("permanent_429_retry_after_10s", lambda call: ScriptedReply(status=429, headers={"Retry-After": "10"}), 60.0,
     25.0),
    ("hanging_judge_2s_timeout", lambda call: ScriptedReply(GOOD, delay=30.0), 2.0, 15.0),
    ("http_500", lambda call: ScriptedReply(status=500), 60.0, 15.0),
])
def test_judge_down_timings_with_the_default_configuration(serve: Callable[..., ScriptedJudgeServer],
                                                           tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                           name: str, script: Callable[[ScriptedCall], ScriptedReply],
                                                           timeout: float, budget: float) -> None:
    """Default retries (4), backoff (1 s), concurrency (16) and breaker (10 failures over 5 s).  Before the breaker
    these took 377-400 s (429 + Retry-After: 10), 232 s (hanging, 2 s timeout) and 132 s (500) for the 10 items."""
    server = serve(script)
    judge = JudgeClient(JudgeConfig(base_url=server.base_url, model="judge-2024-08-06", timeout=timeout,
                                    cache_dir=tmp_path / "cache"))
    with caplog.at_level(logging.WARNING):
        by_metric, seconds = judge_run(judge)
    print(f"{name}: {seconds:.1f}s for {len(DATA)} items, {server.request_count} requests, {dict(reasons(by_metric))}")
    assert seconds < 4 * budget and reasons(by_metric)[None] == 0  # a wide margin on the figures above
    assert sum("JUDGE UNAVAILABLE" in r.getMessage() for r in caplog.records) == 1
    judge.close()


def _cli(tmp_path: Path, name: str, server: ScriptedJudgeServer) -> CliRun:
    env = {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_BASE_URL": server.base_url,
           "LMMS_AGENTIC_JUDGE_MODEL": "judge-test-2025-01-01", "LMMS_AGENTIC_JUDGE_CACHE": str(tmp_path / "cache")}
    return run_lmms_eval(["--model", "agentic_scripted", "--tasks", "agentx"], tmp_path / name, env=env)


@pytest.mark.reliability_slow
@pytest.mark.e2e
def test_cli_run_with_the_judge_down_completes_and_a_rerun_scores_everything(tmp_path: Path) -> None:
    """Judge answering 429 + Retry-After: 10 for ever: the judging phase of the run takes one Retry-After (then the
    breaker opens), the run completes with every judged metric unscored as judge_unavailable (said once), and a
    rerun against a working judge asks for every one of them."""
    arrivals: list[float] = []

    def down_script(call: ScriptedCall) -> ScriptedReply:
        arrivals.append(time.perf_counter())
        return ScriptedReply(status=429, headers={"Retry-After": "10"})

    with ScriptedJudgeServer(down_script) as down:
        run = _cli(tmp_path, "down", down)
    run.assert_ok()
    judging = arrivals[-1] - arrivals[0]
    print(f"CLI run, judge answering 429 + Retry-After: 10: judging took {judging:.1f}s, {len(arrivals)} requests")
    assert judging < 80 and len(arrivals) < 100  # before: 4 x 10 s per item, 440 requests (a wide margin)
    assert run.log.count("JUDGE UNAVAILABLE") == 1
    assert "stopped asking after repeated failures" in run.log  # the coverage warning names the cause
    assert run.results["results"]["agentx_text_answer"]["cov_ground,none"] == 0.0
    with ScriptedJudgeServer(lambda call: ScriptedReply(GOOD)) as up:
        rerun = _cli(tmp_path, "up", up)
    rerun.assert_ok()
    # Nothing unscored was cached: every judge result is asked again (two of them share one request).  Counted as
    # distinct request bodies: on a loaded CI machine a slow reply can time out and be retried, which is not a miss.
    asked = {json.dumps(call.body, sort_keys=True) for call in up.calls}
    assert len(asked) == N_CALLS - 1, f"{len(asked)} distinct requests, {up.request_count} in all"
    assert rerun.results["results"]["agentx_text_answer"]["cov_ground,none"] == 1.0


def test_huge_replies_are_failed_calls_and_fill_neither_cache_nor_logs(serve: Callable[..., ScriptedJudgeServer],
                                                                       client: Callable[..., JudgeClient],
                                                                       tmp_path: Path) -> None:
    """Before: 10 MB replies were stored twice (163 MB of cache plus 163 MB of sample logs for 2 items); now a reply
    over ``max_reply_bytes`` (default 1 MiB) is a transport error with its reason, not stored and not retried."""
    huge = "{'Score': 0.7} " + "x" * 2_000_000
    server = serve(lambda call: ScriptedReply(huge))
    judge = client(server, max_reply_bytes=1_048_576)
    results = [r for key, (record,) in list(DATA.items())[:2]
               for r in judge_item(key, record, {}, query_type=record["query_type"], is_generative=False,
                                   client=judge).values()]
    assert {r["unscored_reason"] for r in results} == {"transport_error"}
    assert all("cap of 1,048,576 bytes" in r["detail"] for r in results)
    assert len(json.dumps(results)) < 100_000  # what the sample log would hold
    assert not list((tmp_path / "cache").rglob("??/*.json"))
    assert server.request_count == len({r["request_key"] for r in results})  # one attempt each
