"""Judge cases of reliability round three: a total deadline per attempt, a cap on the reply size, ambiguous verdicts,
non-finite settings refused at setup, keyed cache checksums, and secrets removed from replies by value."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.judges import JudgeClient, JudgeConfig, JudgeRequest, PromptTemplate
from lmms_agentic.judges.cache import KEY_FILE, JudgeCache
from lmms_agentic.judges.parsers import AnyOf, ScoreParser, YesNoParser
from lmms_agentic.judges.result import AMBIGUOUS, TRANSPORT_ERROR
from lmms_agentic.judges.rubric import JsonObjectParser, Number, Text
from lmms_agentic.judges.testing import ScriptedCall, ScriptedJudgeServer, ScriptedReply, fixed

from .conftest import API_KEY, score_request

Serve = Callable[..., ScriptedJudgeServer]
Make = Callable[..., JudgeClient]

JSON_OR_LABEL = AnyOf([JsonObjectParser({"Score": Number(0.0, 1.0)}, optional={"Justification": Text()},
                                        score="Score", numeric_strings=True, python_literals=True),
                       ScoreParser(0, 1, integer=False)])
JSON_TEMPLATE = PromptTemplate(id="test/json", version="1", system="Grade.", user="Answer: {{response}}",
                               parser=JSON_OR_LABEL)


# ------------------------------------------------------------------ the timeout is a total deadline

def test_a_server_that_drips_bytes_is_cut_at_the_deadline(serve: Serve, make_client: Make) -> None:
    """Before: each byte reset httpx's read timeout, so a ~200-byte reply dripped at 0.05 s/byte took ~10 s with a
    0.5 s timeout; now the attempt ends at the deadline (the bound below has a wide margin)."""
    server = serve(lambda call: ScriptedReply("Score: 3", drip=0.05))
    client = make_client(server, timeout=0.5, max_retries=0)
    start = time.perf_counter()
    result = client.judge(score_request(1))
    elapsed = time.perf_counter() - start
    assert result.unscored_reason == TRANSPORT_ERROR and "in all" in (result.detail or ""), result.detail
    assert elapsed < 5.0, elapsed  # dripping the whole reply takes > 10 s


def test_a_dripping_judge_opens_the_breaker(serve: Serve, make_client: Make, caplog: pytest.LogCaptureFixture) -> None:
    server = serve(lambda call: ScriptedReply("Score: 3", drip=0.05))
    client = make_client(server, timeout=0.2, max_retries=1, breaker_threshold=3, breaker_window=0.3,
                         concurrency=1)
    with caplog.at_level(logging.WARNING):
        results = [client.judge(score_request(i)) for i in range(6)]
    assert not client.available and results[-1].unscored_reason == "judge_unavailable"
    assert sum("JUDGE UNAVAILABLE" in r.getMessage() for r in caplog.records) == 1


def test_a_normal_reply_within_the_deadline_still_scores(serve: Serve, make_client: Make) -> None:
    server = serve(lambda call: ScriptedReply("Score: 4", drip=0.001))
    assert make_client(server, timeout=10.0).judge(score_request(1)).score == 4.0


# ------------------------------------------------------------------ reply size cap

def test_a_reply_over_the_cap_is_a_failed_call_and_never_stored(serve: Serve, make_client: Make,
                                                                tmp_path: Path) -> None:
    """Before: no cap (10 MB replies were stored in the cache and again in the sample logs)."""
    huge = "Score: 3 " + "x" * 200_000

    def script(call: ScriptedCall) -> ScriptedReply:
        return ScriptedReply(huge)

    server = serve(script)
    client = make_client(server, max_reply_bytes=100_000)
    result = client.judge(score_request(1))
    assert result.unscored_reason == TRANSPORT_ERROR and "cap of 100,000 bytes" in (result.detail or "")
    assert "LMMS_AGENTIC_JUDGE_MAX_REPLY_BYTES" in (result.detail or "")
    assert server.request_count == 1  # not retried: the same request would get the same reply
    assert result.raw_reply is None and not list((tmp_path / "cache").rglob("??/*.json"))


def test_the_reply_cap_comes_from_the_environment() -> None:
    config = JudgeConfig.from_env({"LMMS_AGENTIC_JUDGE_MAX_REPLY_BYTES": "4096"})
    assert config.max_reply_bytes == 4096 and JudgeConfig().max_reply_bytes == 1_048_576


# ------------------------------------------------------------------ ambiguous verdicts

@pytest.mark.parametrize(("reply", "expected"), [
    ('{"Score": 0.2} {"Score": 0.9}', AMBIGUOUS),            # before: 0.2
    ('{"Score": 0.1, "Score": 0.9}', AMBIGUOUS),             # before: 0.9
    ("{'Score': 0.1, 'Score': 0.9}", AMBIGUOUS),             # the same as a Python literal
    ("Score: 0.2 and then Score: 0.9", AMBIGUOUS),
    ('{"Score": 0.5} {"Score": 0.5}', 0.5),                  # two copies of one verdict agree
    ('{"Score": 0.5, "Score": 0.5}', 0.5),
    ('{"Score": 0.3, "Justification": "fine"}', 0.3),
    ("Score: 0.7", 0.7),
])
def test_replies_with_disagreeing_verdicts_are_unscored_as_ambiguous(serve: Serve, make_client: Make, reply: str,
                                                                     expected: Any) -> None:
    client = make_client(serve(fixed(reply)))
    result = client.judge(JudgeRequest(JSON_TEMPLATE, {"response": "x"}, "id1"))
    if expected == AMBIGUOUS:
        assert result.score is None and result.unscored_reason == AMBIGUOUS, result
        assert (result.detail or "").startswith("ambiguous")
        assert client.cache is not None and client.cache.stats.writes == 0  # never cached
    else:
        assert result.score == expected and result.scored


def test_conflicting_yes_and_no_lines_are_ambiguous() -> None:
    parsed = YesNoParser()("Yes\nNo")
    assert parsed.ambiguous and not parsed.ok


# ------------------------------------------------------------------ settings are validated at setup

@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "1e400"])
def test_a_non_finite_timeout_is_refused_at_setup_in_one_line(value: str) -> None:
    with pytest.raises(ValueError) as err:
        JudgeConfig.from_env({"LMMS_AGENTIC_JUDGE_TIMEOUT": value})
    message = str(err.value)
    assert "LMMS_AGENTIC_JUDGE_TIMEOUT" in message and "\n" not in message, message


@pytest.mark.parametrize(("field", "value"), [("timeout", float("nan")), ("timeout", float("inf")),
                                              ("timeout", 1e12), ("backoff_base", float("nan")),
                                              ("breaker_window", float("inf")), ("max_reply_bytes", 0)])
def test_non_finite_or_absurd_arguments_are_refused(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        JudgeConfig(**{field: value})


def test_judge_never_raises_for_a_huge_but_accepted_timeout(serve: Serve, make_client: Make) -> None:
    client = make_client(serve(fixed("Score: 2")), timeout=86_400.0)
    assert client.judge(score_request(1)).score == 2.0


# ------------------------------------------------------------------ keyed cache checksums

def test_a_hand_edited_entry_with_a_recomputed_plain_checksum_is_re_requested(serve: Serve,
                                                                              make_client: Make) -> None:
    import hashlib

    server = serve(fixed("Score: 2"))
    first = make_client(server).judge(score_request(1))
    cache = make_client(server).cache
    assert cache is not None and first.request_key is not None
    path = cache.path(first.request_key)
    entry = json.loads(path.read_text())
    entry["raw_reply"] = "Score: 5"
    payload = {k: v for k, v in entry.items() if k != "checksum"}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    for forged in ("sha256:" + hashlib.sha256(blob.encode()).hexdigest(),  # what format 2 checked
                   "hmac-sha256:" + hashlib.sha256(blob.encode()).hexdigest()):
        path.write_text(json.dumps({**entry, "checksum": forged}))
        again = make_client(server)
        result = again.judge(score_request(1))
        assert result.score == 2.0 and not result.cached  # the real verdict, asked again
    assert server.request_count == 3


def test_entries_copied_from_another_cache_are_not_served(tmp_path: Path) -> None:
    one, two = JudgeCache(tmp_path / "one"), JudgeCache(tmp_path / "two")
    key = "cd" * 32
    one.put(key, {"raw_reply": "Score: 4"})
    two.put("ef" * 32, {"raw_reply": "Score: 1"})
    target = two.path(key)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(one.path(key).read_bytes())
    assert JudgeCache(tmp_path / "two").get(key) is None and JudgeCache(tmp_path / "one").get(key) is not None


def test_the_key_file_is_private_and_shared_by_writers(tmp_path: Path) -> None:
    first, second = JudgeCache(tmp_path), JudgeCache(tmp_path)
    first.put("ab" * 32, {"raw_reply": "Score: 3"})
    second.put("ba" * 32, {"raw_reply": "Score: 4"})
    assert (tmp_path / KEY_FILE).stat().st_mode & 0o077 == 0
    fresh = JudgeCache(tmp_path)
    assert fresh.get("ab" * 32) is not None and fresh.get("ba" * 32) is not None
    (tmp_path / KEY_FILE).unlink()
    assert JudgeCache(tmp_path).get("ab" * 32) is None  # without its key no entry is trusted


# ------------------------------------------------------------------ secrets echoed in replies

def _echo_headers(call: ScriptedCall) -> ScriptedReply:
    """A judge that scores and quotes the request headers in its justification."""
    echoed = json.dumps({"Score": 0.5, "Justification": f"headers were {call.headers}"})
    return ScriptedReply(echoed, model=f"echo {call.headers.get('Authorization')}")


def test_a_judge_echoing_the_authorization_header_leaves_no_key_anywhere(serve: Serve, make_client: Make,
                                                                         tmp_path: Path) -> None:
    server = serve(_echo_headers)
    client = make_client(server)
    result = client.judge(JudgeRequest(JSON_TEMPLATE, {"response": "x"}, "id1"))
    assert result.score == 0.5 and API_KEY in str(server.calls[0].headers)  # it was sent, and echoed
    assert "***" in (result.raw_reply or "") and "***" in str(result.fields["Justification"])
    written = json.dumps(result.as_dict()) + "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
    assert API_KEY not in written and API_KEY[8:24] not in written
    again = make_client(server).judge(JudgeRequest(JSON_TEMPLATE, {"response": "x"}, "id1"))
    assert again.cached and API_KEY not in json.dumps(again.as_dict())


def test_an_old_cache_entry_holding_the_key_is_replaced(serve: Serve, make_client: Make) -> None:
    server = serve(fixed('{"Score": 0.5}'))
    client = make_client(server)
    first = client.judge(JudgeRequest(JSON_TEMPLATE, {"response": "x"}, "id1"))
    assert client.cache is not None and first.request_key is not None
    client.cache.put(first.request_key, {**json.loads(client.cache.path(first.request_key).read_text()),
                                         "raw_reply": f'{{"Score": 0.5, "Justification": "Bearer {API_KEY}"}}'})
    again = make_client(server).judge(JudgeRequest(JSON_TEMPLATE, {"response": "x"}, "id1"))
    assert not again.cached and server.request_count == 2 and API_KEY not in json.dumps(again.as_dict())
    assert API_KEY not in client.cache.path(first.request_key).read_text()


def test_the_evaluated_models_key_is_removed_from_judge_replies(serve: Serve, make_client: Make,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    model_key = "sk-model-ECHOEDbyTHEjudge-77665544"
    monkeypatch.setenv("OPENAI_API_KEY", model_key)
    server = serve(fixed(f'{{"Score": 0.5, "Justification": "the answer quotes {model_key}"}}'))
    result = make_client(server).judge(JudgeRequest(JSON_TEMPLATE, {"response": "x"}, "id1"))
    assert result.scored and model_key not in json.dumps(result.as_dict())


def test_a_server_that_drips_its_headers_is_cut_at_the_deadline(make_client: Make) -> None:
    """The deadline also holds before the body: here the status line and headers arrive one byte every 0.05 s."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve_one() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"X-Padding: " + b"p" * 4000
            for i in range(len(head)):
                if stop.is_set():
                    return
                try:
                    connection.sendall(head[i:i + 1])
                except OSError:
                    return
                time.sleep(0.05)

    thread = threading.Thread(target=serve_one, daemon=True)
    thread.start()
    try:
        client = make_client(None, base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/v1", timeout=0.5,
                             max_retries=0)
        start = time.perf_counter()
        result = client.judge(score_request(1))
        elapsed = time.perf_counter() - start
    finally:
        stop.set()
        listener.close()
    assert result.unscored_reason == TRANSPORT_ERROR and "timeout" in (result.detail or ""), result.detail
    assert elapsed < 10.0, elapsed  # the headers alone take 200 s to arrive


