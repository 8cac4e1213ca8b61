"""Secrets never reach the model, and the runtime is bounded: observations of every backend (local, model, replay,
remote) are scrubbed of every configured secret; the VLM client has a total deadline, a reply-size cap and checked
content; the memo is an LRU bounded in bytes; output images are capped.  Loopback servers only (127.0.0.1)."""

from __future__ import annotations

import json
import string
import time
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from lmms_agentic.adapters.agentic import tool_runtime
from lmms_agentic.adapters.agentic.tool_config import RuntimeConfig
from lmms_agentic.adapters.agentic.tool_runtime import MEMO_BYTES, Observation, ToolRuntime
from lmms_agentic.judges.secrets import secret_forms
from lmms_agentic.judges.testing import ScriptedJudgeServer, ScriptedReply
from lmms_agentic.tasks.agentx.tools import model_tools
from lmms_agentic.tasks.agentx.tools import toolset as toolset_module
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall, bind
from lmms_agentic.tasks.agentx.tools.local import ToolError, ToolOutput
from lmms_agentic.tasks.agentx.tools.model_tools import ModelTools
from lmms_agentic.tasks.agentx.tools.toolset import agentx_runtime

DOC = {"gt_steps_flat_json": "[]"}
IMAGE = Image.new("RGB", (24, 24), "white")
KEY_VARIABLE = "AGENTX_VLM_AUTH"  # not secret-named: the runtime must add the variable the key setting names
SECRET = st.text(alphabet=string.ascii_letters + string.digits + "-_.~+/=!#$%^&()[]{}|;:,<>?'\"\\é漢€",
                 min_size=12, max_size=40)


def _call(tool: str, arguments: Mapping[str, Any]) -> BoundCall:
    bound = bind(tool, dict(arguments), 1, 1)
    assert isinstance(bound, BoundCall)
    return bound


CALLS = {"local": _call("Calculator", {"expression": "1+1"}), "model": _call("SceneDescriber", {"image": "image_1"}),
         "replay": _call("WebSearch", {"query": "q"}), "remote": _call("OCR", {"image": "image_1"}),
         "model-error": _call("ObjectCounter", {"image": "image_1", "text": "cat"})}
BACKENDS = {"Calculator": "local", "SceneDescriber": "model", "ObjectCounter": "model", "WebSearch": "replay",
            "OCR": "remote"}


def _leaks(text: str, secrets: list[str]) -> list[str]:
    return [secret for secret in secrets for form in secret_forms(secret) if form in text]


def _echo(secrets: list[str], extra: str = "") -> str:
    """Every secret in every way a careless tool could print it."""
    forms = [f"{s} {json.dumps(s)} {s!r} {urllib.parse.quote(s)} {s.encode('unicode_escape').decode()}"
             for s in secrets]
    return " | ".join([*forms, extra])


@pytest.fixture(scope="module")
def echo_vlm() -> Iterator[ScriptedJudgeServer]:
    """An OpenAI-compatible endpoint whose description is the request's headers (Authorization included)."""
    with ScriptedJudgeServer(lambda call: ScriptedReply(json.dumps(call.headers))) as server:
        yield server


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(key=SECRET, judge_key=SECRET, hf_token=SECRET, tool_token=SECRET, password=SECRET, server_password=SECRET,
       use_key=st.booleans(), failing=st.booleans())
def test_no_backend_ever_shows_a_secret(echo_vlm: ScriptedJudgeServer, key: str, judge_key: str, hf_token: str,
                                        tool_token: str, password: str, server_password: str, use_key: bool,
                                        failing: bool) -> None:
    host = echo_vlm.base_url.split("//", 1)[1]
    vlm_url = f"http://agent:{urllib.parse.quote(password, safe='')}@{host}"
    server_url = f"http://tools:{urllib.parse.quote(server_password, safe='')}@127.0.0.1:9/"
    secrets = [*([key] if use_key else []), judge_key, hf_token, tool_token, password, server_password, vlm_url,
               server_url]
    env = {"LMMS_AGENTIC_AGENTX_VLM_BASE_URL": vlm_url, "LMMS_AGENTIC_AGENTX_VLM_MODEL": "vlm",
           "LMMS_AGENTIC_AGENTX_VLM_API_KEY_ENV": KEY_VARIABLE, KEY_VARIABLE: key if use_key else "",
           "LMMS_AGENTIC_JUDGE_API_KEY": judge_key, "HF_TOKEN": hf_token, "LMMS_AGENTIC_AGENTX_TOOL_TOKEN": tool_token}

    def output(*args: Any, **kwargs: Any) -> ToolOutput:
        text = _echo(secrets, repr((args, kwargs)))
        if failing:
            raise ValueError(text)
        return ToolOutput(text)

    def replayed(*args: Any, **kwargs: Any) -> tuple[int, str]:
        return 0, output(*args, **kwargs).text

    def count(*args: Any, **kwargs: Any) -> ToolOutput:
        raise ToolError(_echo(secrets))

    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        patch.setattr(toolset_module, "run_local", output)
        patch.setattr(tool_runtime, "call_remote", lambda url, *a, **k: output(url, *a, **k))
        patch.setattr(toolset_module.replay_backend, "replay", replayed)
        patch.setattr(ModelTools, "count", count)
        runtime = agentx_runtime(RuntimeConfig(BACKENDS, server_url), sandbox_warm=0, models=ModelTools(dict(env)))
        try:
            observed = {name: runtime.execute(DOC, call, [IMAGE]) for name, call in CALLS.items()}
        finally:
            runtime._pool.shutdown(wait=False)
        if key.isascii() or not use_key:  # (an HTTP header cannot carry other keys: then the call fails)
            assert observed["model"].status == "ok"  # the key (or the Basic header) reached the endpoint ...
            assert "Authorization" in observed["model"].text and "***" in observed["model"].text
        for name, seen in observed.items():  # ... but never the model
            assert not _leaks(seen.text, secrets), (name, seen.text)
            assert not _leaks(json.dumps(seen.text), secrets), name


