"""The on-disk judge cache: resume after a crash, concurrent writers, damaged or edited entries (checksums), stats."""

from __future__ import annotations

import json
import logging
import multiprocessing
from collections.abc import Callable
from pathlib import Path

import pytest

from lmms_agentic.judges import JudgeCache, JudgeClient, JudgeConfig, JudgeResult, request_key
from lmms_agentic.judges.cache import CACHE_FORMAT
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
    good = path.read_bytes()
    edited = json.loads(good)
    edited["raw_reply"] = "Score: 1"  # a hand-edited verdict, checksum left as it was
    other_key = json.loads(good)
    other_key["key"] = "0" * 64
    damages = {
        "truncated": good[: len(good) // 2],
        "not a dict": b"[]",
        "not UTF-8": good[:20] + b"\xff\xfe" + good[20:],
        "binary junk": bytes(range(256)),
        "empty": b"",
        "hand-edited": json.dumps(edited).encode(),
        "another key": json.dumps(other_key).encode(),
        "no checksum": json.dumps({k: v for k, v in edited.items() if k != "checksum"}).encode(),
    }
    for what, damage in damages.items():
        path.write_bytes(damage)
        fresh = make_client(server)
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            result = fresh.judge(score_request(1))
        assert result.score == 5.0 and not result.cached, what  # treated as a miss, re-sent
        assert fresh.cache is not None and fresh.cache.stats.corrupt == 1 and fresh.cache.stats.misses == 1, what
        assert "corrupt entry" in caplog.text, what
        assert json.loads(path.read_text())["raw_reply"] == "Score: 5", what  # rewritten
        assert fresh.cache.get(first.request_key) is not None, what  # and valid again
    assert server.request_count == 1 + len(damages)


def test_entry_checksum_covers_every_field(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    key = "ab" * 32
    cache.put(key, {"raw_reply": "Score: 3", "template_id": "t", "temperature": 0.0})
    entry = json.loads(cache.path(key).read_text())
    assert entry["checksum"] == cache.checksum(entry) and entry["format"] == CACHE_FORMAT
    for field, value in (("template_id", "u"), ("temperature", 0.5), ("written_at", 1.0), ("format", 1)):
        cache.path(key).write_text(json.dumps({**entry, field: value}))
        assert cache.get(key) is None, field
    assert cache.stats.corrupt == 4


def test_old_format_entries_are_misses_with_one_warning(serve: Serve, make_client: Make,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    server = serve(fixed("Score: 4"))
    seed = make_client(server)
    keys = [seed.judge(score_request(i)).request_key for i in range(3)]
    assert seed.cache is not None
    for key in keys:
        assert key is not None
        path = seed.cache.path(key)
        entry = json.loads(path.read_text())
        entry.pop("checksum")
        path.write_text(json.dumps({**entry, "format": 1}))  # as version 1 of this cache wrote them
    client = make_client(server)
    with caplog.at_level(logging.WARNING):
        results = client.judge_many([score_request(i) for i in range(3)], progress=False)
    assert all(r.score == 4.0 and not r.cached for r in results) and server.request_count == 6
    assert caplog.text.count("older version") == 1


def test_entry_of_another_template_or_model_is_not_served(serve: Serve, make_client: Make) -> None:
    server = serve(fixed("Score: 4"))
    client = make_client(server)
    result = client.judge(score_request(1))
    assert client.cache is not None and result.request_key is not None
    path = client.cache.path(result.request_key)
    entry = json.loads(path.read_text())
    for field, value in (("template_version", "0"), ("model_requested", "other-judge"), ("template_id", "x/y")):
        forged = {**entry, field: value}
        forged["checksum"] = client.cache.checksum(forged)  # a consistent file, but not this request's answer
        path.write_text(json.dumps(forged))
        fresh = make_client(server)
        assert not fresh.judge(score_request(1)).cached and fresh.cache is not None
        assert fresh.cache.stats.corrupt == 1, field


def test_cached_reply_that_no_longer_parses_is_re_requested(serve: Serve, make_client: Make) -> None:
    server = serve(fixed("Score: 4"))
    client = make_client(server)
    key = client.judge(score_request(1)).request_key
    assert client.cache is not None and key is not None
    client.cache.put(key, {**json.loads(client.cache.path(key).read_text()), "raw_reply": "no verdict"})
    fresh = make_client(server)
    result = fresh.judge(score_request(1))
    assert result.score == 4.0 and not result.cached and server.request_count == 2
    assert fresh.cache is not None and fresh.cache.stats.as_dict() == {"hits": 0, "misses": 1, "writes": 1,
                                                                       "corrupt": 1}


def test_replies_with_any_characters_round_trip(serve: Serve, make_client: Make) -> None:
    reply = "Ünïcødé ✓ \ud800 lone surrogate, \u0000 nul, 'quotes' \"dq\"\nScore: 3"
    server = serve(fixed(reply))
    client = make_client(server)
    first = client.judge(score_request(1))
    assert first.score == 3.0 and client.cache is not None and first.request_key is not None
    assert client.cache.path(first.request_key).read_bytes().isascii()
    again = make_client(server).judge(score_request(1))
    assert again.cached and again.raw_reply == reply and server.request_count == 1


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
