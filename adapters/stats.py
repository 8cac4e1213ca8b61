"""Intervals over gathered per-sample payloads: clustered bootstrap intervals and paired model comparisons.

Every function works on the full list of payloads that lmms-eval gathers from all ranks, so results do not depend
on how documents were sharded; accuracies are percentages (0-100). `bootstrap_ci` resamples whole clusters (the rows
of one question under option permutations), and `paired_comparison` compares two models item by item (paired
bootstrap of the difference, exact McNemar test). The per-task figures themselves (accuracy, calibration error,
...) are harness-neutral and live in `adapters.core.scores`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

from lmms_agentic.adapters.core.scores import NAN, Payload, accuracy, percent


def bootstrap_ci(items: Sequence[Payload], statistic: Callable[[Sequence[Payload]], float],
                 cluster_key: str | None = None, n_boot: int = 2000, seed: int = 0,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of `statistic`, resampling whole clusters (e.g. the rows of one question
    under option permutations, `cluster_key="group_id"`) so that correlated rows are not counted as independent.
    Deterministic for a given seed; (NaN, NaN) without items."""
    if not items:
        return NAN, NAN
    clusters: dict[Any, list[Payload]] = {}
    for index, item in enumerate(items):
        clusters.setdefault(item[cluster_key] if cluster_key else index, []).append(item)
    groups = list(clusters.values())
    rng = random.Random(seed)
    values = []
    for _ in range(n_boot):
        sample = [row for _ in groups for row in groups[rng.randrange(len(groups))]]
        value = statistic(sample)
        if not math.isnan(value):
            values.append(value)
    if not values:
        return NAN, NAN
    values.sort()
    low = values[int((1 - level) / 2 * (len(values) - 1))]
    high = values[int((1 + level) / 2 * (len(values) - 1))]
    return low, high


def bootstrap_share_ci(items: Sequence[Payload], key: str = "correct", cluster_key: str | None = None,
                       n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """`bootstrap_ci` of `accuracy(items, key)` (percent), clustered like it, in O(clusters) per resample: each
    cluster is reduced once to (true rows, rows), and a resample adds those up instead of building and scanning a
    list of rows (5,000 rows x 1,000 resamples: ~1.4 s -> ~0.1 s).  The same distribution as `bootstrap_ci`, drawn
    with `random.choices`, so the digits differ from it for a given seed."""
    if not items:
        return NAN, NAN
    parts: dict[Any, list[int]] = {}
    for index, item in enumerate(items):
        part = parts.setdefault(item[cluster_key] if cluster_key else index, [0, 0])
        part[0] += bool(item[key])
        part[1] += 1
    true, total = [p[0] for p in parts.values()], [p[1] for p in parts.values()]
    rng = random.Random(seed)
    population = range(len(true))
    values = []
    for _ in range(n_boot):
        picks = rng.choices(population, k=len(true))
        rows = sum(map(total.__getitem__, picks))
        if rows:
            values.append(100 * sum(map(true.__getitem__, picks)) / rows)
    if not values:
        return NAN, NAN
    values.sort()
    return values[int((1 - level) / 2 * (len(values) - 1))], values[int((1 + level) / 2 * (len(values) - 1))]


def paired_comparison(a: Sequence[Payload], b: Sequence[Payload], key: str = "correct", id_key: str = "id",
                      cluster_key: str | None = None, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Two models on the same items: accuracy of each, the difference (b - a) with a paired (clustered)
    bootstrap 95% interval, and the exact McNemar test on the discordant items."""
    from scipy.stats import binomtest

    by_id_a = {item[id_key]: item for item in a}
    by_id_b = {item[id_key]: item for item in b}
    common = sorted(set(by_id_a) & set(by_id_b), key=str)
    pairs = [{"a": bool(by_id_a[i][key]), "b": bool(by_id_b[i][key]),
              "cluster": by_id_a[i][cluster_key] if cluster_key else i} for i in common]

    def difference(rows: Sequence[Payload]) -> float:
        return percent(sum(r["b"] for r in rows) - sum(r["a"] for r in rows), len(rows))

    only_b = sum(r["b"] and not r["a"] for r in pairs)
    only_a = sum(r["a"] and not r["b"] for r in pairs)
    p_value = binomtest(only_b, only_b + only_a).pvalue if only_a + only_b else 1.0
    return {
        "n_common": len(pairs), "only_in_a": len(by_id_a) - len(pairs), "only_in_b": len(by_id_b) - len(pairs),
        "acc_a": accuracy(pairs, "a"), "acc_b": accuracy(pairs, "b"), "diff": difference(pairs),
        "diff_ci95": bootstrap_ci(pairs, difference, "cluster", n_boot, seed),
        "b_only_correct": only_b, "a_only_correct": only_a, "mcnemar_p": float(p_value),
    }
