"""End-to-end: `lmms-eval --model agentic_scripted --tasks agentx_tools` on the mini split where the scripted model
replies with hostile objects (a set, bytes, deep nesting, a 5000-digit integer, lone surrogates) and calls
SceneDescriber on the `model` backend, a loopback VLM that echoes the request's Authorization header: the run
finishes, every document has a record, and the API key is written nowhere in the output folder."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from lmms_agentic.judges.secrets import secret_forms
from lmms_agentic.judges.testing import ScriptedJudgeServer, ScriptedReply

from ...conftest import run_lmms_eval
from .scripts import call, final, gold_script, write

pytestmark = pytest.mark.e2e

HOSTILE = [
    "{'thought': 'a set', 'tool': 'Calculator', 'arguments': {'expression': {1, 2}}}",
    "{'thought': 'bytes', 'final_answer': {'value': b'x', 'justification': b'y'}}",
    '{"tool": "Calculator", "arguments": ' + "[" * 50_000 + "]" * 50_000 + "}",
    '{"tool": "Calculator", "arguments": {"expression": ' + "7" * 5000 + "}}",
    '{"thought": "lone \ud800 surrogate \\udfff", "tool": "Calculator", '
    '"arguments": {"expression": "2*\\ud800"}} \udcff',
    call("SceneDescriber", {"image": "image_1"}, "look"),
]


@pytest.mark.parametrize("loop", [
    [],  # lmms-eval's sequential loop, basic trace
    # the batched loop with the full per-round trace, which logs every reply (both loops replace lone surrogates
    # before lmms-eval's sample writer sees them; test_e2e.py compares the two loops' logs with a surrogate reply)
    ["--agentic_trace_mode", "full"]], ids=["sequential", "batched-full-trace"])
def test_hostile_replies_and_an_echoing_vlm_through_the_cli(tmp_path: Path, loop: list[str]) -> None:
    key = "sk-e2e-" + secrets.token_hex(16)
    script = gold_script()
    script["0"] = [*HOSTILE, final("unknown", "hostile episode")]
    script["1"] = [call("SceneDescriber", {"image": "image_1"}), HOSTILE[0], HOSTILE[4], final("one")]
    with ScriptedJudgeServer(lambda request: ScriptedReply(json.dumps(request.headers))) as vlm:
        env = {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_BASE_URL": None, "LMMS_AGENTIC_JUDGE_PRESET": None,
               "LMMS_AGENTIC_AGENTX_TOOLS": "SceneDescriber=model", "LMMS_AGENTIC_AGENTX_VLM_BASE_URL": vlm.base_url,
               "LMMS_AGENTIC_AGENTX_VLM_MODEL": "vlm-echo", "OPENAI_API_KEY": key,
               "LMMS_AGENTIC_AGENTIC_BATCH": None if loop else "0"}
        run = run_lmms_eval(["--model", "agentic_scripted", "--model_args",
                             f"policy=script,script={write(tmp_path, script)}", "--tasks", "agentx_tools", *loop],
                            tmp_path / "run", env=env)
        sent = [request.headers.get("Authorization") for request in vlm.calls]
    run.assert_ok()
    assert "Could not save sample results" not in run.log
    assert sent and all(header == f"Bearer {key}" for header in sent)  # the key did reach the endpoint
    assert "agentx_tools" in run.results["results"]
    records = {task: {str(r["id"]): r for r in run.records(task)}
               for task in ("agentx_tools_text_answer", "agentx_tools_generative")}
    assert {doc_id for by_id in records.values() for doc_id in by_id} == set(script)  # every document has a record
    hostile = next(by_id["0"] for by_id in records.values() if "0" in by_id)["rounds"]
    assert [r["kind"] for r in hostile] == ["invalid", "invalid", "invalid", "invalid", "call", "call", "final"]
    described = [r for by_id in records.values() for r in by_id.get("1", {}).get("rounds", [])
                 if r["tool"] == "SceneDescriber"]
    assert described and described[0]["status"] == "ok" and "Bearer ***" in described[0]["observation"]
    forms = [form.encode("utf-8") for form in secret_forms(key)]
    written = [path for path in (tmp_path / "run").rglob("*") if path.is_file()]
    assert len(written) >= 3  # the results file and one sample log per task
    for path in written:
        content = path.read_bytes()
        assert not any(form in content for form in forms), f"the key is written in {path}"
    assert key not in run.log
