"""RoboVista aggregations: one function per reported metric, over payloads gathered from all ranks.

Counting convention (paper, public runner): every item stays in the denominator; an unanswered
item, an unparsable reply or a failed request counts as incorrect. `parity_acc` uses the runner's
parser (deterministic A->E fallback), `strict_acc` the project's strict extractor. Breakdowns use
the raw label values; the rows with an empty domain or ability count only in the overall figures.
Calibration error follows `adapters.stats.calibration_error` (bins of 100 items).

Metric names are chosen so that no name is a substring of another (lmms-eval matches group metrics
by substring).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lmms_agentic.adapters import stats

Items = Sequence[dict[str, Any]]


def parity_acc(items: Items) -> float:
    return stats.accuracy(items, "correct")


def strict_acc(items: Items) -> float:
    return stats.accuracy(items, "correct_strict")


def no_answer_rate(items: Items) -> float:
    """Share of items where the strict extractor found no answer (unparsable, ambiguous, empty)."""
    return stats.rate(items, lambda item: item["pred_strict"] is None)


def _accuracy_where(field: str, value: str) -> Callable[[Items], float]:
    def aggregate(items: Items) -> float:
        return stats.accuracy(items, "correct", where=lambda item: item[field] == value)

    aggregate.__name__ = f"{field}_{value}_acc"
    aggregate.__doc__ = f"Parity accuracy over the items whose {field} is {value!r} (NaN if none)."
    return aggregate


perception_acc = _accuracy_where("ability_split", "SC")
planning_acc = _accuracy_where("ability_split", "PL")
ability_scene_understanding_acc = _accuracy_where("ability_type", "scene_understanding")
ability_high_level_decision_making_acc = _accuracy_where("ability_type", "high_level_decision_making")
ability_low_level_motion_awareness_acc = _accuracy_where("ability_type", "low_level_motion_awareness")
ability_recovery_replanning_robustness_acc = _accuracy_where("ability_type", "recovery_replanning_robustness")
ability_physical_interaction_acc = _accuracy_where("ability_type", "physical_interaction")
domain_agriculture_acc = _accuracy_where("domain", "agriculture")
domain_autonomous_driving_acc = _accuracy_where("domain", "autonomous_driving")
domain_domestic_acc = _accuracy_where("domain", "domestic")
domain_industrial_manufacturing_acc = _accuracy_where("domain", "industrial_manufacturing")
domain_surgical_robotics_acc = _accuracy_where("domain", "surgical_robotics")
domain_open_datasets_acc = _accuracy_where("domain", "open_datasets")


def _calibration(items: Items, hle_compat: bool) -> float:
    scored = [item for item in items if item["confidence"] is not None]
    return stats.calibration_error([item["confidence"] for item in scored],
                                   [bool(item["correct"]) for item in scored], hle_compat=hle_compat)


def calibration_error(items: Items) -> float:
    """RMS calibration error (%) over items with a parsed confidence, all bins (default definition)."""
    return _calibration(items, hle_compat=False)


def hle_compat_calibration(items: Items) -> float:
    """The same, reproducing the HLE reference loop that skips the last bin."""
    return _calibration(items, hle_compat=True)


def confidence_coverage(items: Items) -> float:
    """Share of items whose reply stated a parsable confidence (the CE denominator)."""
    return stats.rate(items, lambda item: item["confidence"] is not None)


def icl_fallback_rate(items: Items) -> float:
    """Share of items asked zero-shot because no other item shares their (task, domain)."""
    return stats.rate(items, lambda item: not item["icl_example_id"])


DOMAIN_TASK_METRICS = (
    "parity_acc", "strict_acc", "no_answer_rate", "request_failed_rate", "perception_acc", "planning_acc",
)
FULL_METRICS = (
    *DOMAIN_TASK_METRICS,
    "ability_scene_understanding_acc", "ability_high_level_decision_making_acc",
    "ability_low_level_motion_awareness_acc", "ability_recovery_replanning_robustness_acc",
    "ability_physical_interaction_acc",
    "domain_agriculture_acc", "domain_autonomous_driving_acc", "domain_domestic_acc",
    "domain_industrial_manufacturing_acc", "domain_surgical_robotics_acc", "domain_open_datasets_acc",
)
CONFIDENCE_METRICS = (*FULL_METRICS, "calibration_error", "hle_compat_calibration", "confidence_coverage")
ICL_METRICS = (*CONFIDENCE_METRICS, "icl_fallback_rate")
