"""Per-sample values and judge coverage of a metric, read from the sample lines of either harness.

A sample line carries each metric's value under the metric's name (``adapters.samples``): the first metric carries
the whole record, the others a view, ``{"score": x}``, ``{"unscored_reason": r}`` for a judged metric the judge did
not score, a composite ``{"parts": {...}}``, or None when the row does not count for the metric. ``line_value``
reads one line: (the row counts for the metric, its score or None). For the record-carrying metric the score is the
record's ``score`` or, for a judged metric, the record's ``judge[<metric>]`` result.

``coverage(lines, metric)`` counts the rows a judged metric counts (eligible) and those the judge scored; a metric
is judged when the records' ``judge`` tables name it (or, for records without such tables, when a row carries an
``unscored_reason`` for it). Unscored rows never count as 0: they lower the coverage, which reports show beside the
value.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

LOW_COVERAGE = 0.95
"""Below this scored share a judged number is shown with a caveat (the judges' default minimum coverage)."""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _is_record(value: Mapping[str, Any]) -> bool:
    return "benchmark" in value and "id" in value


def _judge_entry(record: Mapping[str, Any], metric: str) -> Mapping[str, Any] | None:
    judge = record.get("judge")
    entry = judge.get(metric) if isinstance(judge, Mapping) else None
    return entry if isinstance(entry, Mapping) else None


def line_value(line: Mapping[str, Any], metric: str) -> tuple[bool, float | None, bool]:
    """(the row counts for ``metric``, its score or None when unscored, the value is a judge outcome)."""
    view = line.get(metric)
    if not isinstance(view, Mapping):
        return False, None, False
    if _is_record(view):
        if "score" in view:
            return True, _number(view["score"]), False
        entry = _judge_entry(view, metric)
        if entry is None:
            return False, None, False
        scored = entry.get("unscored_reason") is None and entry.get("scored", True) is not False
        return True, _number(entry.get("score")) if scored else None, True
    if "unscored_reason" in view:
        return True, None, True
    if "parts" in view and isinstance(view["parts"], Mapping):
        parts = [p for p in view["parts"].values() if isinstance(p, Mapping)]
        return True, None, any("unscored_reason" in p or "score" in p for p in parts)
    return True, _number(view.get("score")), False


@dataclass(frozen=True)
class Coverage:
    """Rows a judged metric counts and how many of them the judge scored."""

    scored: int
    eligible: int

    @property
    def share(self) -> float:
        return self.scored / self.eligible if self.eligible else 0.0

    @property
    def low(self) -> bool:
        return self.share < LOW_COVERAGE

    def text(self) -> str:
        """``9/10 scored (90%)``, with a caveat when the coverage is low."""
        caveat = "; LOW COVERAGE: averages only the scored rows" if self.low and self.eligible else ""
        if not self.eligible:
            return "no row counts"
        return f"{self.scored}/{self.eligible} judged, {100 * self.share:.0f}%{caveat}"


def judged_metrics(lines: Iterable[Mapping[str, Any]]) -> set[str]:
    """The metrics the records' ``judge`` tables name (empty when no record carries such a table)."""
    found: set[str] = set()
    for line in lines:
        for value in line.values():
            if isinstance(value, Mapping) and _is_record(value) and isinstance(value.get("judge"), Mapping):
                found |= {k for k, v in value["judge"].items() if isinstance(v, Mapping)}
    return found


def coverage(lines: Iterable[Mapping[str, Any]], metric: str) -> Coverage | None:
    """The judge coverage of ``metric`` over ``lines``; None when the metric is not judged (when the records carry
    judge tables, only the metrics they name are judged; else a metric with an unscored row is)."""
    lines = list(lines)
    named = judged_metrics(lines)
    scored = eligible = 0
    judged = metric in named
    for line in lines:
        counts, score, outcome = line_value(line, metric)
        if not counts:
            continue
        view = line.get(metric)
        composite = isinstance(view, Mapping) and isinstance(view.get("parts"), Mapping)
        judged = judged or (outcome and (composite or not named))
        if isinstance(view, Mapping) and composite:
            parts = [p for p in view["parts"].values() if isinstance(p, Mapping)]
            score = 1.0 if parts and all("score" in p for p in parts) else None
        eligible += 1
        scored += score is not None
    return Coverage(scored, eligible) if judged else None
