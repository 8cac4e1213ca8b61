"""End-to-end: Agent-X through the real lmms-eval CLI — without a judge, and with a loopback judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import lmms_agentic
from lmms_agentic.judges.testing import ScriptedJudgeServer, ScriptedReply

from ..conftest import CliRun, run_lmms_eval

pytestmark = pytest.mark.e2e
MINI = Path(lmms_agentic.tasks_dir()) / "agentx" / "data" / "mini"
JUDGED = ("ground_s", "tool_p", "tool_acc", "fact_acc", "context_s", "fact_p", "sem_acc", "toolset_acc")


def _replies(folder: Path) -> Path:
    """Each task's GT trace written back as a model reply (fenced JSON with prose), task "4" left empty."""
    data = json.loads((MINI / "data.json").read_text())
    replies = {}
    for key, (record,) in data.items():
        steps = record["reasoning_steps"][0] if isinstance(record["reasoning_steps"][0], list) \
            else record["reasoning_steps"]
        body = {"query": record["query"], "final_answer": record["final_answer"], "reasoning_steps": [
            {"step": s["step"], "task": s["task"], "tool_used": s["tool"], "tool_output": s["output"],
             "thought": s["thought"]} for s in steps]}
        replies[key] = "" if key == "4" else "Sure.\n```json\n" + json.dumps(body) + "\n```"
    path = folder / "replies.json"
    path.write_text(json.dumps(replies))
    return path


def test_without_a_judge_deterministic_metrics_are_reported_and_judged_ones_unscored(tmp_path: Path) -> None:
    run = run_lmms_eval(["--model", "dummy", "--tasks", "agentx"], tmp_path, env={"LMMS_AGENTIC_DATA": "mini"})
    run.assert_ok()
    text = run.results["results"]["agentx_text_answer"]
    assert text["format_error_rate,none"] == 1.0 and text["parse_failure_rate,none"] == 1.0
    assert text["cov_ground,none"] == 0.0 and text["cov_goal,none"] == 0.0
    assert "LMMS_AGENTIC_JUDGE_BASE_URL" in run.log and "LOW JUDGE COVERAGE" in run.log
    assert len(run.samples("agentx_text_answer")) == 8 and len(run.samples("agentx_generative")) == 2


def _judged_run(tmp_path: Path, name: str, server: ScriptedJudgeServer) -> CliRun:
    env = {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_BASE_URL": server.base_url,
           "LMMS_AGENTIC_JUDGE_MODEL": "judge-test-2025-01-01", "LMMS_AGENTIC_JUDGE_CACHE": str(tmp_path / "cache")}
    args = ["--model", "agentic_scripted", "--model_args", f"policy=replay,replay={_replies(tmp_path)}",
            "--tasks", "agentx"]
    run = run_lmms_eval(args, tmp_path / name, env=env)
    run.assert_ok()
    return run


def test_with_a_loopback_judge_every_metric_is_scored_and_cached(tmp_path: Path) -> None:
    reply = "```python\n{'Score': '0.8', 'Justification': \"it's grounded\"}\n```"  # apostrophe: regex fallback
    with ScriptedJudgeServer(lambda call: ScriptedReply(reply)) as server:
        first = _judged_run(tmp_path, "first", server)
        sent = server.request_count
        prompts = [call.prompt for call in server.calls]
        second = _judged_run(tmp_path, "second", server)
        assert server.request_count == sent, "a rerun must be served from the judge cache"
    assert sent == 8 * 9 + 2 * 8  # nine judged metrics per text task, eight per generative task (no Goal call)
    results = first.results["results"]
    for metric in JUDGED:
        assert results["agentx"][f"{metric},none"] == pytest.approx(0.8), metric
    assert results["agentx_text_answer"]["goal_acc,none"] == pytest.approx(0.8)
    assert results["agentx_generative"]["goal_imggen,none"] == pytest.approx(0.8)
    assert results["agentx_text_answer"]["cov_ground,none"] == 1.0
    text = results["agentx_text_answer"]
    assert text["parse_failure_rate,none"] == pytest.approx(1 / 8)  # task "4" got an empty reply
    # the generative GT traces have an empty answer; replayed, every reply still parses
    assert results["agentx_generative"]["parse_failure_rate,none"] == 0.0
    # the judge gets the GT steps as released: task "2" is [[...]]-wrapped in data.json and stays so
    released = json.loads((MINI / "data.json").read_text())["2"][0]
    wrapped = f"'GT reasoning steps': {released['reasoning_steps']!s}"
    assert wrapped.startswith("'GT reasoning steps': [[{")
    task2 = [p for p in prompts if f"'query': {released['query']!r}" in p and "'GT reasoning steps'" in p]
    assert len(task2) == 7 and all(wrapped in p for p in task2)
    assert text["toolset_f1_prog,none"] == pytest.approx(7 / 8) and text["exact_match_acc,none"] == 1.0
    sample = next(s["ground_s"] for s in first.samples("agentx_text_answer") if s["ground_s"]["id"] == "0")
    assert sample["judge"]["ground_s"]["judge_model"] and sample["judge_style"] == "gpt"
    assert second.results["results"]["agentx"]["ground_s,none"] == results["agentx"]["ground_s,none"]
