"""Statistics over gathered per-sample payloads: accuracy, breakdowns, coverage, calibration error.

Every function here works on the full list of payloads that lmms-eval gathers from all ranks,
so results do not depend on how documents were sharded. Accuracies are percentages (0-100) as
in the papers' tables. An empty selection gives NaN ("no items"), never 0 and never an exception.

Calibration error (RoboVista Table III; HLE reference): items sorted by confidence, cut into
consecutive bins of `bin_size` (the last bin absorbs the remainder), and
`CE = sqrt(sum_b |b|/N * (mean_conf_b - acc_b)^2)`, reported x100. `hle_compat=True` reproduces
the widely copied reference loop that skips the last bin (weights then sum to less than 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

Payload = Mapping[str, Any]
NAN = float("nan")


def percent(numerator: float, denominator: float) -> float:
    return 100.0 * numerator / denominator if denominator else NAN


def accuracy(items: Iterable[Payload], key: str = "correct",
             where: Callable[[Payload], bool] | None = None) -> float:
    """Share of items (optionally filtered by `where`) whose `key` is true, in percent.

    Unanswered items carry `key` = False and stay in the denominator (the papers' convention).
    """
    selected = [item for item in items if where is None or where(item)]
    return percent(sum(bool(item[key]) for item in selected), len(selected))


def rate(items: Iterable[Payload], predicate: Callable[[Payload], bool]) -> float:
    """Share of items for which `predicate` holds, in percent."""
    selected = list(items)
    return percent(sum(bool(predicate(item)) for item in selected), len(selected))


def breakdown(items: Iterable[Payload], by: str, key: str = "correct") -> dict[str, tuple[float, int]]:
    """Accuracy and item count per value of the payload field `by`."""
    groups: dict[str, list[Payload]] = {}
    for item in items:
        groups.setdefault(str(item[by]), []).append(item)
    return {name: (accuracy(group, key), len(group)) for name, group in sorted(groups.items())}


def calibration_error(confidences: Sequence[float], correct: Sequence[bool], bin_size: int = 100,
                      hle_compat: bool = False) -> float:
    """Binned RMS calibration error in percent (see the module docstring); NaN without items."""
    if len(confidences) != len(correct):
        raise ValueError(f"{len(confidences)} confidences but {len(correct)} correctness values")
    if bin_size < 1:
        raise ValueError(f"bin_size must be positive, got {bin_size}")
    n = len(confidences)
    if n == 0:
        return NAN
    order = sorted(range(n), key=lambda i: confidences[i])
    n_bins = max(1, n // bin_size)
    bins = [order[b * bin_size:(b + 1) * bin_size] for b in range(n_bins - 1)]
    bins.append(order[(n_bins - 1) * bin_size:])
    if hle_compat:
        bins = bins[:-1]
    total = 0.0
    for members in bins:
        mean_conf = sum(confidences[i] for i in members) / len(members)
        acc = sum(bool(correct[i]) for i in members) / len(members)
        total += len(members) / n * (mean_conf - acc) ** 2
    return 100.0 * math.sqrt(total)
