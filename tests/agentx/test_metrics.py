"""Agent-X aggregation (tasks/agentx/core/metrics.py, tasks/agentx/aggregations.py): reproduces published README
rows from constructed per-item judge scores over the 828 keys, with missing predictions, unscored results and
masking by key."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from lmms_agentic.judges import JudgeCoverageError, JudgeResult
from lmms_agentic.tasks.agentx import aggregations
from lmms_agentic.tasks.agentx.core import metrics
from lmms_agentic.tasks.agentx.core.judging import JUDGED_METRICS
from lmms_agentic.tasks.agentx.core.release_data import GENERATIVE_IDS

COLUMNS = [column for column, _ in metrics.REPORTED_COLUMNS]
JUDGED = [name for name, _ in JUDGED_METRICS]  # the nine judged metrics
PARTS = metrics.GOAL_STAR_PARTS


@dataclass(frozen=True)
class Row:
    """A published README row plus what is known (or chosen) about its generative sub-means."""

    label: str
    printed: tuple[float, ...]  # the ten README columns
    goal3: float  # unrounded Goal_acc
    star_parts: tuple[float, float, float]  # generative means of tool_p, tool_acc, toolset_acc
    star3: float  # unrounded Goal_acc*
    missing: tuple[str, ...] = ()  # data.json keys without a prediction


ROWS = [
    # README table, GPT-4o judge; notebook: GPT-4o 0.370 / 0.696, generative sub-means 0.591, 0.765, 0.731;
    # 827 predictions.
    Row("gpt-judge/GPT-4o", (0.60, 0.47, 0.72, 0.81, 0.57, 0.79, 0.59, 0.37, 0.70, 0.68), 0.370,
        (0.591, 0.765, 0.731), 0.696, ("3",)),
    # README table o4-mini (825 predictions; notebook 0.453 / 0.667; sub-means chosen to average 0.667).
    Row("gpt-judge/o4-mini", (0.42, 0.32, 0.89, 0.71, 0.51, 0.60, 0.80, 0.45, 0.67, 0.63), 0.453,
        (0.55, 0.85, 0.601), 0.667, ("100", "200", "101")),
    # README table, Qwen3-14B judge; notebook: GPT-4o 0.438 / 0.482 (sub-means chosen).
    Row("qwen-judge/GPT-4o", (0.46, 0.27, 0.63, 0.72, 0.59, 0.75, 0.69, 0.44, 0.48, 0.56), 0.438,
        (0.30, 0.62, 0.526), 0.482, ("3",)),
    Row("qwen-judge/Gemini-2.5-Pro", (0.63, 0.40, 0.84, 0.86, 0.76, 0.80, 0.83, 0.50, 0.74, 0.72), 0.50,
        (0.55, 0.90, 0.77), 0.74),
]


def spread(base: float, n: int) -> list[float]:
    """``n`` values in [0, 1] whose mean is ``base`` (pairs base +- d_i, plus base itself when n is odd)."""
    d = min(base, 1.0 - base) * 0.9
    values: list[float] = []
    for i in range(n // 2):
        step = d * ((i % 5) + 1) / 5
        values += [base + step, base - step]
    return values + [base] * (n % 2)


def unscored(metric: str, key: int) -> dict[str, Any] | bool | None:
    """Whether (and how) the judge result of ``metric`` for ``key`` is unscored: a deterministic sprinkle."""
    salt = JUDGED.index(metric) * 7 + 3
    if (key * 31 + salt) % 113 == 0:
        return JudgeResult(score=None, unscored_reason="parse_failure", detail="no score found").as_dict()
    if (key * 17 + salt) % 127 == 0:
        return JudgeResult(score=None, unscored_reason="transport_error", detail="HTTP 500").as_dict()
    if (key * 13 + salt) % 149 == 0:
        return None  # no result at all (e.g. a payload written without the metric): "missing"
    return False


def build(row: Row) -> list[dict[str, Any]]:
    """Payloads for keys "0".."827" minus ``row.missing`` whose aggregation must print ``row``."""
    keys = [k for k in range(828) if str(k) not in row.missing]
    target = dict(zip(COLUMNS, row.printed, strict=True))
    column_of = {metric: column for column, metric in metrics.REPORTED_COLUMNS}
    judge: dict[int, dict[str, Any]] = {k: {} for k in keys}
    for metric in JUDGED:
        marks = {k: unscored(metric, k) for k in keys}
        for k, mark in marks.items():
            if mark is None:
                judge[k][metric] = None
            elif mark:
                judge[k][metric] = mark
        scored = [k for k in keys if marks[k] is False]
        gen = [k for k in scored if str(k) in GENERATIVE_IDS]
        plain = [k for k in scored if str(k) not in GENERATIVE_IDS]
        if metric == "goal_acc":
            assignments = {**dict(zip(plain, spread(row.goal3, len(plain)), strict=True)),
                           **{k: 1.0 for k in gen}}  # generative goal scores exist here but must be masked out
        elif metric in PARTS:
            g = row.star_parts[PARTS.index(metric)]
            total = target[column_of[metric]]
            n = (total * len(scored) - g * len(gen)) / len(plain)  # so that the all-item mean is the README value
            assert 0.0 < n < 1.0, (row.label, metric, n)
            assignments = {**dict(zip(gen, spread(g, len(gen)), strict=True)),
                           **dict(zip(plain, spread(n, len(plain)), strict=True))}
        else:
            assignments = dict(zip(scored, spread(target[column_of[metric]], len(scored)), strict=True))
        for k, score in assignments.items():
            judge[k][metric] = JudgeResult(score=score, template_id=f"agentx/{metric}", item_id=str(k)).as_dict()
    return [{
        "id": str(k), "is_generative": str(k) in GENERATIVE_IDS, "query_type": "objective", "media_type": "image",
        "judge": judge[k], "format_ok": k % 4 != 0, "parse_failure": "no JSON object" if k % 50 == 0 else None,
        "toolset_f1_prog": 0.5 if k % 2 else 1.0, "toolset_precision_prog": 1.0, "toolset_recall_prog": 1.0,
        "exact_match": None if str(k) in GENERATIVE_IDS else k % 3 == 0,
        "errors": {"invalid_json_format": k % 4 == 0, "no_action_no_response": k % 10 == 0},
    } for k in keys]


@pytest.fixture(autouse=True)
def _lenient_coverage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LMMS_AGENTIC_JUDGE_STRICT_COVERAGE", raising=False)
    monkeypatch.delenv("LMMS_AGENTIC_JUDGE_MIN_COVERAGE", raising=False)


@pytest.mark.parametrize("row", ROWS, ids=[r.label for r in ROWS])
def test_reproduces_published_rows(row: Row) -> None:
    items = build(row)
    assert len(items) == 828 - len(row.missing)
    reported = metrics.reported_row(items)
    assert list(reported) == COLUMNS
    assert metrics.format_row(reported) == {c: f"{v:.2f}" for c, v in zip(COLUMNS, row.printed, strict=True)}
    assert f"{reported['Goal_acc']:.3f}" == f"{row.goal3:.3f}"
    assert f"{reported['Goal_acc*']:.3f}" == f"{row.star3:.3f}"
    parts = metrics.goal_imggen_parts(items)
    assert [f"{parts[p]:.3f}" for p in PARTS] == [f"{v:.3f}" for v in row.star_parts]


def test_masking_is_by_key_not_row_position() -> None:
    row = ROWS[0]
    items = build(row)  # key "3" absent: every later row sits one position early
    assert aggregations.goal_acc(items) == pytest.approx(0.370)
    positional = {int(k) for k in GENERATIVE_IDS}  # what the notebook does: the ids as row positions
    naive = [it["judge"]["goal_acc"]["score"] for i, it in enumerate(items)
             if i not in positional and isinstance(it["judge"].get("goal_acc"), Mapping)
             and it["judge"]["goal_acc"]["score"] is not None]
    assert abs(sum(naive) / len(naive) - 0.370) > 0.05  # the shifted mask would publish a wrong number
    shuffled = items[::-1]  # order does not matter either
    assert aggregations.goal_acc(shuffled) == pytest.approx(aggregations.goal_acc(items))
    assert aggregations.goal_imggen(shuffled) == pytest.approx(aggregations.goal_imggen(items))


def test_unscored_results_leave_the_means_and_lower_coverage() -> None:
    items = build(ROWS[0])

    def expected(metric: str, subset: Sequence[dict[str, Any]]) -> float:
        scored = [it for it in subset if isinstance(it["judge"].get(metric), Mapping)
                  and it["judge"][metric]["unscored_reason"] is None]
        return len(scored) / len(subset)

    plain = [it for it in items if it["id"] not in GENERATIVE_IDS]
    generative = [it for it in items if it["id"] in GENERATIVE_IDS]
    for metric in JUDGED:
        value = metrics.summary(items, [metrics.COVERAGE[metric]])[metrics.COVERAGE[metric]]
        assert value == pytest.approx(expected(metric, plain if metric == "goal_acc" else items)), metric
        assert 0.95 < value < 1.0, metric  # the sprinkle made every metric lose a few items
    imggen = metrics.summary(items, ["cov_imggen"])["cov_imggen"]
    assert imggen == pytest.approx(sum(expected(p, generative) for p in PARTS) / 3)
    # turning every unscored entry into a 0 would move the means: they really are left out
    zeroed = [{**it, "judge": {m: (r if isinstance(r, Mapping) and r["unscored_reason"] is None
                                   else JudgeResult(score=0.0).as_dict()) for m, r in it["judge"].items()}}
              for it in items]
    assert aggregations.ground_s(zeroed) < aggregations.ground_s(items) - 0.005


def test_low_coverage_warns_and_strict_mode_raises(caplog: pytest.LogCaptureFixture,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    items = [{"id": str(k), "judge": {"ground_s": JudgeResult(score=1.0).as_dict() if k < 5 else
                                      JudgeResult(score=None, unscored_reason="transport_error").as_dict()}}
             for k in (0, 2, 3, 4, 5, 6, 7, 9, 11, 13)]
    with caplog.at_level(logging.WARNING):
        assert aggregations.ground_s(items) == 1.0
    assert "LOW JUDGE COVERAGE for ground_s: 4/10" in caplog.text
    assert aggregations.cov_ground(items) == pytest.approx(0.4)
    monkeypatch.setenv("LMMS_AGENTIC_JUDGE_STRICT_COVERAGE", "1")
    with pytest.raises(JudgeCoverageError):
        aggregations.ground_s(items)


def test_empty_and_unscored_only_give_nan_never_raise() -> None:
    for name, value in metrics.summary([]).items():
        assert (value == 0.0) if name.startswith("cov_") else math.isnan(value), name
    nothing = [{"id": "1", "judge": {m: JudgeResult(score=None, unscored_reason="not_configured").as_dict()
                                     for m in JUDGED}, "format_ok": True, "parse_failure": None,
                "exact_match": None, "toolset_f1_prog": 1.0, "errors": {}}]
    values = metrics.summary(nothing)
    assert all(math.isnan(values[m]) for m in ("ground_s", "goal_acc", "goal_imggen", "exact_match_acc"))
    assert values["cov_ground"] == 0.0 and values["cov_imggen"] == 0.0 and values["toolset_f1_prog"] == 1.0
    assert math.isnan(aggregations.goal_acc([{"id": "1", "judge": {}}]))  # only a generative item: nothing eligible


def test_deterministic_companions() -> None:
    items = [
        {"id": "0", "format_ok": True, "parse_failure": None, "toolset_f1_prog": 1.0, "exact_match": True,
         "errors": {"invalid_json_format": False, "no_action_no_response": False}},
        {"id": "1", "format_ok": False, "parse_failure": "no JSON object", "toolset_f1_prog": 0.0,
         "exact_match": None, "errors": {"invalid_json_format": True, "no_action_no_response": True}},
        {"id": "2", "format_ok": False, "parse_failure": None, "toolset_f1_prog": 0.5, "exact_match": False,
         "errors": {"invalid_json_format": True}},
    ]
    assert aggregations.toolset_f1_prog(items) == pytest.approx(0.5)
    assert aggregations.format_error_rate(items) == pytest.approx(2 / 3)
    assert aggregations.exact_match_acc(items) == pytest.approx(0.5)
    assert aggregations.parse_failure_rate(items) == pytest.approx(1 / 3)
    assert aggregations.err_invalid_json_format(items) == pytest.approx(2 / 3)
    assert aggregations.err_no_action_no_response(items) == pytest.approx(0.5)  # over items that carry the key
    assert math.isnan(metrics.error_rate(items, "not_a_real_key"))


def test_metric_names_resolve_and_never_contain_one_another() -> None:
    names = metrics.metric_names()
    assert set(JUDGED) | {"goal_imggen"} | set(metrics.COVERAGE.values()) | set(metrics.DETERMINISTIC) <= set(names)
    for key in metrics.error_keys():
        assert f"err_{key}" in names
    clashes = [(a, b) for a in names for b in names if a != b and a in b]
    assert clashes == []
    for name in names:
        assert callable(getattr(aggregations, name)) and "_stderr" not in name
    assert "goal_acc" not in metrics.metric_names(True) and "cov_goal" not in metrics.metric_names(True)
    assert "goal_imggen" not in metrics.metric_names(False) and "cov_imggen" not in metrics.metric_names(False)


def test_id_list_wins_over_a_wrong_is_generative_flag(caplog: pytest.LogCaptureFixture) -> None:
    score = JudgeResult(score=1.0).as_dict()
    zero = JudgeResult(score=0.0).as_dict()
    items = [{"id": "0", "is_generative": True, "judge": {"goal_acc": score}},  # "0" is not generative
             {"id": "1", "is_generative": False, "judge": {"goal_acc": zero}},  # "1" is generative
             {"is_generative": False, "judge": {"goal_acc": zero}}]  # no id: the flag decides
    with caplog.at_level(logging.WARNING):
        assert aggregations.goal_acc(items) == pytest.approx(0.5)
    assert "2 payload(s) carry an is_generative flag that disagrees" in caplog.text
    assert metrics.is_generative({"id": 1}) and not metrics.is_generative({"id": "0", "is_generative": True})
