"""RoboVista's metrics: the one table of every metric (`METRICS`), the metrics each kind of task reports
(`TASK_METRICS`), how each reads its per-item value from a record, and the calibration aggregations (paper Table III).

Counting convention (paper, public runner): every item stays in the denominator; an unanswered item, an
unparsable reply or a failed request counts as incorrect; the rows with an empty domain or ability count only in the
overall figures. Every metric but the two calibration errors is `adapters.core.scores.mean_score` of per-item views
(`{"score": 100|0}`, None for an item it does not count); the calibration errors receive `{"confidence", "correct"}`
of the items with a stated confidence (`adapters.core.scores.calibration_error`, bins of 100 items). No name is a
substring of another (lmms-eval matches group metrics by substring). The thinking-loop rates are the harness glue's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.core import scores
from lmms_agentic.adapters.core.scores import mean_score
from lmms_agentic.adapters.core.task import Metric, metric_table, whole_record
from lmms_agentic.tasks.robovista.core.records import ABILITY_SPLIT, DOMAINS

Items = Sequence[Mapping[str, Any] | None]
View = Callable[[Mapping[str, Any]], Any]

RECORD_METRIC = "parity_acc"
"""The headline: its view is the whole record, aggregated over the record's `score` (100 x `correct_parity`)."""


def percent(value: bool | None) -> dict[str, float] | None:
    """A percentage view: 100 for true, 0 for false, None (the item does not count) for None."""
    return None if value is None else {"score": 100.0 if value else 0.0}


def _field_view(field: str) -> View:
    return lambda record: percent(bool(record[field]))


def _headline_where(key: str, value: str) -> View:
    """The headline's correctness on the items whose `key` is `value` (None for the others)."""
    headline = _field_view("correct_parity")
    return lambda record: headline(record) if record.get(key) == value else None


def _parser_view(mode: str) -> View:
    return lambda record: percent(bool(record["parsers"][mode]["correct"]))


def confidence_view(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the calibration aggregations read of an item: its stated confidence and the headline's correctness;
    None when the reply stated no confidence."""
    if record["confidence"] is None:
        return None
    correct = bool(record["correct_parity"])
    return {"confidence": record["confidence"], "correct": correct}


def _calibration(items: Items, hle_compat: bool) -> float:
    scored = [item for item in items if item is not None]
    confidences = [float(item["confidence"]) for item in scored]
    correct = [bool(item["correct"]) for item in scored]
    return scores.calibration_error(confidences, correct, hle_compat=hle_compat)


def calibration_error(items: Items) -> float:
    """RMS calibration error (%) over items with a parsed confidence, all bins (default definition); each item is
    `{"confidence": float, "correct": bool}` or None (not counted)."""
    return _calibration(items, hle_compat=False)


def hle_compat_calibration(items: Items) -> float:
    """The same, reproducing the HLE reference loop that skips the last bin."""
    return _calibration(items, hle_compat=True)


VIEWS: Mapping[str, View] = {
    RECORD_METRIC: whole_record,
    "parity_20260714_acc": _parser_view("parity_20260714"),
    "strict_acc": _field_view("correct"),
    "no_answer_rate": lambda record: percent(record["pred"] is None),
    "request_failed_rate": _field_view("request_failed"),
    "perception_acc": _headline_where("ability_split", "SC"),
    "planning_acc": _headline_where("ability_split", "PL"),
    **{f"ability_{key}_acc": _headline_where("ability_type", key) for key in ABILITY_SPLIT},
    **{f"domain_{key}_acc": _headline_where("domain", key) for key in DOMAINS},
    "calibration_error": confidence_view,
    "hle_compat_calibration": confidence_view,
    "confidence_coverage": lambda record: percent(record["confidence"] is not None),
    "icl_fallback_rate": lambda record: percent(not record["icl_example_id"]),
}
"""Each metric's per-item view, in report order."""
DESCRIPTIONS: Mapping[str, str] = {
    RECORD_METRIC: "accuracy (%) by the runner's first released parser (parity_20260706), the paper's tables",
    "parity_20260714_acc": "accuracy (%) by the runner's second released parser (parity_20260714)",
    "strict_acc": "accuracy (%) by the project's strict extractor",
    "no_answer_rate": "share of items with no option read by the strict extractor (%)",
    "request_failed_rate": "share of items whose model request failed (%)",
    "perception_acc": "headline accuracy (%) on the perception (SC) items",
    "planning_acc": "headline accuracy (%) on the planning (PL) items",
    **{f"ability_{key}_acc": f"headline accuracy (%) on the {key} items" for key in ABILITY_SPLIT},
    **{f"domain_{key}_acc": f"headline accuracy (%) on the {name} domain" for key, name in DOMAINS.items()},
    "calibration_error": "RMS calibration error (%) of the stated confidences, every bin",
    "hle_compat_calibration": "the same as the HLE reference loop computes it (its last bin skipped)",
    "confidence_coverage": "share of items whose reply stated a confidence (%)",
    "icl_fallback_rate": "share of items asked zero-shot for want of a same-(task, domain) example (%)",
}
AGGREGATIONS = {f.__name__: f for f in (calibration_error, hle_compat_calibration)}
"""The aggregations other than `scores.mean_score`, by metric name (the function of the same name)."""
LOWER_IS_BETTER = ("no_answer_rate", "request_failed_rate", "icl_fallback_rate")
"""Besides the calibration errors."""


def _metric(name: str, view: View) -> Metric:
    aggregation = AGGREGATIONS.get(name, mean_score)
    higher = name not in (*LOWER_IS_BETTER, *AGGREGATIONS)
    return Metric(name, view, aggregation, higher, DESCRIPTIONS[name])


METRICS: Mapping[str, Metric] = metric_table(*(_metric(n, v) for n, v in VIEWS.items()))
"""Every metric any RoboVista task reports, in report order (the option-permutation tasks report the shared
permutation metrics instead)."""


def _through(last: str) -> tuple[str, ...]:
    """The metrics in report order, up to `last`."""
    return tuple(VIEWS)[: tuple(VIEWS).index(last) + 1]


DOMAIN_TASK = _through("planning_acc")
FULL_TASK = _through(f"domain_{tuple(DOMAINS)[-1]}_acc")
CONFIDENCE_TASK = _through("confidence_coverage")

TASK_METRICS: Mapping[str, tuple[str, ...]] = {
    "domain": DOMAIN_TASK,
    "full": FULL_TASK,
    "confidence": CONFIDENCE_TASK,
    "icl": (*CONFIDENCE_TASK, "icl_fallback_rate"),
}
"""The kinds of task: one domain's rows (the `robovista` group's subtasks), all rows with every breakdown
(zero-shot, CoT), the same with a stated confidence, and the in-context protocol."""
