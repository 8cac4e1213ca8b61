"""Compare a run's metrics with the published numbers of the model it ran (``reference.csv`` rows), with a
tolerance derived from both sides' sampling error.

For each published row of the run's model (the preset's ``reference`` names) whose protocol the run executed and
whose metric the run measured (``runs.measure``):

- ``diff`` = ours − published, on the published row's scale;
- ``tolerance`` = z₀.₉₇₅ · √(SE_ours² + SE_published²) + half a unit of the published row's last printed digit:
  SE_ours is the standard error of the run's per-item values (clustered by item); SE_published is the
  binomial standard error √(p(1−p)/n) of the published value over its own item count (for a mean of scores in
  [0, 1], the largest standard error any such mean can have). Two independent estimates of the same quantity
  differ by more than this in about 5% of cases, so a ``miss`` is evidence of a real difference, a ``match`` only
  that the data cannot tell them apart;
- ``no value``: the run has no number (e.g. judged Agent-X metrics without a judge); ``no interval``: the metric
  has no per-item values (calibration error), so only the difference is shown.

Rows not compared: other protocols than the run's, differences between protocols (``*_delta``), counts, metrics
the run does not measure, and, for judged metrics, rows of another judge than the run's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from lmms_agentic import presets
from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.reference import ReferenceRow, load_reference
from lmms_agentic.report.runs import Measure, Run, measure

Z95 = NormalDist().inv_cdf(0.975)
JUDGES = {"gpt-4o": "GPT-4o", "qwen3-14b": "Qwen3-14B"}
"""Judge model ids (lower case, substring) -> the judge names of reference.csv."""


@dataclass(frozen=True)
class Comparison:
    """One published number next to the run's."""

    benchmark: str
    protocol: str
    task: str
    row: ReferenceRow
    ours: Measure
    factor: float
    """Multiplies our value onto the published row's scale (100 between a unit metric and a percent row)."""

    @property
    def value(self) -> float:
        return self.ours.value * self.factor

    @property
    def diff(self) -> float:
        return self.value - self.row.value

    @property
    def tolerance(self) -> float | None:
        if self.ours.se is None or math.isnan(self.ours.value):
            return None
        ours = self.ours.se * self.factor
        published = 0.0
        fraction = self.row.fraction
        if self.row.n and 0.0 <= fraction <= 1.0:
            published = math.sqrt(fraction * (1.0 - fraction) / self.row.n) * (100.0 if self.row.scale == "percent"
                                                                                  else 1.0)
        return Z95 * math.hypot(ours, published) + 0.5 * 10.0 ** (-self.row.decimals)

    @property
    def status(self) -> str:
        if math.isnan(self.ours.value):
            return "no value"
        tolerance = self.tolerance
        if tolerance is None:
            return "no interval"
        return "match" if abs(self.diff) <= tolerance else "MISS"


def run_judge(run: Run) -> str | None:
    """The judge behind the run's judged metrics, as reference.csv names it (None when nothing was judged)."""
    for task in run.results["results"]:
        for line in run.lines(task):
            for value in line.values():
                judge = value.get("judge") if isinstance(value, dict) else None
                for result in (judge.values() if isinstance(judge, dict) else ()):
                    model = isinstance(result, dict) and (result.get("judge_model") or "")
                    if model:
                        lowered = str(model).lower()
                        return next((name for key, name in JUDGES.items() if key in lowered), str(model))
    return None


def _factor(row: ReferenceRow, scale: str) -> float:
    if row.scale == "percent" and scale == "unit":
        return 100.0
    if row.scale == "unit" and scale == "percent":
        return 0.01
    return 1.0


def compare(run: Run, preset: Any, benchmark: str, protocols: Iterable[str] | None = None) -> list[Comparison]:
    """The comparable published rows of ``preset``'s model in ``benchmark`` against ``run``."""
    names = set(preset.reference.get(benchmark, ())) if preset is not None else set()
    if not names:
        return []
    _, table = presets.protocols(benchmark)
    wanted = set(protocols) if protocols is not None else set(table)
    scale = benchmarks.get(benchmark).scale
    judge = run_judge(run) if benchmarks.get(benchmark).judged else None
    found = []
    for row in load_reference(benchmark):
        if row.model not in names or row.protocol not in wanted or row.protocol not in table:
            continue
        if row.scale == "count" or row.metric.endswith("_delta") or (row.judge and judge and row.judge != judge):
            continue
        task = presets.task_for(preset, benchmark, row.protocol)
        ours = measure(run, task, row.metric)
        if ours is not None:
            found.append(Comparison(benchmark, row.protocol, task, row, ours, _factor(row, scale)))
    return found


def _number(value: float, decimals: int) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{decimals}f}"


def table(comparisons: Iterable[Comparison], title: str = "") -> str:
    """The comparison as a markdown table (one line per published number)."""
    lines = [title, ""] if title else []
    lines += ["| benchmark | protocol | task | published row | metric | paper | ours [95% CI] | diff | tolerance "
              "| verdict |", "|---|---|---|---|---|---:|---:|---:|---:|---|"]
    count = 0
    for c in comparisons:
        count += 1
        digits = max(c.row.decimals, 1)
        interval = ""
        if c.ours.se is not None and not math.isnan(c.value):
            half = Z95 * c.ours.se * c.factor
            top = 100.0 if c.row.scale == "percent" else 1.0
            low, high = max(0.0, c.value - half), min(top, c.value + half)
            interval = f" [{_number(low, digits)}, {_number(high, digits)}]"
        where = f"{c.row.model} ({c.row.source}{', judge ' + c.row.judge if c.row.judge else ''})"
        tolerance = c.tolerance
        lines.append(f"| {c.benchmark} | {c.protocol} | {c.task} | {where} | {c.row.metric} | {c.row.value_text} | "
                     f"{_number(c.value, digits)}{interval} (n={c.ours.n}) | "
                     f"{'n/a' if math.isnan(c.value) else f'{c.diff:+.{digits}f}'} | "
                     f"{'-' if tolerance is None else f'±{tolerance:.{digits}f}'} | {c.status} |")
    if not count:
        lines.append("| (no published number of this model is comparable with this run) | | | | | | | | | |")
    return "\n".join(lines)


def counts(comparisons: Iterable[Comparison]) -> dict[str, int]:
    """How many comparisons have each verdict."""
    found: dict[str, int] = {}
    for c in comparisons:
        found[c.status] = found.get(c.status, 0) + 1
    return found
