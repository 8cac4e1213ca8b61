"""End-to-end: `lmms-eval --model agentic_scripted --tasks agentx_tools` on the mini split, offline, with the local
tools real, replay for the rest and a loopback judge; reads the results JSON and the logged rounds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters.samples import read_record
from lmms_agentic.judges.testing import ScriptedJudgeServer, ScriptedReply

from ...conftest import CliRun, run_lmms_eval
from .scripts import gold_script, write

pytestmark = pytest.mark.e2e
JUDGED = ("ground_s", "tool_p", "tool_acc", "fact_acc", "context_s", "fact_p", "sem_acc", "toolset_acc")
EXECUTION = ("valid_call_rate", "tool_error_rate", "tool_unavailable_rate", "steps_used", "finished_rate")


def test_executed_run_with_a_loopback_judge(tmp_path: Path) -> None:
    script = gold_script()
    script["4"] = ['{"tool": "Calculator", "arguments": {"expression": "1/0"}}']  # a tool error, never finishes
    with ScriptedJudgeServer(lambda call: ScriptedReply("{'Score': 0.5}")) as server:
        env = {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_BASE_URL": server.base_url,
               "LMMS_AGENTIC_JUDGE_MODEL": "judge-test-2025-01-01",
               "LMMS_AGENTIC_JUDGE_CACHE": str(tmp_path / "cache")}
        run = run_lmms_eval(["--model", "agentic_scripted", "--model_args",
                             f"policy=script,script={write(tmp_path, script)}", "--tasks", "agentx_tools"],
                            tmp_path / "run", env=env)
        prompts = [call.prompt for call in server.calls]
    run.assert_ok()
    results = run.results["results"]
    for metric in JUDGED:
        assert results["agentx_tools"][f"{metric},none"] == pytest.approx(0.5), metric
    text = results["agentx_tools_text_answer"]
    assert text["goal_acc,none"] == pytest.approx(0.5) and text["cov_ground,none"] == 1.0
    for metric in EXECUTION:
        assert f"{metric},none" in text, metric
    assert text["finished_rate,none"] == pytest.approx(7 / 8)  # task "4" loops to the step limit
    assert text["tool_error_rate,none"] > 0 and text["valid_call_rate,none"] == 1.0
    recorded = run.results["lmms_agentic"]["data"]["agentx_tools"]
    breakdown = recorded["per_tool"]["text_answer"]
    assert breakdown["OCR"]["backends"] == ["local"] and breakdown["WebSearch"]["backends"] == ["replay"]
    assert breakdown["Calculator"]["error_rate"] > 0  # task "4" divides by zero
    tools = recorded["tools"]
    assert tools["backends"]["Solver"] == "local" and tools["backends"]["MathOCR"] == "replay"
    # the judge sees the executed trace: task "9"'s real OCR output and its replayed search result
    assert any("Welcome to Springfield" in p and "Springfield: about 170,000" in p and "tool_output" in p
               for p in prompts)
    samples = {str(r["id"]): r for r in run.records("agentx_tools_text_answer")}
    rounds = samples["3"]["rounds"]
    assert [r["tool"] for r in rounds] == ["OCR", "Calculator", None] and rounds[1]["observation"] == "46"
    assert samples["4"]["execution"]["stopped"] == "step_limit" and samples["4"]["execution"]["steps"] == 8
    assert json.dumps(samples)  # every logged round is JSON


UNCOMPARED = ("seconds", "cached")
"""Keys left out of the loops' identity, at any depth of a logged sample: a tool call's measured `seconds` (and
their per-tool sums) and `cached` (whether the tool's result cache already held the call, which depends on the order
in which documents ran).  lmms-eval's sample log has no timing field of its own."""


def _comparable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items() if k not in UNCOMPARED}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


def logged_samples(run: CliRun, task: str) -> dict[str, Any]:
    """Every logged sample of `task` by item id, whole (the stored response read as JSON) but for `UNCOMPARED`."""
    out = {}
    for sample in run.samples(task):
        record, response = read_record(sample), sample.get("filtered_resps")
        key = str(record["id"]) if record else f"doc {sample['doc_id']}"
        out[key] = _comparable({**sample, "filtered_resps": json.loads(response)}
                               if isinstance(response, str) else sample)
    return out


def _untimed_rounds(run: CliRun, task: str) -> dict[str, list[dict[str, object]]]:
    return {str(record["id"]): _comparable(record["rounds"]) for record in run.records(task)}


def test_batched_round_loop_in_lmms_eval_gives_the_sequential_results(tmp_path: Path) -> None:
    gold = gold_script()
    script = write(tmp_path, {**gold, "6": ['{"tool": "OCR", "arguments": {"image": "image_1"}}'],
                              "9": ["a lone \ud800 surrogate, then the gold trace", *gold["9"]]})
    args = ["--model", "agentic_scripted", "--model_args", f"policy=script,script={script}", "--tasks", "agentx_tools",
            "--agentic_trace_mode", "full"]
    env = {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_BASE_URL": None, "LMMS_AGENTIC_JUDGE_PRESET": None}
    sequential = run_lmms_eval(args, tmp_path / "sequential", env={**env, "LMMS_AGENTIC_AGENTIC_BATCH": "0"})
    batched = run_lmms_eval(args, tmp_path / "batched", env={**env, "LMMS_AGENTIC_AGENTIC_BATCH": None})  # default
    sequential.assert_ok()
    batched.assert_ok()
    tasks = ["agentx_tools_generative", "agentx_tools_text_answer"]
    assert batched.results["lmms_agentic"]["agentic_loop"] == {  # installed at start-up, recorded by the plugin
        "round_loop": "batched", "round_loop_switch": "default (LMMS_AGENTIC_AGENTIC_BATCH unset)", "cohorts": 2,
        "tasks": tasks}
    assert sequential.results["lmms_agentic"]["agentic_loop"] == {
        "round_loop": "lmms-eval sequential", "round_loop_switch": "LMMS_AGENTIC_AGENTIC_BATCH=0", "cohorts": None,
        "tasks": tasks}
    for task in ("agentx_tools_text_answer", "agentx_tools_generative"):  # the whole logged sample, full trace
        assert logged_samples(sequential, task) == logged_samples(batched, task), task
    first = logged_samples(sequential, "agentx_tools_text_answer")["9"]["filtered_resps"]["agentic_rounds"][0]
    assert first["model_output"] == "a lone \ufffd surrogate, then the gold trace"  # logged, as valid UTF-8
    rounds = _untimed_rounds(batched, "agentx_tools_text_answer")["6"]
    assert len(rounds) == 8 and all(r["tool"] == "OCR" for r in rounds)  # never finishes: stopped at the limit
    for key in ("valid_call_rate", "steps_used", "finished_rate", "exact_match_acc"):
        assert sequential.results["results"]["agentx_tools"][f"{key},none"] == \
            batched.results["results"]["agentx_tools"][f"{key},none"], key
