"""The on-disk judge cache: resume after a crash, concurrent writers from two processes, corrupt entries, stats."""

from __future__ import annotations

import json
import logging
import multiprocessing
from collections.abc import Callable
from pathlib import Path

import pytest

from lmms_agentic.judges import JudgeCache, JudgeClient, JudgeConfig, JudgeResult, request_key
from lmms_agentic.judges.testing import ScriptedJudgeServer, fixed

from .conftest import MODEL, SCORE_TEMPLATE, score_request

Serve = Callable[..., ScriptedJudgeServer]
Make = Callable[..., JudgeClient]


class Crash(KeyboardInterrupt):
    """A Ctrl-C raised from the progress callback."""


def test_rerun_after_crash_sends_only_the_missing(serve: Serve, make_client: Make) -> None:
    server = serve(fixed("Score: 4"), latency=0.02)
    requests = [score_request(i) for i in range(30)]
    seen: list[int] = []

    def die_after_ten(index: int, result: JudgeResult) -> None:
        seen.append(index)
        if len(seen) == 10:
            raise Crash

    first = make_client(server, concurrency=4)
    with pytest.raises(KeyboardInterrupt):
        first.judge_many(requests, progress=False, on_result=die_after_ten)
    assert first.cache is not None
    cached, sent = len(first.cache), server.request_count
    assert 10 <= cached <= 20 and sent == cached  # in-flight requests finished and were cached; the queue was dropped

    second = make_client(server, concurrency=4)
    results = second.judge_many(requests, progress=False)
    assert all(r.score == 4.0 for r in results)
    assert server.request_count - sent == 30 - cached  # only the missing ones were sent
    assert sum(r.cached for r in results) == cached
    assert second.cache is not None and second.cache.stats.hits == cached and second.cache.stats.misses == 30 - cached

    before = server.request_count
    third = make_client(server)
    again = third.judge_many(requests, progress=False)
    assert server.request_count == before  # zero requests
    assert all(r.cached and r.score == 4.0 and r.attempts == 0 for r in again)
    assert [r.judge_model for r in again] == ["scripted-judge-2024-01-01"] * 30


def test_cache_works_offline_with_only_a_model_name(serve: Serve, make_client: Make) -> None:
    server = serve(fixed("Score: 2"))
    make_client(server).judge(score_request(1))
    offline = make_client(None)  # same cache dir and model, no base URL: rescoring without a server
    assert offline.judge(score_request(1)).score == 2.0
    assert offline.judge(score_request(2)).unscored_reason == "not_configured"


def test_key_covers_template_version_model_and_request() -> None:
    body = {"model": MODEL, "messages": SCORE_TEMPLATE.render({"question": "q", "response": "r"}), "temperature": 0}
    base = request_key(SCORE_TEMPLATE, MODEL, body)
    from dataclasses import replace

    assert request_key(replace(SCORE_TEMPLATE, version="2"), MODEL, body) != base
    assert request_key(SCORE_TEMPLATE, "other-model", body) != base
    assert request_key(SCORE_TEMPLATE, MODEL, {**body, "temperature": 0.5}) != base
    assert request_key(SCORE_TEMPLATE, MODEL, dict(body)) == base


def test_corrupt_entry_is_skipped_and_rewritten(serve: Serve, make_client: Make,
                                                caplog: pytest.LogCaptureFixture) -> None:
    server = serve(fixed("Score: 5"))
    client = make_client(server)
    first = client.judge(score_request(1))
    assert client.cache is not None and first.request_key is not None
    path = client.cache.path(first.request_key)
    for damage in ('{"format": 1, "key": "', "[]", json.dumps({"format": 1, "key": "0" * 64, "raw_reply": "x"})):
        path.write_text(damage)
        fresh = make_client(server)
        with caplog.at_level(logging.WARNING):
            result = fresh.judge(score_request(1))
        assert result.score == 5.0 and not result.cached  # treated as a miss, re-sent
        assert fresh.cache is not None and fresh.cache.stats.corrupt == 1 and fresh.cache.stats.misses == 1
        assert "corrupt entry" in caplog.text
        assert json.loads(path.read_text())["raw_reply"] == "Score: 5"  # rewritten
    assert server.request_count == 4


def _hammer(root: str, worker: int, rounds: int) -> int:
    """Write and read 20 shared keys many times; return how many reads found a bad entry."""
    cache = JudgeCache(root)
    bad = 0
    for r in range(rounds):
        for k in range(20):
            key = f"{k:02x}" * 32
            cache.put(key, {"raw_reply": f"Score: {k % 5 + 1}", "writer": worker, "round": r, "pad": "x" * 2000})
            entry = cache.get(key)
            if entry is None or entry["raw_reply"] != f"Score: {k % 5 + 1}":
                bad += 1
    return bad + cache.stats.corrupt


def _judge_in_process(base_url: str, cache_dir: str) -> int:
    client = JudgeClient(JudgeConfig(base_url=base_url, model=MODEL, cache_dir=cache_dir, concurrency=4,
                                     max_retries=1, backoff_base=0.001))
    results = client.judge_many([score_request(i) for i in range(40)], progress=False)
    return sum(r.scored for r in results)


def test_two_processes_write_one_cache_without_corruption(tmp_path: Path, serve: Serve, make_client: Make) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        stress = pool.starmap(_hammer, [(str(tmp_path / "stress"), w, 15) for w in range(2)])
        assert stress == [0, 0]
        server = serve(fixed("Score: 3"), latency=0.005)
        shared = str(tmp_path / "shared")
        scored = pool.starmap(_judge_in_process, [(server.base_url, shared)] * 2)
    assert scored == [40, 40]
    cache = JudgeCache(shared)
    assert len(cache) == 40 and all(cache.get(k) is not None for k in cache)
    assert cache.stats.corrupt == 0
    assert not list(Path(shared).rglob(".tmp-*"))  # no temp files left behind
    before = server.request_count
    assert 40 <= before <= 80
    results = make_client(server, cache_dir=shared).judge_many([score_request(i) for i in range(40)], progress=False)
    assert server.request_count == before and all(r.cached for r in results)


def test_cache_rejects_bad_keys(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    with pytest.raises(ValueError):
        cache.path("../../etc/passwd")
    assert cache.get("a" * 64) is None and cache.stats.misses == 1 and len(cache) == 0
