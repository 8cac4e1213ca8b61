"""The scoring hooks both harnesses share: one item's metrics from the core's record, one aggregation per metric."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.core.task import CoreTask, Judge, aggregate, task_values

ProcessResults = Callable[[Mapping[str, Any], list[Any]], dict[str, Any]]


def reply_text(results: Sequence[Any]) -> str:
    """The model's reply among a harness's results (the first one; empty when none)."""
    reply = results[0] if results else ""
    return reply if isinstance(reply, str) else str(reply)


def results_function(core: CoreTask, kind: str, judge: Callable[[], Judge | None] = lambda: None
                     ) -> ProcessResults:
    """`process_results` of a task of `kind`: every metric the kind declares for one item (None where the item does
    not count); `judge()` gives the judge callable when a metric needs one (None: the core's rules only)."""
    if kind not in core.TASK_METRICS:
        raise KeyError(f"{core.BENCHMARK} has no task kind {kind!r} (it has {', '.join(core.TASK_METRICS)})")

    def process_results(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
        return task_values(core, kind, core.score(doc, reply_text(results), judge()))

    process_results.__name__ = f"process_results_{kind}"
    return process_results


def aggregation_function(core: CoreTask, name: str) -> Callable[[Sequence[Any]], float]:
    """The aggregation of metric `name` over every item's value (NaN when no item counts)."""
    if name not in core.METRICS:
        raise KeyError(f"{core.BENCHMARK} has no metric {name!r}")

    def aggregation(values: Sequence[Any]) -> float:
        return aggregate(core, name, values)

    aggregation.__name__ = f"{name}_aggregation"
    return aggregation
