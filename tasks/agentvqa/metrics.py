"""AgentVQA aggregations over payloads gathered from all ranks.

Counting convention (paper, verified on Table 1): per-domain accuracy has a fixed denominator — an
unanswered, unparsable or failed item counts as wrong; the overall score is the unweighted mean of
the five domain accuracies (the `agentvqa` group averages its subtasks with `weight_by_size: false`).
Per-source accuracies (`src_<slug>`) are reported inside each domain's task; a source with no item
in the run (e.g. with `--limit`) gives NaN. Metric names never contain one another (lmms-eval
matches group metrics by substring).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lmms_agentic.adapters import stats
from lmms_agentic.adapters.records.agentvqa import SOURCES

Items = Sequence[dict[str, Any]]
COMMON = ("accuracy", "no_answer_rate", "request_failed_rate")


def accuracy(items: Items) -> float:
    return stats.accuracy(items, "correct")


def no_answer_rate(items: Items) -> float:
    """Share of items with no extractable answer (unevaluated in the paper's terms; counted as wrong)."""
    return stats.rate(items, lambda item: item["pred"] is None)


def _source_accuracy(slug: str) -> Callable[[Items], float]:
    def aggregate(items: Items) -> float:
        return stats.accuracy(items, "correct", where=lambda item: item["source"] == slug)

    aggregate.__name__ = f"src_{slug}"
    aggregate.__doc__ = f"Accuracy over the {SOURCES[slug][1]} items (NaN if the run has none)."
    return aggregate


SOURCE_METRICS: dict[str, Callable[[Items], float]] = {f"src_{slug}": _source_accuracy(slug) for slug in SOURCES}


def metric_names(domain: str) -> tuple[str, ...]:
    """The metrics a domain's task reports: the common ones plus one per source of that domain."""
    return (*COMMON, *(f"src_{slug}" for slug, (owner, _, _) in SOURCES.items() if owner == domain))


def __getattr__(name: str) -> Callable[[Items], float]:
    """Resolves `aggregation: !function lmms_agentic.tasks.agentvqa.metrics.src_<slug>` references."""
    try:
        return SOURCE_METRICS[name]
    except KeyError:
        raise AttributeError(f"{__name__} has no attribute {name!r}") from None
