"""AgentVQA's metrics: the one table of every metric (`METRICS`), the metrics each domain's task reports
(`TASK_METRICS`), and how each reads its per-item value from a record.

Counting convention (paper, verified on Table 1): per-domain accuracy has a fixed denominator — an unanswered,
unparsable or failed item counts as wrong; the overall score is the unweighted mean of the five domain accuracies
(the `agentvqa` group averages its subtasks with `weight_by_size: false`). Per-source accuracies (`src_<slug>`) are
reported inside each domain's task; a source with no item in the run (e.g. with `--limit`) gives NaN.
`coords_as_released` is the share of coordinate items whose options could not all be re-rendered in the run's
declared convention and were therefore shown exactly as released (NaN when the task has no coordinate item).

Every metric is the mean of per-item values on a 0/100 scale over the items it counts
(`adapters.core.scores.mean_score`): `accuracy` of the record's `score` (100 × `correct`; the record itself is its
view), the rates of `pred is None` and `request_failed`, `src_<slug>` of `correct` on that source's items,
`coords_as_released` of `coords_shown_as_released`. A view gives `{"score": 100|0}`, or None for an item the metric
does not count. The thinking-loop rates every task also reports are not the benchmark's: the harness glue adds them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lmms_agentic.adapters.core.scores import mean_score
from lmms_agentic.adapters.core.task import Metric, metric_table, whole_record
from lmms_agentic.tasks.agentvqa.core.records import DOMAINS, SOURCES

RECORD_METRIC = "accuracy"
"""The headline: its view is the whole record, aggregated over the record's `score`."""


def percent(value: bool | None) -> dict[str, float] | None:
    """A percentage view: 100 for true, 0 for false, None (the item does not count) for None."""
    return None if value is None else {"score": 100.0 if value else 0.0}


def source_metric(slug: str) -> str:
    """The per-source accuracy's name."""
    return f"src_{slug}"


def coords_shown_as_released(record: Mapping[str, Any]) -> bool | None:
    """Coordinate items only (None for the others): was the item shown as released, not in the run's convention?"""
    status = record["coords_status"]
    return None if status == "not_applicable" else status == "as_released"


def _source_view(slug: str) -> Callable[[Mapping[str, Any]], Any]:
    def view(record: Mapping[str, Any]) -> Any:
        return percent(bool(record["correct"])) if record["source"] == slug else None

    return view


METRICS: Mapping[str, Metric] = metric_table(
    Metric(RECORD_METRIC, whole_record, mean_score, True, "share of items answered correctly (%)"),
    Metric("no_answer_rate", lambda record: percent(record["pred"] is None), mean_score, False,
           "share of items with no option read from the reply (%)"),
    Metric("request_failed_rate", lambda record: percent(bool(record["request_failed"])), mean_score, False,
           "share of items whose model request failed (%)"),
    Metric("coords_as_released", lambda record: percent(coords_shown_as_released(record)), mean_score, False,
           "share of coordinate items shown as released, not in the run's convention (%)"),
    *(Metric(source_metric(slug), _source_view(slug), mean_score, True, f"accuracy on {display} items (%)")
      for slug, (_, display, _) in SOURCES.items()),
)
"""Every metric any AgentVQA task reports, in report order."""

COMMON = (RECORD_METRIC, "no_answer_rate", "request_failed_rate", "coords_as_released")
"""Reported by every domain task, in this order (`accuracy`, the headline, first)."""


def metric_names(domain: str) -> tuple[str, ...]:
    """The metrics a domain's task reports: the common ones plus one per source of that domain."""
    return (*COMMON, *(source_metric(slug) for slug, (owner, _, _) in SOURCES.items() if owner == domain))


TASK_METRICS: Mapping[str, tuple[str, ...]] = {domain: metric_names(domain) for domain in DOMAINS}
"""One kind of task per domain (every variant of a domain reports the same metrics)."""
