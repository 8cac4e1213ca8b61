"""AgentVQA's metrics: every name (`METRICS`), the names each domain's task reports, and their per-item inputs.

Counting convention (paper, verified on Table 1): per-domain accuracy has a fixed denominator — an unanswered,
unparsable or failed item counts as wrong; the overall score is the unweighted mean of the five domain accuracies
(the `agentvqa` group averages its subtasks with `weight_by_size: false`). Per-source accuracies (`src_<slug>`) are
reported inside each domain's task; a source with no item in the run (e.g. with `--limit`) gives NaN.
`coords_as_released` is the share of coordinate items whose options could not all be re-rendered in the run's
declared convention and were therefore shown exactly as released (NaN when the task has no coordinate item).

Every metric is the mean of per-item values on a 0/100 scale over the items it counts
(`adapters.core.scores.mean_score`, named by the task YAMLs): `accuracy` of the record's `correct`, the rates of
`pred is None` and `request_failed`, `src_<slug>` of `correct` on that source's items, `coords_as_released` of
`coords_shown_as_released`. `loop_rate` and `truncation_rate` are the plugin's thinking-loop detector's
(`adapters.samples.LOOP_VIEWS`), reported by every task after the benchmark's own metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmms_agentic.tasks.agentvqa.core.records import SOURCES

COMMON = ("accuracy", "no_answer_rate", "request_failed_rate", "coords_as_released")
"""Reported by every domain task, in this order (`accuracy`, the headline, first)."""
LOOP_METRICS = ("loop_rate", "truncation_rate")


def source_metric(slug: str) -> str:
    """The per-source accuracy's name."""
    return f"src_{slug}"


def metric_names(domain: str) -> tuple[str, ...]:
    """The benchmark's metrics a domain's task reports: the common ones plus one per source of that domain."""
    return (*COMMON, *(source_metric(slug) for slug, (owner, _, _) in SOURCES.items() if owner == domain))


METRICS = (*COMMON, *(source_metric(slug) for slug in SOURCES), *LOOP_METRICS)
"""Every metric any AgentVQA task reports (the task YAMLs' metric lists are drawn from these)."""


def coords_shown_as_released(record: Mapping[str, Any]) -> bool | None:
    """Coordinate items only (None for the others): was the item shown as released, not in the run's convention?"""
    status = record["coords_status"]
    return None if status == "not_applicable" else status == "as_released"
