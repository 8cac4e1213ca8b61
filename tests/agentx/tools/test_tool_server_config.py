"""A misconfigured tool server or model backend, on loopback: the server offers only the tools it can run, the
evaluation checks its server before the first call and stops with one line, and a failure outside the call (a
setting, an endpoint that goes down) is `unavailable` with a neutral observation, counted apart from tool errors,
logged with its reason and recorded with the backend actually used."""

from __future__ import annotations

import http.client
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from lmms_agentic.adapters import provenance
from lmms_agentic.adapters.agentic.tool_config import RuntimeConfig
from lmms_agentic.adapters.agentic.tool_io import ToolInfrastructureError, ToolServerError
from lmms_agentic.adapters.agentic.tool_runtime import ToolRuntime
from lmms_agentic.judges.testing import ScriptedJudgeServer, ScriptedReply
from lmms_agentic.tasks.agentx.tools import execution, hooks
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall, bind
from lmms_agentic.tasks.agentx.tools.model_tools import ModelTools
from lmms_agentic.tasks.agentx.tools.remote import ENV_TOKEN, call_remote, server_tools
from lmms_agentic.tasks.agentx.tools.server import ToolServer
from lmms_agentic.tasks.agentx.tools.toolset import agentx_runtime, config_from_env

from ...conftest import run_lmms_eval
from .scripts import call, final, gold_script, play, write

TOKEN = "config-token-0123456789abcdef"
DOC = {"gt_steps_flat_json": "[]"}
IMAGE = Image.new("RGB", (24, 24), "white")
NEUTRAL = "SceneDescriber is unavailable right now."


def _scene() -> BoundCall:
    bound = bind("SceneDescriber", {"image": "image_1"}, 1, 1)
    assert isinstance(bound, BoundCall)
    return bound


def _server(environ: dict[str, str]) -> ToolServer:
    """A tool server configured only by `environ` (its tools and model settings), on an ephemeral port."""
    runtime = agentx_runtime(config_from_env(environ, server_side=True), sandbox_warm=0,
                          models=ModelTools(environ))
    return ToolServer(runtime, token=TOKEN).start()


@pytest.fixture
def bare_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolServer]:
    """SceneDescriber on `model` with no VLM settings at all."""
    monkeypatch.setenv(ENV_TOKEN, TOKEN)
    server = _server({"LMMS_AGENTIC_AGENTX_TOOLS": "SceneDescriber=model"})
    try:
        yield server
    finally:
        server.stop()


def _client(setting: str, url: str, **kwargs: Any) -> ToolRuntime:
    return agentx_runtime(config_from_env({"LMMS_AGENTIC_AGENTX_TOOLS": setting,
                                               "LMMS_AGENTIC_AGENTX_TOOL_SERVER": url}), sandbox_warm=0, **kwargs)


def test_a_server_does_not_offer_a_tool_it_cannot_run_and_refuses_a_call_to_it(bare_server: ToolServer) -> None:
    served, missing = server_tools(bare_server.url)
    assert "SceneDescriber" not in served and served["DrawBoundingBox"] == "local"
    assert "LMMS_AGENTIC_AGENTX_VLM_BASE_URL" in missing["SceneDescriber"]
    assert "WebSearch" not in served and "reference trace" in missing["WebSearch"]  # replay never runs on a server
    host, port = bare_server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    body = json.dumps({"arguments": {}, "images": {}})
    connection.request("POST", "/v1/tools/SceneDescriber", body, {"Authorization": f"Bearer {TOKEN}",
                                                                  "Content-Type": "application/json"})
    reply = connection.getresponse()
    refused = json.loads(reply.read())
    connection.close()
    assert reply.status == 503 and "LMMS_AGENTIC_AGENTX_VLM_BASE_URL" in refused["error"] and "text" not in refused
    with pytest.raises(ToolInfrastructureError, match="503"):  # the client never takes it for a tool output
        call_remote(bare_server.url, _scene(), {"image": IMAGE}, timeout=30)


