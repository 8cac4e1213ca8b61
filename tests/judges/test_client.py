"""The real judge client against the scripted loopback server: replies, retries, failures, refusals, concurrency."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import pytest

from lmms_agentic.judges import (
    NOT_CONFIGURED,
    PARSE_FAILURE,
    REFUSAL,
    TRANSPORT_ERROR,
    JudgeClient,
    JudgeRequest,
    PromptTemplate,
    coverage_summary,
)
from lmms_agentic.judges.result import JUDGE_UNAVAILABLE
from lmms_agentic.judges.rubric import JsonObjectParser, Number, Text
from lmms_agentic.judges.testing import ScriptedCall, ScriptedJudgeServer, ScriptedReply, fixed

from .conftest import MODEL, item_of, score_request

Serve = Callable[..., ScriptedJudgeServer]
Make = Callable[..., JudgeClient]


def first_then(bad: ScriptedReply, good: str = "Score: 4") -> Callable[[ScriptedCall], ScriptedReply]:
    """``bad`` on the first try of each distinct request, then a good reply."""
    return lambda call: bad if call.seen == 0 else ScriptedReply(good)


def test_normal_reply_records_model_template_temperature(serve: Serve, make_client: Make) -> None:
    server = serve(fixed("The answer is correct and complete.\nScore: 5"))
    result = make_client(server).judge(score_request(1))
    assert result.scored and result.score == 5.0 and result.unscored_reason is None
    assert result.judge_model == "scripted-judge-2024-01-01" and result.judge_model_requested == MODEL
    assert (result.template_id, result.template_version, result.temperature) == ("test/score", "1", 0.0)
    assert result.raw_reply == "The answer is correct and complete.\nScore: 5"
    assert result.item_id == "id1" and result.attempts == 1 and not result.cached
    (call,) = server.calls
    assert call.body["temperature"] == 0.0 and call.body["model"] == MODEL
    assert call.headers["Authorization"].startswith("Bearer sk-test-")
    assert [m["role"] for m in call.body["messages"]] == ["system", "user"]
    as_dict = result.as_dict()
    assert as_dict["score"] == 5.0 and as_dict["judge_model"] == "scripted-judge-2024-01-01"


@pytest.mark.parametrize(("bad", "detail"), [
    (ScriptedReply(status=500), "HTTP 500"),
    (ScriptedReply(status=503), "HTTP 503"),
    (ScriptedReply(body=b'{"choices": [{"message": '), "not valid JSON"),
    (ScriptedReply("Score: 4", truncate=True), ""),
])
def test_transient_failures_are_retried(serve: Serve, make_client: Make, bad: ScriptedReply, detail: str) -> None:
    server = serve(first_then(bad))
    result = make_client(server).judge(score_request(1))
    assert result.scored and result.score == 4.0 and result.attempts == 2
    assert server.request_count == 2


@pytest.mark.parametrize(("bad", "detail"), [
    (ScriptedReply(status=500), "HTTP 500"),
    (ScriptedReply(body=b"<html>bad gateway"), "not valid JSON"),
    (ScriptedReply("Score: 4", truncate=True), "RemoteProtocolError"),
])
def test_persistent_failures_exhaust_retries(serve: Serve, make_client: Make, bad: ScriptedReply,
                                             detail: str) -> None:
    server = serve(lambda call: bad)
    client = make_client(server, max_retries=3)
    result = client.judge(score_request(1))
    assert not result.scored and result.unscored_reason == TRANSPORT_ERROR and result.score is None
    assert detail in (result.detail or "") and result.attempts == 4
    assert server.request_count == 4 and client.stats["retries"] == 3
    assert client.cache is not None and len(client.cache) == 0  # transport errors are never cached


def test_client_errors_are_not_retried(serve: Serve, make_client: Make) -> None:
    server = serve(lambda call: ScriptedReply(status=400))
    result = make_client(server).judge(score_request(1))
    assert result.unscored_reason == TRANSPORT_ERROR and "HTTP 400" in (result.detail or "")
    assert server.request_count == 1


def test_timeout_is_retried_then_unscored(serve: Serve, make_client: Make) -> None:
    server = serve(lambda call: ScriptedReply("Score: 2", delay=0.6))
    client = make_client(server, timeout=0.15, max_retries=1)
    start = time.perf_counter()
    result = client.judge(score_request(1))
    assert result.unscored_reason == TRANSPORT_ERROR and "timeout" in (result.detail or "")
    assert server.request_count == 2 and time.perf_counter() - start < 30  # (wide margin)


def test_429_honours_retry_after_and_backoff_grows(serve: Serve, make_client: Make) -> None:
    delays: list[float] = []
    server = serve(lambda call: ScriptedReply(status=429, headers={"Retry-After": "7"}) if call.seen == 0
                   else ScriptedReply(status=500) if call.seen < 3 else ScriptedReply("Score: 3"))
    client = make_client(server, max_retries=4, backoff_base=0.01, backoff_max=1.0, sleep=delays.append)
    result = client.judge(score_request(1))
    assert result.score == 3.0 and result.attempts == 4 and server.request_count == 4
    assert delays[0] == 7.0  # Retry-After honoured
    assert 0.01 <= delays[1] <= 0.02 and 0.02 <= delays[2] <= 0.04  # exponential with jitter (attempts 2, 3)


def test_retry_after_ms_and_cap(serve: Serve, make_client: Make) -> None:
    delays: list[float] = []
    server = serve(lambda call: ScriptedReply(status=429, headers={"retry-after-ms": "250"}) if call.seen == 0
                   else ScriptedReply(status=429, headers={"Retry-After": "9999"}) if call.seen == 1
                   else ScriptedReply("Score: 3"))
    result = make_client(server, retry_after_max=30.0, sleep=delays.append).judge(score_request(1))
    assert result.score == 3.0 and delays == [0.25, 30.0]


def test_real_sleep_for_retry_after(serve: Serve, make_client: Make) -> None:
    server = serve(first_then(ScriptedReply(status=429, headers={"retry-after-ms": "300"})))
    start = time.perf_counter()
    assert make_client(server).judge(score_request(1)).score == 4.0
    assert time.perf_counter() - start >= 0.3


@pytest.mark.parametrize(("reply", "reason"), [
    (ScriptedReply(None, refusal="I can't assist with that."), REFUSAL),
    (ScriptedReply("", finish_reason="content_filter"), REFUSAL),
    (ScriptedReply("I'm sorry, but I can't help with grading this."), REFUSAL),
    (ScriptedReply("The response looks fine to me."), PARSE_FAILURE),
    (ScriptedReply("Score: 9"), PARSE_FAILURE),
    (ScriptedReply(None), PARSE_FAILURE),
])
def test_refusals_and_parse_failures_keep_raw_reply(serve: Serve, make_client: Make, reply: ScriptedReply,
                                                    reason: str) -> None:
    server = serve(lambda call: reply)
    client = make_client(server)
    result = client.judge(score_request(1))
    assert result.unscored_reason == reason and result.score is None and result.detail
    assert result.raw_reply == (reply.content if reply.content is not None else reply.refusal)
    assert server.request_count == 1  # a judge answer is not retried
    assert client.cache is not None and len(client.cache) == 0  # and not cached
    client.judge(score_request(1))
    assert server.request_count == 2  # so a rerun asks again


def test_apology_that_still_scores_is_not_a_refusal(serve: Serve, make_client: Make) -> None:
    server = serve(fixed("I'm sorry, but the answer is wrong.\nScore: 1"))
    assert make_client(server).judge(score_request(1)).score == 1.0


def test_malformed_json_from_a_rubric_judge_is_a_parse_failure(serve: Serve, make_client: Make) -> None:
    template = PromptTemplate(id="test/rubric", version="1", user="Grade:\n{{response}}\nReply in JSON.",
                              parser=JsonObjectParser({"Score": Number(0, 1), "Justification": Text()}, score="Score"),
                              json_mode=True)
    server = serve(lambda call: ScriptedReply('{"Score": 0.5, "Justification": "cut off'
                                              if call.index == 0 else '{"Score": 0.5, "Justification": "ok"}'))
    client = make_client(server)
    bad = client.judge(JudgeRequest(template, {"response": "x"}))
    assert bad.unscored_reason == PARSE_FAILURE and bad.raw_reply is not None and bad.raw_reply.endswith("cut off")
    good = client.judge(JudgeRequest(template, {"response": "x"}))
    assert good.score == 0.5 and good.dimensions == {"Score": 0.5} and good.fields == {"Justification": "ok"}
    assert server.calls[0].body["response_format"] == {"type": "json_object"}


def test_slow_replies_run_concurrently_within_the_limit(serve: Serve, make_client: Make) -> None:
    server = serve(fixed("Score: 3"), latency=0.2)
    client = make_client(server, concurrency=8)
    start = time.perf_counter()
    results = client.judge_many([score_request(i) for i in range(24)], progress=False)
    elapsed = time.perf_counter() - start
    assert [r.item_id for r in results] == [f"id{i}" for i in range(24)]  # input order
    assert all(r.score == 3.0 for r in results)
    assert server.max_in_flight == 8 and elapsed < 24 * 0.2 * 5  # parallel (max_in_flight), capped; wide margin


def test_a_third_failing_completes_with_every_failure_counted(serve: Serve, make_client: Make,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    server = serve(lambda call: ScriptedReply(status=500) if item_of(call.prompt) % 3 == 0
                   else ScriptedReply(f"Score: {item_of(call.prompt) % 5 + 1}"))
    client = make_client(server, max_retries=2, concurrency=6)
    results = client.judge_many([score_request(i) for i in range(30)], progress=False)
    failed = [i for i, r in enumerate(results) if not r.scored]
    assert failed == list(range(0, 30, 3))
    assert all(results[i].unscored_reason == TRANSPORT_ERROR and results[i].attempts == 3 for i in failed)
    assert all(r.score == i % 5 + 1 for i, r in enumerate(results) if r.scored)
    assert server.request_count == 20 + 10 * 3
    stats = client.stats
    assert stats["scored"] == 20 and stats["unscored"] == {TRANSPORT_ERROR: 10} and stats["retries"] == 20
    with caplog.at_level(logging.WARNING):
        summary = coverage_summary("quality", results)
    assert summary["n_scored"] == 20 and summary["n_unscored"] == 10
    assert summary["quality_coverage"] == pytest.approx(2 / 3)
    assert summary["unscored_reasons"] == {TRANSPORT_ERROR: 10}
    assert "LOW JUDGE COVERAGE" in caplog.text and "LMMS_AGENTIC_JUDGE_BASE_URL" in caplog.text


def test_identical_requests_are_sent_once(serve: Serve, make_client: Make) -> None:
    server = serve(fixed("Score: 2"))
    client = make_client(server, cache_dir=None)
    requests = [score_request(1), score_request(2), score_request(1)]
    requests[2] = JudgeRequest(requests[2].template, requests[2].values, "other-id")
    results = client.judge_many(requests, progress=False)
    assert server.request_count == 2 and [r.item_id for r in results] == ["id1", "id2", "other-id"]


def test_unconfigured_judge_sends_nothing(make_client: Make, caplog: pytest.LogCaptureFixture) -> None:
    client = make_client(None)
    with caplog.at_level(logging.WARNING):
        results = client.judge_many([score_request(i) for i in range(3)], progress=False)
    assert all(r.unscored_reason == NOT_CONFIGURED for r in results)
    assert "no LLM judge configured" in caplog.text and client.stats["http_requests"] == 0


def test_azure_style_endpoint(serve: Serve, make_client: Make) -> None:
    server = serve(fixed("Score: 4"))
    client = make_client(server, api_version="2024-06-01",
                         base_url=server.base_url.replace("/v1", "/openai/deployments/judge"))
    assert client.judge(score_request(1)).score == 4.0
    (call,) = server.calls
    assert call.path == "/openai/deployments/judge/chat/completions?api-version=2024-06-01"
    assert call.headers["api-key"].startswith("sk-test-") and "Authorization" not in call.headers


def test_full_chat_completions_url_is_used_as_is(serve: Serve, make_client: Make) -> None:
    server = serve(fixed("Score: 4"))
    client = make_client(server, base_url=server.base_url + "/chat/completions")
    assert client.judge(score_request(1)).score == 4.0 and server.calls[0].path == "/v1/chat/completions"


def test_no_network_object_before_first_request(serve: Serve, make_client: Make) -> None:
    server = serve()
    client = make_client(server)
    assert client._http is None
    client.judge(score_request(1))
    assert client._http is not None


def test_template_errors_raise(make_client: Make) -> None:
    client = make_client(None)
    request = score_request(1)
    with pytest.raises(ValueError, match="missing fields"):
        client.judge(JudgeRequest(request.template, {"question": "q"}))
    with pytest.raises(TypeError):
        client.judge(JudgeRequest(request.template, {"question": "q", "response": 3}))  # type: ignore[dict-item]


def _stats_keys(stats: dict[str, Any]) -> set[str]:
    return set(stats)


def test_stats_shape(serve: Serve, make_client: Make) -> None:
    server = serve()
    client = make_client(server)
    client.judge(score_request(1))
    assert _stats_keys(client.stats) == {"http_requests", "retries", "scored", "unscored", "deduplicated", "cache",
                                         "breaker"}
    assert client.stats["breaker"] == {"open": False, "trips": 0} and client.available


def test_unwritable_cache_does_not_fail_the_judge(serve: Serve, make_client: Make, tmp_path: Any,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    server = serve(fixed("Score: 4"))
    with caplog.at_level(logging.WARNING):
        result = make_client(server, cache_dir=blocker).judge(score_request(1))
    assert result.score == 4.0 and "could not store" in caplog.text


def test_unpinned_alias_warns(caplog: pytest.LogCaptureFixture) -> None:
    from lmms_agentic.judges import JudgeConfig

    with caplog.at_level(logging.WARNING):
        JudgeClient(JudgeConfig(base_url="http://127.0.0.1:9/v1", model="gpt-4o", cache_dir=None))
    assert "unpinned alias" in caplog.text and "gpt-4o-2024-08-06" in caplog.text


# ---------------------------------------------------------------- circuit breaker (a judge that is down)

def _breaker_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("JUDGE UNAVAILABLE")]


@pytest.mark.parametrize(("name", "reply", "timeout"), [
    ("http_500", ScriptedReply(status=500), 2.0),
    ("hanging", ScriptedReply("Score: 3", delay=3.0), 0.15),
    ("malformed_body", ScriptedReply(body=b"<html>proxy error"), 2.0),
])
def test_a_judge_that_is_down_opens_the_breaker_and_the_rest_is_unavailable(
        serve: Serve, make_client: Make, caplog: pytest.LogCaptureFixture, name: str, reply: ScriptedReply,
        timeout: float) -> None:
    server = serve(lambda call: reply)
    client = make_client(server, timeout=timeout, max_retries=4, backoff_base=0.05, backoff_max=0.1,
                         breaker_threshold=6, breaker_window=0.3, breaker_cooldown=600.0)
    start = time.perf_counter()
    with caplog.at_level(logging.WARNING):
        results = client.judge_many([score_request(i) for i in range(60)], progress=False)
    elapsed = time.perf_counter() - start
    reasons = {r.unscored_reason for r in results}
    assert reasons <= {TRANSPORT_ERROR, JUDGE_UNAVAILABLE} and JUDGE_UNAVAILABLE in reasons
    assert sum(r.unscored_reason == JUDGE_UNAVAILABLE for r in results) >= 50
    assert server.request_count < 30 and elapsed < 60, (server.request_count, elapsed)  # 60 x 5 attempts before
    assert len(_breaker_lines(caplog)) == 1  # said once
    assert not client.available and client.stats["breaker"] == {"open": True, "trips": 1}
    assert client.stats["unscored"].get(JUDGE_UNAVAILABLE, 0) >= 50
    unavailable = next(r for r in results if r.unscored_reason == JUDGE_UNAVAILABLE)
    assert unavailable.detail and "circuit breaker" in unavailable.detail and unavailable.score is None
    assert client.cache is not None and len(client.cache) == 0  # nothing unscored is cached


def test_opening_the_breaker_wakes_requests_waiting_on_retry_after(serve: Serve, make_client: Make) -> None:
    server = serve(lambda call: ScriptedReply(status=429, headers={"Retry-After": "60"},
                                              delay=0.0 if call.index == 0 else 0.5))
    client = make_client(server, concurrency=2, max_retries=4, breaker_threshold=2, breaker_window=0.3,
                         retry_after_max=60.0)
    start = time.perf_counter()
    results = client.judge_many([score_request(i) for i in range(2)], progress=False)
    assert time.perf_counter() - start < 120  # not 4 x 60 s (wide margin)
    assert [r.unscored_reason for r in results] == [JUDGE_UNAVAILABLE, JUDGE_UNAVAILABLE]
    assert "HTTP 429" in (results[0].detail or "")  # the last failure is kept in the detail


def test_a_rate_limit_burst_does_not_open_the_breaker(serve: Serve, make_client: Make) -> None:
    server = serve(lambda call: ScriptedReply(status=429, headers={"retry-after-ms": "50"}) if call.seen == 0
                   else ScriptedReply("Score: 4"))
    client = make_client(server, concurrency=8, breaker_threshold=4, breaker_window=2.0)
    results = client.judge_many([score_request(i) for i in range(16)], progress=False)
    assert all(r.score == 4.0 for r in results) and client.available
    assert client.stats["breaker"]["trips"] == 0


def test_auth_errors_open_the_breaker_without_waiting_for_the_window(serve: Serve, make_client: Make,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    server = serve(lambda call: ScriptedReply(status=401))
    client = make_client(server, concurrency=1, breaker_threshold=3, breaker_window=3600.0)
    with caplog.at_level(logging.WARNING):
        results = [client.judge(score_request(i)) for i in range(10)]
    assert [r.unscored_reason for r in results] == [TRANSPORT_ERROR] * 3 + [JUDGE_UNAVAILABLE] * 7
    assert server.request_count == 3 and len(_breaker_lines(caplog)) == 1
    assert "HTTP 401" in _breaker_lines(caplog)[0]


def test_request_specific_errors_do_not_count(serve: Serve, make_client: Make) -> None:
    server = serve(lambda call: ScriptedReply(status=400))  # e.g. a prompt over the context length
    client = make_client(server, concurrency=1, breaker_threshold=2, breaker_window=0.0)
    results = [client.judge(score_request(i)) for i in range(6)]
    assert all(r.unscored_reason == TRANSPORT_ERROR for r in results) and server.request_count == 6
    assert client.available


def test_a_probe_closes_the_breaker_when_the_judge_is_back(serve: Serve, make_client: Make,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    down = {"yes": True}
    server = serve(lambda call: ScriptedReply(status=503) if down["yes"] else ScriptedReply("Score: 5"))
    client = make_client(server, concurrency=1, max_retries=0, breaker_threshold=2, breaker_window=0.0,
                         breaker_cooldown=0.3)
    with caplog.at_level(logging.WARNING):
        first = [client.judge(score_request(i)) for i in range(5)]
        assert [r.unscored_reason for r in first] == [TRANSPORT_ERROR] * 2 + [JUDGE_UNAVAILABLE] * 3
        assert server.request_count == 2
        time.sleep(0.35)
        probe = client.judge(score_request(5))  # the probe: one attempt, still down
        assert probe.unscored_reason == JUDGE_UNAVAILABLE and "probe" in (probe.detail or "")
        assert server.request_count == 3 and not client.available
        down["yes"] = False
        assert client.judge(score_request(6)).unscored_reason == JUDGE_UNAVAILABLE  # cooling down: not sent
        time.sleep(0.35)
        later = [client.judge(score_request(i)) for i in range(7, 10)]
    assert [r.score for r in later] == [5.0, 5.0, 5.0] and client.available
    assert server.request_count == 3 + 3
    assert len(_breaker_lines(caplog)) == 1
    assert any("reachable again" in r.getMessage() and "4 request(s)" in r.getMessage() for r in caplog.records)


def test_unavailable_items_are_asked_again_by_a_later_run(serve: Serve, make_client: Make) -> None:
    broken = serve(lambda call: ScriptedReply(status=502))
    first = make_client(broken, max_retries=1, breaker_threshold=3, breaker_window=0.0)
    results = first.judge_many([score_request(i) for i in range(12)], progress=False)
    assert all(not r.scored for r in results) and first.cache is not None and len(first.cache) == 0
    healthy = serve(fixed("Score: 2"))
    second = make_client(healthy)  # same cache folder
    again = second.judge_many([score_request(i) for i in range(12)], progress=False)
    assert all(r.score == 2.0 and not r.cached for r in again) and healthy.request_count == 12


def test_breaker_off_keeps_the_old_behaviour(serve: Serve, make_client: Make) -> None:
    server = serve(lambda call: ScriptedReply(status=500))
    client = make_client(server, max_retries=1, concurrency=4, breaker_threshold=0, breaker_window=0.0)
    results = client.judge_many([score_request(i) for i in range(10)], progress=False)
    assert all(r.unscored_reason == TRANSPORT_ERROR for r in results) and server.request_count == 20
    assert client.available and client.stats["breaker"]["trips"] == 0
