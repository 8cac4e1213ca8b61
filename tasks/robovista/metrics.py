"""RoboVista metrics: the per-row view each metric receives, and the aggregations that are not a plain mean.

Counting convention (paper, public runner): every item stays in the denominator; an unanswered item, an
unparsable reply or a failed request counts as incorrect. `parity_acc` (the headline, paper Tables I-III) uses the
runner's first released parser (`parity_20260706`, `pred_parity`); `parity_20260714_acc` the runner's second
(`parsers`, README.md says which published numbers each reproduces); `strict_acc` the project's strict extractor
(`pred`). Breakdowns use the raw label
values; the rows with an empty domain or ability count only in the overall figures. Calibration error follows
`adapters.scores.calibration_error` (consecutive bins of 100 items).

`parity_acc` receives the full sample record (`adapters.samples`); every other metric receives a view:
`{"score": 100|0}` for the rows it counts (aggregated by `adapters.scores.mean_score`) or None. Metric names are
chosen so that no name is a substring of another (lmms-eval matches group metrics by substring).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.core import scores
from lmms_agentic.adapters.samples import View, field_view, field_view_where, no_answer_view, request_failed_view, score

Items = Sequence[Mapping[str, Any] | None]
DOMAINS = ("agriculture", "autonomous_driving", "domestic", "industrial_manufacturing", "surgical_robotics",
           "open_datasets")
ABILITIES = ("scene_understanding", "high_level_decision_making", "low_level_motion_awareness",
             "recovery_replanning_robustness", "physical_interaction")


def _confidence_view(record: Mapping[str, Any]) -> Any:
    if record["confidence"] is None:
        return None
    return {"confidence": record["confidence"], "correct": bool(record["correct_parity"])}


def _parser_view(mode: str) -> View:
    return lambda record: score(bool(record["parsers"][mode]["correct"]))


VIEWS: dict[str, View] = {
    "parity_20260714_acc": _parser_view("parity_20260714"),
    "strict_acc": field_view("correct"),
    "no_answer_rate": no_answer_view,
    "request_failed_rate": request_failed_view,
    "perception_acc": field_view_where("correct_parity", "ability_split", "SC"),
    "planning_acc": field_view_where("correct_parity", "ability_split", "PL"),
    **{f"ability_{a}_acc": field_view_where("correct_parity", "ability_type", a) for a in ABILITIES},
    **{f"domain_{d}_acc": field_view_where("correct_parity", "domain", d) for d in DOMAINS},
    "calibration_error": _confidence_view,
    "hle_compat_calibration": _confidence_view,
    "confidence_coverage": lambda record: score(record["confidence"] is not None),
    "icl_fallback_rate": lambda record: score(not record["icl_example_id"]),
}

DOMAIN_TASK_METRICS = ("parity_acc", "parity_20260714_acc", "strict_acc", "no_answer_rate", "request_failed_rate",
                       "perception_acc", "planning_acc")
FULL_METRICS = (*DOMAIN_TASK_METRICS, *(f"ability_{a}_acc" for a in ABILITIES),
                *(f"domain_{d}_acc" for d in DOMAINS))
CONFIDENCE_METRICS = (*FULL_METRICS, "calibration_error", "hle_compat_calibration", "confidence_coverage")
ICL_METRICS = (*CONFIDENCE_METRICS, "icl_fallback_rate")


def views(metric_names: Sequence[str]) -> dict[str, View]:
    """The views of a task's metrics (its first metric, `parity_acc`, carries the record instead)."""
    return {name: VIEWS[name] for name in metric_names[1:]}


def _calibration(items: Items, hle_compat: bool) -> float:
    scored = [item for item in items if item is not None]
    return scores.calibration_error([float(item["confidence"]) for item in scored],
                                   [bool(item["correct"]) for item in scored], hle_compat=hle_compat)


def calibration_error(items: Items) -> float:
    """RMS calibration error (%) over items with a parsed confidence, all bins (default definition)."""
    return _calibration(items, hle_compat=False)


def hle_compat_calibration(items: Items) -> float:
    """The same, reproducing the HLE reference loop that skips the last bin."""
    return _calibration(items, hle_compat=True)
