"""`adapters.core.task.ReportedCore` (a core reporting some of its metrics, as an export declares them) and the
checks an export appends for a shipped script (`selfcases.script_checks`)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.core.task import ReportedCore, aggregate, task_values, whole_record
from lmms_agentic.adapters.glue.scoring import results_function
from lmms_agentic.lmeval.export import selfcases, selftest
from lmms_agentic.tasks.agentx import upstream
from lmms_agentic.tasks.agentx.core import task

REPORTED = ("parse_failure_rate", "toolset_f1_prog", "err_invalid_json_format")
ROW = {"id": "0", "query": "What number is on the sign?", "file_path": "a.jpg", "query_type": "objective",
       "tool_metadata": {"OCR": {}}, "final_answer": {"value": "42"},
       "reasoning_steps": [{"step": 1, "task": "read", "tool": "OCR", "output": "42", "thought": "ok"}]}
REPLIES = ['{"reasoning_steps": [{"step": 1, "tool_used": "OCR"}], "final_answer": {"value": "42"}}',
           '{"reasoning_steps": [{"step": 1, "tool_used": "OCR"}, {"step": 2, "tool_used": "Calculator"}]}',
           "", "not a trace at all", "{'reasoning_steps': [], 'final_answer': 'x'"]


def test_each_kind_reports_the_chosen_metrics_in_the_cores_order_the_first_carrying_the_record() -> None:
    reported = ReportedCore(task, REPORTED)
    assert set(reported.TASK_METRICS) == set(task.TASK_METRICS)
    for names in reported.TASK_METRICS.values():
        assert names == ("toolset_f1_prog", "parse_failure_rate", "err_invalid_json_format")
    assert list(reported.METRICS) == list(names)
    assert reported.METRICS["toolset_f1_prog"].view is whole_record
    assert reported.METRICS["parse_failure_rate"] is task.METRICS["parse_failure_rate"]
    assert reported.VARIANTS is task.VARIANTS and reported.BENCHMARK == task.BENCHMARK


def test_every_reported_value_equals_the_cores() -> None:
    reported = ReportedCore(task, REPORTED)
    doc = reported.documents([ROW])[0]
    ours = [task_values(reported, "text_answer", reported.score(doc, reply)) for reply in REPLIES]
    theirs = [task_values(task, "text_answer", task.score(doc, reply)) for reply in REPLIES]
    score = results_function(reported, "text_answer")(doc, [REPLIES[0]])
    assert score["toolset_f1_prog"]["id"] == "0" and "prediction" in score["toolset_f1_prog"], "the record rides along"
    for name in REPORTED:
        mine = aggregate(reported, name, [values[name] for values in ours])
        core = aggregate(task, name, [values[name] for values in theirs])
        assert (math.isnan(mine) and math.isnan(core)) or mine == core, name
    assert 0 < aggregate(reported, "parse_failure_rate", [values["parse_failure_rate"] for values in ours]) < 1


def test_an_unknown_metric_is_named() -> None:
    with pytest.raises(ValueError, match="cannot report no_such_metric"):
        ReportedCore(task, ("toolset_f1_prog", "no_such_metric"))


def test_agentx_exports_only_what_its_tasks_compute() -> None:
    judged = {"ground_s", "goal_acc", "goal_imggen", "cov_ground"}
    assert set(upstream.REPORTED_METRICS) <= set(task.METRICS) and not judged & set(upstream.REPORTED_METRICS)
    doc = task.documents([ROW])[0]
    hard = upstream.hard_replies(doc)
    parsed = {task.score(doc, reply)["parse_path"] for reply in hard}
    assert len(hard) == len(set(hard)) >= 6 and len(parsed) >= 3, parsed
    assert json.loads(hard[-1].split(". ", 1)[1].rsplit(" That", 1)[0])["final_answer"]["value"] == "blue"


def test_script_checks_follow_the_own_test_and_need_only_its_imports() -> None:
    own_test = Path(selftest.__file__).read_text(encoding="utf-8")
    checks = selfcases.script_checks(benchmarks.get("agentx"), own_test)
    assert "def judge_samples() -> Any:" in checks and "def test_judge_samples_" in checks
    assert "lmms_agentic" not in checks
    with pytest.raises(ValueError, match="only the own test's imports"):
        selfcases.script_checks(benchmarks.get("agentx"), "import os\n")