# ------------------------------------------------------------------ which values count as secrets

@pytest.mark.parametrize(("environ", "secret", "expected"), [
    ({"OPENAI_API_KEY": "sk-model-0123456789"}, "sk-model-0123456789", True),
    ({"HF_TOKEN": "hf_abcdefghijklmnop"}, "hf_abcdefghijklmnop", True),
    ({"MY_SERVICE_PASSWORD": "correct-horse-9"}, "correct-horse-9", True),
    ({"TOKENIZERS_PARALLELISM": "falsefalse"}, "falsefalse", False),          # not a secret by its name
    ({"OPENAI_API_KEY": "short"}, "short", False),                            # too short to remove by value
    ({"OPENAI_API_BASE": "https://u:pa55word-XYZ@api.example/v1"}, "pa55word-XYZ", True),
    ({"OPENAI_API_BASE": "https://api.example/v1?token=tok-0987654321&x=1"}, "tok-0987654321", True),
    ({"OPENAI_API_BASE": "https://api.example/v1?model=some-long-model"}, "some-long-model", False),
])
def test_known_secrets_by_name_and_in_urls(environ: dict[str, str], secret: str, expected: bool) -> None:
    from lmms_agentic.judges.secrets import known_secrets

    assert (secret in known_secrets(environ)) is expected


def test_basic_auth_and_escaped_forms_are_removed() -> None:
    import base64

    from lmms_agentic.judges.secrets import redactor

    clean = redactor("http://judge:s3cr3t-PASS\"x@host/v1", environ={})
    basic = base64.b64encode(b'judge:s3cr3t-PASS"x').decode()
    text = clean.text(f"Authorization: Basic {basic}; {json.dumps('s3cr3t-PASS' + chr(34) + 'x')}")
    assert "s3cr3t" not in text and basic not in text, text
