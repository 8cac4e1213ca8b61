"""Per-item scores to task figures: accuracy, rates, breakdowns, view means, calibration error, group means.

Harness-neutral (standard library only). Every function works on the full list of per-item values that the host
harness gathers from all ranks, so results do not depend on how documents were sharded. Accuracies are percentages
(0-100) as in the papers' tables. An empty selection gives NaN ("no items"), never 0 and never an exception.

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


def mean_score(items: Iterable[Payload | None]) -> float:
    """The lmms-eval aggregation of a metric view (`adapters.samples`): the mean `score` of the rows that count
    (None = the row does not count for this metric); NaN when no row counts."""
    scores = [float(item["score"]) for item in items if item is not None]
    return math.fsum(scores) / len(scores) if scores else NAN


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
    # ties broken by correctness: the bins are a function of the items, not of the order they arrive in
    order = sorted(range(n), key=lambda i: (confidences[i], bool(correct[i])))
    n_bins = max(1, n // bin_size)
    bins = [order[b * bin_size:(b + 1) * bin_size] for b in range(n_bins - 1)]
    bins.append(order[(n_bins - 1) * bin_size:])
    if hle_compat:
        bins = bins[:-1]
    total = 0.0
    for members in bins:
        mean_conf = math.fsum(confidences[i] for i in members) / len(members)
        acc = sum(bool(correct[i]) for i in members) / len(members)
        total += len(members) / n * (mean_conf - acc) ** 2
    return 100.0 * math.sqrt(total)


def group_mean(values: Sequence[float], sizes: Sequence[int], weight_by_size: bool) -> float:
    """lmms-eval group aggregation that skips subtasks without a value (NaN), e.g. Agent-X's Goal_acc, which only
    its text-answer subtask defines; lmms-eval's own `mean` would turn the group score into NaN."""
    pairs = [(float(v), int(n)) for v, n in zip(values, sizes, strict=True)
             if isinstance(v, int | float) and not math.isnan(v)]
    if not pairs:
        return NAN
    weights = [n if weight_by_size else 1 for _, n in pairs]
    return sum(v * w for (v, _), w in zip(pairs, weights, strict=True)) / sum(weights)