def _runtime(environ: Mapping[str, str], backends: Mapping[str, str] | None = None, **kwargs: Any) -> ToolRuntime:
    return agentx_runtime(RuntimeConfig(backends or {"SceneDescriber": "model"}), sandbox_warm=0,
                       models=ModelTools(dict(environ)), **kwargs)


def _describe(environ: Mapping[str, str]) -> Observation:
    return _runtime(environ).execute(DOC, CALLS["model"], [IMAGE])


def _unavailable(seen: Observation, reason: str) -> bool:
    """An infrastructure failure: the neutral observation for the model, the reason kept apart."""
    return seen.status == "unavailable" and seen.text == "SceneDescriber is unavailable right now." and \
        seen.reason is not None and reason in seen.reason


def test_an_endpoint_echoing_the_authorization_header_never_shows_the_key(echo_vlm: ScriptedJudgeServer,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-echo-0123456789abcdef")
    echo_vlm.reset()
    seen = _describe({"LMMS_AGENTIC_AGENTX_VLM_BASE_URL": echo_vlm.base_url, "LMMS_AGENTIC_AGENTX_VLM_MODEL": "m",
                      "OPENAI_API_KEY": "sk-echo-0123456789abcdef"})
    assert echo_vlm.calls[0].headers["Authorization"] == "Bearer sk-echo-0123456789abcdef"
    assert seen.status == "ok" and "Bearer ***" in seen.text and "0123456789abcdef" not in seen.text


def test_url_user_info_is_sent_as_a_header_and_never_shown(echo_vlm: ScriptedJudgeServer) -> None:
    host = echo_vlm.base_url.split("//", 1)[1]
    echo_vlm.reset()
    seen = _describe({"LMMS_AGENTIC_AGENTX_VLM_BASE_URL": f"http://agent:pw-0123456789@{host}",
                      "LMMS_AGENTIC_AGENTX_VLM_MODEL": "m", "OPENAI_API_KEY": ""})
    assert echo_vlm.calls[0].headers["Authorization"].startswith("Basic ")
    assert seen.status == "ok" and "pw-0123456789" not in seen.text and "YWdlbnQ6cHctMDEyMzQ1Njc4OQ" not in seen.text
    with ScriptedJudgeServer(lambda call: ScriptedReply(None, status=404)) as missing:
        with_user = missing.base_url.replace("//", "//agent:pw-0123456789@")
        failed = _describe({"LMMS_AGENTIC_AGENTX_VLM_BASE_URL": with_user, "LMMS_AGENTIC_AGENTX_VLM_MODEL": "m"})
    assert _unavailable(failed, "404")
    assert "pw-0123456789" not in str(failed.reason) and "agent:" not in str(failed.reason)
    refused = _describe({"LMMS_AGENTIC_AGENTX_VLM_BASE_URL": "http://agent:pw-0123456789@127.0.0.1:9/v1",
                         "LMMS_AGENTIC_AGENTX_VLM_MODEL": "m"})
    assert _unavailable(refused, "the VLM endpoint failed")
    assert "pw-0123456789" not in str(refused.reason) and "agent:" not in str(refused.reason)


def test_server_url_credentials_are_masked_in_the_results_file() -> None:
    described = RuntimeConfig({"OCR": "remote"}, "http://tools:pw-0123456789@127.0.0.1:9/").describe()
    assert "pw-0123456789" not in json.dumps(described)


def test_a_dripping_endpoint_meets_the_total_deadline() -> None:
    """Each byte arrives well within httpx's per-read timeout; the whole reply would take about 20 s."""
    with ScriptedJudgeServer(lambda call: ScriptedReply("x" * 200, drip=0.05)) as server:
        started = time.monotonic()
        seen = _describe({"LMMS_AGENTIC_AGENTX_VLM_BASE_URL": server.base_url, "LMMS_AGENTIC_AGENTX_VLM_MODEL": "m",
                          "LMMS_AGENTIC_AGENTX_VLM_TIMEOUT": "1"})
        elapsed = time.monotonic() - started
    assert _unavailable(seen, "within 1 s")
    assert elapsed < 10


@pytest.mark.parametrize(("reply", "message"), [
    (ScriptedReply("x" * 2_000_000), "larger than 1,048,576 bytes"),
    (ScriptedReply(None, body=json.dumps({"choices": [{"message": {"content": ["a", "list"]}}]}).encode()),
     "not text"),
    (ScriptedReply(None, body=b'{"choices": [{"message": {"content": ' + b"1" * 5000 + b"}}]}"),
     "not a chat completion"),
    (ScriptedReply(None, body=b"[" * 100_000), "not a chat completion"),
], ids=["oversized", "content not text", "5000-digit content", "deeply nested"])
def test_bad_vlm_replies_are_unavailable_not_observations(reply: ScriptedReply, message: str) -> None:
    with ScriptedJudgeServer(lambda call: reply) as server:
        seen = _describe({"LMMS_AGENTIC_AGENTX_VLM_BASE_URL": server.base_url, "LMMS_AGENTIC_AGENTX_VLM_MODEL": "m"})
    assert _unavailable(seen, message), (seen.text, seen.reason)


def test_a_long_description_is_capped() -> None:
    with ScriptedJudgeServer(lambda call: ScriptedReply("word " * 100_000)) as server:
        tools = ModelTools({"LMMS_AGENTIC_AGENTX_VLM_BASE_URL": server.base_url, "LMMS_AGENTIC_AGENTX_VLM_MODEL": "m"})
        text = tools.run("SceneDescriber", {}, {"image": IMAGE}).text
    assert len(text) <= model_tools.MAX_DESCRIPTION_CHARS + 20


def _boxes(runtime: ToolRuntime, image: Image.Image) -> Observation:
    call = _call("DrawBoundingBox", {"image": "image_1", "bbox": "(1, 1, 10, 10)"})
    return runtime.execute(DOC, call, [image])


def test_the_memo_is_bounded_in_bytes_and_evicts_the_oldest() -> None:
    assert MEMO_BYTES == 256 * 2**20
    runtime = _runtime({}, {"DrawBoundingBox": "local"}, memo_bytes=8 * 2**20)
    images = [Image.new("RGB", (1000, 1000), colour) for colour in ("red", "green", "blue")]  # 3 MB each drawn
    for image in images:
        assert _boxes(runtime, image).status == "ok"
    entries, held = runtime.memo_size()
    assert entries == 2 and 6_000_000 < held <= 8 * 2**20
    assert _boxes(runtime, images[2]).cached and not _boxes(runtime, images[0]).cached
    tiny = _runtime({}, {"DrawBoundingBox": "local"}, memo_entries=2)
    for colour in ("red", "green", "blue"):
        _boxes(tiny, Image.new("RGB", (20, 20), colour))
    assert tiny.memo_size()[0] == 2
    huge = _runtime({}, {"DrawBoundingBox": "local"}, memo_bytes=2 * 2**20)
    assert _boxes(huge, images[0]).status == "ok" and huge.memo_size() == (0, 0)  # larger than the memo: not kept


@pytest.mark.parametrize("backend", ["local", "model", "remote"])
def test_output_images_are_capped_on_every_backend(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    big = Image.new("L", (5000, 4000))  # 20 MP from a 24 x 24 input

    def produce(*args: Any, **kwargs: Any) -> ToolOutput:
        return ToolOutput("an image", big)

    monkeypatch.setattr(toolset_module, "run_local", produce)
    monkeypatch.setattr(tool_runtime, "call_remote", produce)
    monkeypatch.setattr(ModelTools, "run", produce)
    tool = "ImageStylization" if backend == "model" else "DrawBoundingBox"
    runtime = agentx_runtime(RuntimeConfig({tool: backend}, "http://127.0.0.1:9"), sandbox_warm=0)
    arguments = {"image": "image_1", "instruction": "paint"} if backend == "model" else \
        {"image": "image_1", "bbox": "(1, 1, 9, 9)"}
    refused = runtime.execute(DOC, _call(tool, arguments), [IMAGE])
    assert refused.status == "error" and refused.image is None and "limited to 16,777,216 pixels" in refused.text
    same_size = runtime.execute(DOC, _call(tool, arguments), [big])  # never larger than the largest input: kept
    assert same_size.status == "ok" and same_size.image is big


@pytest.mark.parametrize("setting", ["soon", "0", "-1", "inf"])
def test_a_bad_vlm_timeout_names_its_variable(setting: str) -> None:
    seen = _describe({"LMMS_AGENTIC_AGENTX_VLM_BASE_URL": "http://127.0.0.1:9/v1", "LMMS_AGENTIC_AGENTX_VLM_MODEL": "m",
                      "LMMS_AGENTIC_AGENTX_VLM_TIMEOUT": setting})
    assert _unavailable(seen, "LMMS_AGENTIC_AGENTX_VLM_TIMEOUT")
