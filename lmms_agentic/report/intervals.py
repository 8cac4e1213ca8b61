"""The one interval every report gives a share of right answers (accuracy), so the single-run and multi-model
reports print the same interval for the same number.

Independent rows (one row per question): the 95% Wilson score interval. Rows that repeat a question (option
permutations: several rows share a ``group_id``): a percentile bootstrap resampling whole questions
(``adapters.stats.bootstrap_share_ci``), since Wilson would count each permutation as a new question. ``share_ci``
returns the interval and the method's name, which the reports' captions and chart titles print.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from lmms_agentic.adapters import stats

Z95 = 1.959963984540054
WILSON = "95% Wilson"
CLUSTERED = "95% bootstrap over questions"
CAPTION = (f"intervals: {WILSON} score interval for independent items; {CLUSTERED} (whole questions resampled) "
           "where rows repeat a question (option permutations)")
N_BOOT = 1000


def wilson(k: float, n: int) -> tuple[float, float]:
    """95% Wilson score interval of k/n, in percent; (NaN, NaN) without items."""
    if n == 0:
        return math.nan, math.nan
    p = k / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return max(0.0, 100 * (centre - half)), min(100.0, 100 * (centre + half))


def share_ci(items: Sequence[Mapping[str, Any]], key: str, n_boot: int = N_BOOT) -> tuple[float, float, str]:
    """(low, high, method) of the share of rows whose ``key`` is true, in percent (module docstring)."""
    clustered = bool(items) and all("group_id" in item for item in items) and len(
        {item["group_id"] for item in items}) < len(items)
    if clustered:
        low, high = stats.bootstrap_share_ci(items, key, "group_id", n_boot=n_boot)
        return low, high, CLUSTERED
    low, high = wilson(sum(bool(item[key]) for item in items), len(items))
    return low, high, WILSON