def test_a_client_stops_at_start_up_with_one_line(bare_server: ToolServer, monkeypatch: pytest.MonkeyPatch) -> None:
    client = _client("SceneDescriber=remote,DrawBoundingBox=remote", bare_server.url)
    with pytest.raises(ToolServerError) as stopped:
        hooks.prepare_episodes(client)  # the round loop, before the first model call
    line = str(stopped.value)
    assert "\n" not in line and line.startswith(f"agentx_tools: the tool server at {bare_server.url} cannot run "
                                                "SceneDescriber (")
    assert "LMMS_AGENTIC_AGENTX_VLM_BASE_URL" in line and "SceneDescriber=replay" in line
    assert "DrawBoundingBox" not in line
    monkeypatch.setenv(ENV_TOKEN, "a-wrong-token-0123456789")
    with pytest.raises(ToolServerError, match="refused the token"):
        _client("DrawBoundingBox=remote", bare_server.url).check_server()
    monkeypatch.setenv(ENV_TOKEN, TOKEN)
    fine = _client("DrawBoundingBox=remote", bare_server.url)
    fine.check_server()
    assert fine.describe()["backends_used"]["DrawBoundingBox"] == "remote:local"


def test_an_unreachable_server_stops_the_run_at_start_up() -> None:
    server = _server({})
    url = server.url
    server.stop()
    with pytest.raises(ToolServerError, match=r"^agentx_tools: OCR run on a tool server .* did not answer"):
        _client("OCR=remote", url).check_server()


def test_a_missing_model_setting_is_unavailable_with_a_neutral_observation() -> None:
    runtime = agentx_runtime(RuntimeConfig({"SceneDescriber": "model"}), sandbox_warm=0, models=ModelTools({}))
    seen = runtime.execute(DOC, _scene(), [IMAGE])
    assert seen.status == "unavailable" and seen.text == NEUTRAL
    assert seen.reason is not None and seen.reason.startswith("the model backend needs LMMS_AGENTIC_AGENTX_VLM")
    assert runtime.failures.counts() == {"SceneDescriber": {seen.reason: 1}}


class _Endpoint:
    """An OpenAI-compatible VLM endpoint that can be taken down (HTTP 503) mid-run."""

    def __init__(self) -> None:
        self.up = True

    def __call__(self, request: object) -> ScriptedReply:
        return ScriptedReply("A line chart with three lines.") if self.up else ScriptedReply(None, status=503)


def _vlm_env(url: str) -> dict[str, str]:
    return {"LMMS_AGENTIC_AGENTX_VLM_BASE_URL": url, "LMMS_AGENTIC_AGENTX_VLM_MODEL": "vlm-test",
            "LMMS_AGENTIC_AGENTX_VLM_API_KEY_ENV": "NO_SUCH_KEY_VARIABLE"}


@pytest.fixture(scope="module")
def chart_doc() -> dict[str, Any]:
    os.environ.setdefault("LMMS_AGENTIC_DATA", "mini")
    from lmms_agentic.tasks.agentx import hooks as agentx_hooks

    return next(dict(row) for row in agentx_hooks.all_docs() if row["id"] == "0")


