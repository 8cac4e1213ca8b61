"""The low judge coverage warning: the cause it saw and that cause's fix, logged once per run with the counts."""

from __future__ import annotations

import logging

import pytest

from lmms_agentic.judges import coverage
from lmms_agentic.judges.coverage import CoveragePolicy, coverage_summary
from lmms_agentic.judges.result import JudgeResult


def _unscored(reason: str, detail: str | None = None) -> JudgeResult:
    return JudgeResult(score=None, unscored_reason=reason, detail=detail)


@pytest.mark.parametrize(("items", "cause", "fix"), [
    ([_unscored("not_configured")] * 4, "no judge set",
     "set LMMS_AGENTIC_JUDGE_BASE_URL with LMMS_AGENTIC_JUDGE_MODEL"),
    ([_unscored("transport_error", "ConnectionError: refused")] * 4, "the judge was unreachable",
     "check that LMMS_AGENTIC_JUDGE_BASE_URL answers"),
    ([_unscored("judge_unavailable")] * 4, "the judge was unreachable", "check that LMMS_AGENTIC_JUDGE_BASE_URL"),
    ([_unscored("transport_error", "HTTP 429: slow down").as_dict()] * 4, "the judge rate-limited",
     "lower LMMS_AGENTIC_JUDGE_CONCURRENCY"),
    ([_unscored("parse_failure", "no Score field")] * 4, "judge replies that do not parse",
     "a judge that follows the template's reply format"),
    ([_unscored("refusal")] * 4, "the judge refused", "use another judge model"),
    ([_unscored("ambiguous", "conflicting scores [0.2, 0.9]")] * 4, "judge replies with verdicts that disagree",
     "one verdict per reply"),
    ([None] * 4, "items with no judge result logged", "python -m lmms_agentic rescore"),
])
def test_the_warning_names_the_cause_and_its_fix(items: list[object], cause: str, fix: str,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        coverage_summary("ground_s", [JudgeResult(score=1.0), *items], policy=CoveragePolicy(0.95))
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith("LOW JUDGE COVERAGE for ground_s: 1/5 items scored")
    assert f"cause: {cause}" in line and fix in line


def test_mixed_causes_are_all_named_most_frequent_first(caplog: pytest.LogCaptureFixture) -> None:
    items = [_unscored("parse_failure")] * 3 + [_unscored("not_configured")]
    with caplog.at_level(logging.WARNING):
        coverage_summary("tool_p", items, policy=CoveragePolicy())
    assert "cause: judge replies that do not parse (3); no judge set (1)" in caplog.text


def test_once_per_run_then_one_summary_line_with_every_metrics_counts(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        for metric, total in [("ground_s", 8), ("tool_p", 8), ("ground_s", 2)]:
            coverage_summary(metric, [_unscored("not_configured")] * total, policy=CoveragePolicy())
    assert caplog.text.count("LOW JUDGE COVERAGE") == 1
    summary = coverage.run_summary()
    assert summary.startswith("LOW JUDGE COVERAGE in this run (2 judged metrics, scored/total): ")
    assert "ground_s 0/8, 0/2; tool_p 0/8" in summary and "(no judge set)" in summary
    with caplog.at_level(logging.WARNING):  # a new cause is news: logged, once
        coverage_summary("fact_p", [_unscored("parse_failure")] * 2, policy=CoveragePolicy())
        coverage_summary("sem_acc", [_unscored("parse_failure")] * 2, policy=CoveragePolicy())
    assert caplog.text.count("LOW JUDGE COVERAGE for ") == 2


def test_a_single_low_metric_needs_no_summary() -> None:
    coverage_summary("ground_s", [_unscored("refusal")], policy=CoveragePolicy(), warn=True)
    assert coverage.run_summary() == ""
