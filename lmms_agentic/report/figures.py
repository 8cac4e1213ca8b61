"""PNG figures of the multi-model report (matplotlib, Agg backend; imported only when a report is written).

``grouped_bars`` draws one bar per model side by side at each x position with its 95% interval and the paper's
number for that model as a black diamond on its bar; a zero value is drawn as a coloured line at the axis with a
"0" label, a missing one as "n/a", so neither is mistaken for the other or for an absent bar. A bar whose interval
is unknown (NaN) gets no error bar (not a zero-width one) and a note under the chart says how many; a chart of a
mini-split or partial run carries its ``watermark`` diagonally across it. The report uses it
for each benchmark's domains (x = "all" and the domains) and for a benchmark's metric profile (x = the metrics its
manifest lists under `profile`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Cell = tuple[float, float, float]
"""(value, low, high); NaN when missing."""


@dataclass(frozen=True)
class Series:
    """One model's bars: value and interval per x position, and the paper's value per x position (if any)."""

    label: str
    cells: Mapping[str, Cell]
    paper: Mapping[str, float]


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _error_bars(ax: Any, xs: Sequence[float], values: Sequence[Cell]) -> int:
    """Error bars for the cells with a value and a finite interval; returns how many valued cells have none."""
    known = [(x, v) for x, v in zip(xs, values, strict=True) if not any(math.isnan(c) for c in v)]
    if known:
        ax.errorbar([x for x, _ in known], [v[0] for _, v in known], fmt="none", ecolor="black", capsize=2,
                    elinewidth=0.8, yerr=[[max(0.0, v[0] - v[1]) for _, v in known],
                                          [max(0.0, v[2] - v[0]) for _, v in known]])
    return sum(1 for v in values if not math.isnan(v[0])) - len(known)


def grouped_bars(groups: Sequence[str], series: Sequence[Series], target: Path, title: str, ylabel: str,
                 ylim: tuple[float, float], watermark: str | None = None) -> Path:
    """Bars per group (x) and series (side by side) with error bars and paper markers; saved to ``target``."""
    plt = _plt()
    width = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(groups) * max(1, len(series)) + 3), 4.2))
    marked = False
    no_interval = 0
    for k, s in enumerate(series):
        xs = [x + (k - (len(series) - 1) / 2) * width for x in range(len(groups))]
        values = [s.cells.get(g, (math.nan, math.nan, math.nan)) for g in groups]
        heights = [0.0 if math.isnan(v[0]) else v[0] for v in values]
        bars = ax.bar(xs, heights, width, label=s.label)
        no_interval += _error_bars(ax, xs, values)
        span = ylim[1] - ylim[0]
        for x, v, bar in zip(xs, values, bars, strict=True):
            if math.isnan(v[0]):
                ax.text(x, ylim[0] + 0.01 * span, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)
            elif v[0] <= ylim[0] + 0.005 * span:  # a zero bar has no height: mark it so it is not read as missing
                ax.plot([x - width / 2, x + width / 2], [ylim[0] + 0.004 * span] * 2, color=bar.get_facecolor(),
                        linewidth=2.5, solid_capstyle="butt")
                ax.text(x, ylim[0] + 0.012 * span, "0", ha="center", va="bottom", fontsize=6)
        paper = [(x, s.paper[g]) for x, g in zip(xs, groups, strict=True) if g in s.paper]
        if paper:
            ax.scatter([p[0] for p in paper], [p[1] for p in paper], marker="D", s=18, color="black", zorder=3,
                       label=None if marked else "paper")
            marked = True
    ax.set_xticks(list(range(len(groups))))
    ax.set_xticklabels([g.replace("_", "\n") for g in groups], fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_ylim(*ylim)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title(title, fontsize=10)
    if no_interval:
        ax.set_xlabel(f"no error bar on {no_interval} bar(s): no interval could be computed", fontsize=7)
    if watermark:
        fig.text(0.5, 0.5, watermark.upper(), fontsize=26, color="red", alpha=0.28, rotation=25, ha="center",
                 va="center", weight="bold", zorder=10)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target
