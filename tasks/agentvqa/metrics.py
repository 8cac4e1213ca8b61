"""AgentVQA metrics: the per-row view each metric receives (all are plain means, `adapters.core.scores.mean_score`).

Counting convention (paper, verified on Table 1): per-domain accuracy has a fixed denominator — an unanswered,
unparsable or failed item counts as wrong; the overall score is the unweighted mean of the five domain accuracies
(the `agentvqa` group averages its subtasks with `weight_by_size: false`). Per-source accuracies (`src_<slug>`) are
reported inside each domain's task; a source with no item in the run (e.g. with `--limit`) gives NaN.
`coords_as_released` is the share of coordinate items whose options could not all be re-rendered in the run's
declared convention and were therefore shown exactly as released (NaN when the task has no coordinate item). `accuracy`
receives the full sample record (`adapters.samples`); the others `{"score": 100|0}` or None for rows they do not
count. Metric names never contain one another (lmms-eval matches group metrics by substring).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmms_agentic.adapters.samples import View, field_view_where, no_answer_view, request_failed_view, score
from lmms_agentic.tasks.agentvqa.records import SOURCES

COMMON = ("accuracy", "no_answer_rate", "request_failed_rate", "coords_as_released")


def _coords_view(record: Mapping[str, Any]) -> Any:
    """Coordinate items only: was the item shown as released (not in the run's convention)?"""
    status = record["coords_status"]
    return None if status == "not_applicable" else score(status == "as_released")


VIEWS: dict[str, View] = {
    "no_answer_rate": no_answer_view,
    "request_failed_rate": request_failed_view,
    "coords_as_released": _coords_view,
    **{f"src_{slug}": field_view_where("correct", "source", slug) for slug in SOURCES},
}
"""Every metric after `accuracy` (which carries the record)."""


def metric_names(domain: str) -> tuple[str, ...]:
    """The metrics a domain's task reports: the common ones plus one per source of that domain."""
    return (*COMMON, *(f"src_{slug}" for slug, (owner, _, _) in SOURCES.items() if owner == domain))


def views_for(doc: Mapping[str, Any]) -> dict[str, View]:
    """The views a document's task reports (its domain's metrics after `accuracy`)."""
    return {name: VIEWS[name] for name in metric_names(str(doc["domain"]))[1:]}
