"""Plugin extra around `core.metrics`: the per-row view each RoboVista metric receives from `process_results`.

`parity_acc` receives the full sample record (`adapters.samples`); every other metric receives a view:
`{"score": 100|0}` for the rows it counts (aggregated by `adapters.core.scores.mean_score`), None for the rows it
does not count, or `{"confidence", "correct"}` for the calibration aggregations of `core.metrics`. The views are built
on `adapters.samples`, which is why they live outside the core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.samples import View, field_view, field_view_where, no_answer_view, request_failed_view, score
from lmms_agentic.tasks.robovista.core.records import ABILITY_SPLIT, DOMAINS


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
    **{f"ability_{a}_acc": field_view_where("correct_parity", "ability_type", a) for a in ABILITY_SPLIT},
    **{f"domain_{d}_acc": field_view_where("correct_parity", "domain", d) for d in DOMAINS},
    "calibration_error": _confidence_view,
    "hle_compat_calibration": _confidence_view,
    "confidence_coverage": lambda record: score(record["confidence"] is not None),
    "icl_fallback_rate": lambda record: score(not record["icl_example_id"]),
}


def task_views(metric_names: Sequence[str]) -> dict[str, View]:
    """The views of a task's metrics (its first metric, `parity_acc`, carries the record instead)."""
    return {name: VIEWS[name] for name in metric_names[1:]}
