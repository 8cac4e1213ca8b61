"""Agent-X's lmms-eval aggregation functions (plugin): one per metric of the core's table (`core.task.METRICS`) and
per thinking-loop metric (`core.metrics.LOOP_METRICS`), each named as its metric, generated here.

Each is the core's `aggregate` of that metric (`core/metrics.py`) with the judge layer's judged mean
(`judges.coverage.judged_mean`) in place of the plain `scored_mean`: a judged metric whose coverage is below 95%
(`LMMS_AGENTIC_JUDGE_MIN_COVERAGE`) warns, or raises with `LMMS_AGENTIC_JUDGE_STRICT_COVERAGE=1`; every other metric
is the core's value unchanged.  The task YAMLs name these functions (`aggregations.<metric>`).
"""

from __future__ import annotations

from collections.abc import Callable

from lmms_agentic.judges.coverage import judged_mean
from lmms_agentic.tasks.agentx.core import task
from lmms_agentic.tasks.agentx.core.metrics import LOOP_METRICS, Items, aggregate

Aggregation = Callable[[Items], float]
NAMES: tuple[str, ...] = (*task.METRICS, *LOOP_METRICS)
"""Every metric a one-shot Agent-X task reports, hence every function of this module."""


def _aggregation(name: str) -> Aggregation:
    def aggregation(items: Items) -> float:
        return aggregate(name, items, judged_mean)

    aggregation.__name__ = aggregation.__qualname__ = name
    aggregation.__module__ = __name__
    aggregation.__doc__ = f"`{name}` over the gathered items (`core.metrics.aggregate` with the judged mean)."
    return aggregation


_FUNCTIONS: dict[str, Aggregation] = {name: _aggregation(name) for name in NAMES}


def __getattr__(name: str) -> Aggregation:
    try:
        return _FUNCTIONS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (Agent-X metrics: "
                             f"{', '.join(NAMES)})") from None


def __dir__() -> list[str]:
    return sorted({*globals(), *_FUNCTIONS})
