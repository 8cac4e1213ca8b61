"""Rank agreement between benchmarks and between domains, over the models of a multi-model report.

Input: per benchmark (or domain) a table item id -> model -> per-item score (the benchmark's headline: 100/0 for
MCQ correctness, the judged score for Agent-X). A model's score is its mean over the items every model answered.
Spearman's ρ and Kendall's τ-b between two benchmarks (or two domains) are computed over the models both cover,
with a 95% percentile bootstrap interval that resamples the items of each benchmark (domain) independently, with
replacement, and recomputes every model's score: the interval reflects which items the benchmarks happen to
contain, the models being fixed. Fewer than three common models give no correlation (n/a).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps
from tqdm import tqdm

Scores = Mapping[str, Mapping[str, float]]
"""item id -> model label -> score."""
N_BOOT = 1000


@dataclass(frozen=True)
class Correlation:
    a: str
    b: str
    models: tuple[str, ...]
    spearman: float
    spearman_ci: tuple[float, float]
    kendall: float
    kendall_ci: tuple[float, float]


def matrix(scores: Scores, models: Sequence[str]) -> np.ndarray:
    """Items x models for the items every model in ``models`` answered."""
    rows = [[table[m] for m in models] for table in scores.values() if all(m in table for m in models)]
    return np.array(rows, dtype=float).reshape(len(rows), len(models))


def model_scores(scores: Scores, models: Sequence[str]) -> dict[str, float]:
    data = matrix(scores, models)
    return {m: float(data[:, k].mean()) if len(data) else math.nan for k, m in enumerate(models)}


def _rho_tau(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan
    rho = float(np.corrcoef(sps.rankdata(x), sps.rankdata(y))[0, 1])
    tau = float(sps.kendalltau(x, y).statistic)
    return rho, tau


def _interval(values: list[float]) -> tuple[float, float]:
    finite = sorted(v for v in values if not math.isnan(v))
    if not finite:
        return math.nan, math.nan
    return finite[int(0.025 * (len(finite) - 1))], finite[int(0.975 * (len(finite) - 1))]


def correlate(tables: Mapping[str, Scores], n_boot: int = N_BOOT, seed: int = 0,
              desc: str = "rank correlations") -> list[Correlation]:
    """Spearman and Kendall correlations with bootstrap intervals for every pair of ``tables``."""
    rng = np.random.default_rng(seed)
    pairs = list(itertools.combinations(sorted(tables), 2))
    found = []
    for a, b in tqdm(pairs, desc=desc, disable=not pairs, leave=False):
        models = sorted(set.intersection(*({m for row in tables[name].values() for m in row} for name in (a, b))))
        data_a, data_b = matrix(tables[a], models), matrix(tables[b], models)
        if len(models) < 3 or not len(data_a) or not len(data_b):
            found.append(Correlation(a, b, tuple(models), math.nan, (math.nan, math.nan), math.nan,
                                     (math.nan, math.nan)))
            continue
        rho, tau = _rho_tau(data_a.mean(axis=0), data_b.mean(axis=0))
        rhos, taus = [], []
        for _ in range(n_boot):
            resample_a = data_a[rng.integers(0, len(data_a), len(data_a))].mean(axis=0)
            resample_b = data_b[rng.integers(0, len(data_b), len(data_b))].mean(axis=0)
            r, t = _rho_tau(resample_a, resample_b)
            rhos.append(r)
            taus.append(t)
        found.append(Correlation(a, b, tuple(models), rho, _interval(rhos), tau, _interval(taus)))
    return found


def ranks(values: Mapping[str, float]) -> dict[str, float]:
    """Rank 1 = best (highest); ties share their average rank; NaN scores get no rank."""
    known = {m: v for m, v in values.items() if not math.isnan(v)}
    if not known:
        return {}
    order = sps.rankdata([-v for v in known.values()], method="average")
    return {m: float(r) for m, r in zip(known, order, strict=True)}
