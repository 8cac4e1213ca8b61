"""RoboVista's metrics: the one table of every metric (`METRICS`), the metrics each kind of task reports
(`TASK_METRICS`), how each reads its per-item value from a record, and the calibration aggregations (paper Table III).

Counting convention (paper, public runner): every item stays in the denominator; an unanswered item, an
unparsable reply or a failed request counts as incorrect. `parity_acc` (the headline, paper Tables I-III) uses the
runner's first released parser (`parity_20260706`, `pred_parity`); its view is the whole record, aggregated over the
record's `score` (100 x `correct_parity`). `parity_20260714_acc` uses the runner's second parser, `strict_acc` the
project's strict extractor (`pred`). Breakdowns use the raw label values; the rows with an empty domain or ability
count only in the overall figures. Every metric but the two calibration errors is the mean of per-item values on a
0/100 scale over the items it counts (`adapters.core.scores.mean_score`): a view gives `{"score": 100|0}`, or None
for an item the metric does not count. The calibration errors receive `{"confidence", "correct"}` of the items with
a stated confidence and follow `adapters.core.scores.calibration_error` (consecutive bins of 100 items). Names are
chosen so that no name is a substring of another (lmms-eval matches group metrics by substring). The thinking-loop
rates every task also reports are not the benchmark's: the harness glue adds them.
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
    return lambda record: percent(bool(record["correct_parity"])) if record.get(key) == value else None


def _parser_view(mode: str) -> View:
    return lambda record: percent(bool(record["parsers"][mode]["correct"]))


def confidence_view(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the calibration aggregations read of an item: its stated confidence and the headline's correctness;
    None when the reply stated no confidence."""
    if record["confidence"] is None:
        return None
    return {"confidence": record["confidence"], "correct": bool(record["correct_parity"])}


def _calibration(items: Items, hle_compat: bool) -> float:
    scored = [item for item in items if item is not None]
    return scores.calibration_error([float(item["confidence"]) for item in scored],
                                   [bool(item["correct"]) for item in scored], hle_compat=hle_compat)


def calibration_error(items: Items) -> float:
    """RMS calibration error (%) over items with a parsed confidence, all bins (default definition); each item is
    `{"confidence": float, "correct": bool}` or None (not counted)."""
    return _calibration(items, hle_compat=False)


def hle_compat_calibration(items: Items) -> float:
    """The same, reproducing the HLE reference loop that skips the last bin."""
    return _calibration(items, hle_compat=True)


METRICS: Mapping[str, Metric] = metric_table(
    Metric(RECORD_METRIC, whole_record, mean_score, True,
           "accuracy (%) by the runner's first released parser (parity_20260706), the paper's tables"),
    Metric("parity_20260714_acc", _parser_view("parity_20260714"), mean_score, True,
           "accuracy (%) by the runner's second released parser (parity_20260714)"),
    Metric("strict_acc", _field_view("correct"), mean_score, True, "accuracy (%) by the project's strict extractor"),
    Metric("no_answer_rate", lambda record: percent(record["pred"] is None), mean_score, False,
           "share of items with no option read by the strict extractor (%)"),
    Metric("request_failed_rate", _field_view("request_failed"), mean_score, False,
           "share of items whose model request failed (%)"),
    Metric("perception_acc", _headline_where("ability_split", "SC"), mean_score, True,
           "headline accuracy (%) on the perception (SC) items"),
    Metric("planning_acc", _headline_where("ability_split", "PL"), mean_score, True,
           "headline accuracy (%) on the planning (PL) items"),
    *(Metric(f"ability_{ability}_acc", _headline_where("ability_type", ability), mean_score, True,
             f"headline accuracy (%) on the {ability} items") for ability in ABILITY_SPLIT),
    *(Metric(f"domain_{domain}_acc", _headline_where("domain", domain), mean_score, True,
             f"headline accuracy (%) on the {display} domain") for domain, display in DOMAINS.items()),
    Metric("calibration_error", confidence_view, calibration_error, False,
           "RMS calibration error (%) of the stated confidences, every bin"),
    Metric("hle_compat_calibration", confidence_view, hle_compat_calibration, False,
           "the same as the HLE reference loop computes it (its last bin skipped)"),
    Metric("confidence_coverage", lambda record: percent(record["confidence"] is not None), mean_score, True,
           "share of items whose reply stated a confidence (%)"),
    Metric("icl_fallback_rate", lambda record: percent(not record["icl_example_id"]), mean_score, False,
           "share of items asked zero-shot for want of a same-(task, domain) example (%)"),
)
"""Every metric any RoboVista task reports, in report order (the option-permutation tasks report the shared
permutation metrics instead)."""

DOMAIN_TASK = (RECORD_METRIC, "parity_20260714_acc", "strict_acc", "no_answer_rate", "request_failed_rate",
               "perception_acc", "planning_acc")
FULL_TASK = (*DOMAIN_TASK, *(f"ability_{a}_acc" for a in ABILITY_SPLIT), *(f"domain_{d}_acc" for d in DOMAINS))
CONFIDENCE_TASK = (*FULL_TASK, "calibration_error", "hle_compat_calibration", "confidence_coverage")

TASK_METRICS: Mapping[str, tuple[str, ...]] = {
    "domain": DOMAIN_TASK,
    "full": FULL_TASK,
    "confidence": CONFIDENCE_TASK,
    "icl": (*CONFIDENCE_TASK, "icl_fallback_rate"),
}
"""The kinds of task: one domain's rows (the `robovista` group's subtasks), all rows with every breakdown
(zero-shot, CoT), the same with a stated confidence, and the in-context protocol."""