@pytest.mark.parametrize("where", ["model", "remote"])
def test_an_endpoint_down_mid_run_is_unavailable_not_a_tool_error(
        where: str, chart_doc: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv(ENV_TOKEN, TOKEN)
    endpoint = _Endpoint()
    replies = [call("SceneDescriber", {"image": "image_1"}), call("SceneDescriber", {"image": "image_1"}),
               final("green")]
    with ScriptedJudgeServer(endpoint) as vlm:
        server = _server({"LMMS_AGENTIC_AGENTX_TOOLS": "SceneDescriber=model", **_vlm_env(vlm.base_url)}) \
            if where == "remote" else None
        try:
            if server is not None:
                runtime = _client("SceneDescriber=remote", server.url)
            else:
                runtime = agentx_runtime(RuntimeConfig({"SceneDescriber": "model"}), sandbox_warm=0,
                                      models=ModelTools(_vlm_env(vlm.base_url)))
            runtime.check_server()
            first = runtime.execute(DOC, _scene(), [IMAGE])
            endpoint.up = False
            with caplog.at_level(logging.WARNING):
                record = play(chart_doc, replies, runtime)
        finally:
            if server is not None:
                server.stop()
    used = "remote:model" if where == "remote" else "model"
    assert first.status == "ok" and first.backend == used and first.text == "A line chart with three lines."
    calls = [entry for entry in record["rounds"] if entry["kind"] == "call"]
    assert [(e["status"], e["observation"], e["backend"]) for e in calls] == [("unavailable", NEUTRAL, used)] * 2
    rows = [record["execution"]]
    assert execution.tool_unavailable_rate(rows) == 1.0 and execution.tool_error_rate(rows) == 0.0
    assert execution.tool_breakdown(rows)["SceneDescriber"]["backends"] == [used]
    assert runtime.describe()["backends_used"]["SceneDescriber"] == used
    (reason, count), = runtime.failures.counts()["SceneDescriber"].items()
    assert count == 2 and "503" in reason
    warned = [r for r in caplog.records if f"SceneDescriber is unavailable ({reason})" in r.getMessage()]
    assert len(warned) == 1  # once per tool and reason
    # the end of the run: the results file gets the count and reason, the log one warning line
    provenance.clear()
    hooks.prepare_episodes(runtime)
    with caplog.at_level(logging.WARNING):
        execution.valid_call_rate(rows)  # (an aggregation records nothing)
        assert execution.RUNTIME_KEY not in provenance.used()
        recorded = provenance.collected()[execution.RUNTIME_KEY]
    provenance.clear()
    assert recorded["infrastructure_failures"] == {"SceneDescriber": {reason: 2}}
    assert any("SceneDescriber was unavailable for 2 call(s)" in r.getMessage() for r in caplog.records)


@pytest.mark.e2e
def test_lmms_eval_stops_at_start_up_against_a_misconfigured_server(tmp_path: Path,
                                                                    bare_server: ToolServer) -> None:
    env = {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_BASE_URL": None, "LMMS_AGENTIC_JUDGE_PRESET": None,
           "LMMS_AGENTIC_AGENTX_TOOLS": "SceneDescriber=remote", "LMMS_AGENTIC_AGENTX_TOOL_SERVER": bare_server.url,
           ENV_TOKEN: TOKEN}
    run = run_lmms_eval(["--model", "agentic_scripted", "--model_args",
                         f"policy=script,script={write(tmp_path, gold_script())}", "--tasks", "agentx_tools"],
                        tmp_path / "run", env=env)
    line = f"agentx_tools: the tool server at {bare_server.url} cannot run SceneDescriber (model: the model backend " \
        "needs LMMS_AGENTIC_AGENTX_VLM_BASE_URL"
    assert run.returncode == 1 and run.log.count(line) == 1, run.log[-3000:]
    assert "Traceback" not in run.log and "Error during evaluation" not in run.log
    assert run.results_file is None  # stopped before any call: no results, no samples
    assert not list((tmp_path / "run").rglob("*_samples_*.jsonl"))
    assert "SceneDescriber is unavailable right now" not in run.log


@pytest.mark.e2e
def test_lmms_eval_with_a_vlm_endpoint_down_counts_unavailable_and_warns(tmp_path: Path) -> None:
    env = {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_BASE_URL": None, "LMMS_AGENTIC_JUDGE_PRESET": None,
           "LMMS_AGENTIC_AGENTX_TOOLS": "SceneDescriber=model"}
    with ScriptedJudgeServer(lambda request: ScriptedReply(None, status=503)) as vlm:
        run = run_lmms_eval(["--model", "agentic_scripted", "--model_args",
                             f"policy=script,script={write(tmp_path, gold_script())}", "--tasks", "agentx_tools"],
                            tmp_path / "run", env={**env, **_vlm_env(vlm.base_url)})
    run.assert_ok()
    text = run.results["results"]["agentx_tools_text_answer"]
    assert text["tool_unavailable_rate,none"] > 0
    recorded = run.results["lmms_agentic"]["data"]["agentx_tools"]
    assert recorded["per_tool"]["text_answer"]["SceneDescriber"]["backends"] == ["model"]
    assert recorded["per_tool"]["text_answer"]["SceneDescriber"]["error_rate"] == 0.0
    assert recorded["tools"]["backends_used"]["SceneDescriber"] == "model"
    (reason, count), = recorded["infrastructure_failures"]["SceneDescriber"].items()
    assert count == 3 and reason == "the VLM endpoint answered HTTP 503"  # the gold script's three descriptions
    assert f"SceneDescriber was unavailable for 3 call(s) for reasons outside the model ({reason} (3x))" in run.log
    observations = [entry["observation"] for record in run.records("agentx_tools_text_answer")
                    for entry in record["rounds"] if entry["tool"] == "SceneDescriber"]
    assert observations == [NEUTRAL] * 3
