"""Compare a run's metrics with the published numbers of the model it ran (``reference.csv`` rows), with a
tolerance derived from both sides' sampling error, and a verdict that says when the run is too small to tell.

For each published row of the run's model (the preset's ``reference`` names) whose protocol the run executed and
whose metric the run measured (``runs.measure``):

- ``diff`` = ours − published, on the published row's scale;
- ``tolerance`` = z₀.₉₇₅ · √(SE_ours² + SE_published²) + half a unit of the published row's last printed digit:
  SE_ours is the standard error of the run's per-item values (clustered by item); SE_published is the
  binomial standard error √(p(1−p)/n) of the published value over its own item count (for a mean of scores in
  [0, 1], the largest standard error any such mean can have). Two independent estimates of the same quantity
  differ by more than this in about 5% of cases;
- verdicts: ``MISS`` when ``|diff|`` exceeds the tolerance (evidence of a real difference, at any run size);
  ``match`` when it does not and the run is precise enough to have seen a difference: its tolerance is at most
  ``CONCLUSIVE_RATIO`` (1.5) times the *reference tolerance*, the one the same comparison would have if the run
  had the published row's item count (SE_ours scaled by √(n_ours / n_published)); ``inconclusive`` otherwise:
  the run's interval holds the published value but also differences a full-size run would call a miss (in
  practice a run over fewer than about 30% of the published items, e.g. 0.0 [0.0, 60.0] at n=2 against 50.0);
- ``not comparable``: the published row counts another item set than the run scores. A benchmark declares the
  item count its released labels give a group in ``reference.csv`` (model ``dataset``, protocol ``statistics``,
  variant ``release``, metric ``count_<group>`` for the metric ``<group>_acc``); a published row over a different
  count (RoboVista's Table I domains: 62/20/76/126/46/144 against the release's 53/20/85/120/46/144) is shown
  with the reason instead of a verdict;
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
CONCLUSIVE_RATIO = 1.5
"""A run's tolerance may be at most this many times the reference tolerance (the comparison at the published
item count) for a difference within it to count as a match."""
VERDICTS = ("match", "MISS", "inconclusive")
"""The three verdicts of a compared number (the other statuses say why there is no verdict)."""
JUDGES = {"gpt-4o": "GPT-4o", "qwen3-14b": "Qwen3-14B"}
"""Judge model ids (lower case, substring) -> the judge names of reference.csv."""
RELEASE_VARIANT = "release"
"""The ``variant`` of the ``dataset`` rows that give the item count of a group in the released labels."""


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
    reference_n: int | None = None
    """Items behind the published value (the row's ``n``, else the benchmark's full size); None when unknown."""
    not_comparable: str = ""
    """Why the published row counts another item set than the run ("" when it counts the same)."""
    item_sets: str = ""
    """What the benchmark says about its groups' item sets (the release count row's notes), shown once."""

    @property
    def value(self) -> float:
        return self.ours.value * self.factor

    @property
    def diff(self) -> float:
        return self.value - self.row.value

    def _published_se(self) -> float:
        fraction = self.row.fraction
        if not self.reference_n or not 0.0 <= fraction <= 1.0:
            return 0.0
        return math.sqrt(fraction * (1.0 - fraction) / self.reference_n) * (100.0 if self.row.scale == "percent"
                                                                             else 1.0)

    def _tolerance(self, ours_se: float) -> float:
        return Z95 * math.hypot(ours_se, self._published_se()) + 0.5 * 10.0 ** (-self.row.decimals)

    @property
    def tolerance(self) -> float | None:
        if self.ours.se is None or math.isnan(self.ours.value):
            return None
        return self._tolerance(self.ours.se * self.factor)

    @property
    def reference_tolerance(self) -> float | None:
        """The tolerance this comparison would have at the published item count (None when that is unknown)."""
        if self.ours.se is None or math.isnan(self.ours.value) or not self.reference_n or self.ours.n <= 0:
            return None
        return self._tolerance(self.ours.se * self.factor * math.sqrt(self.ours.n / self.reference_n))

    @property
    def status(self) -> str:
        if math.isnan(self.ours.value):
            return "no value"
        if self.not_comparable:
            return "not comparable"
        tolerance = self.tolerance
        if tolerance is None:
            return "no interval"
        if abs(self.diff) > tolerance:
            return "MISS"
        reference = self.reference_tolerance
        if reference is not None and tolerance > CONCLUSIVE_RATIO * reference:
            return "inconclusive"
        return "match"


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


def release_counts(rows: Iterable[ReferenceRow]) -> dict[str, ReferenceRow]:
    """metric -> the ``dataset`` row giving the item count of that metric's group in the released labels
    (``count_domain_agriculture`` -> ``domain_agriculture_acc``)."""
    return {f"{row.metric.removeprefix('count_')}_acc": row for row in rows
            if row.model == "dataset" and row.variant == RELEASE_VARIANT and row.metric.startswith("count_")}


def item_set_difference(row: ReferenceRow, counts: dict[str, ReferenceRow]) -> str:
    """Why ``row`` counts another item set than a run on the released data ("" when the counts agree)."""
    release = counts.get(row.metric)
    if release is None or row.n is None or row.n == int(release.value):
        return ""
    return f"{row.source} counts {row.n} items in this group, the released labels {release.value_text}"


def compare(run: Run, preset: Any, benchmark: str, protocols: Iterable[str] | None = None) -> list[Comparison]:
    """The comparable published rows of ``preset``'s model in ``benchmark`` against ``run``."""
    names = set(preset.reference.get(benchmark, ())) if preset is not None else set()
    if not names:
        return []
    _, table = presets.protocols(benchmark)
    wanted = set(protocols) if protocols is not None else set(table)
    spec = benchmarks.get(benchmark)
    judge = run_judge(run) if spec.judged else None
    rows = load_reference(benchmark)
    counts = release_counts(rows)
    found = []
    for row in rows:
        if row.model not in names or row.protocol not in wanted or row.protocol not in table:
            continue
        if row.scale == "count" or row.metric.endswith("_delta") or (row.judge and judge and row.judge != judge):
            continue
        task = presets.task_for(preset, benchmark, row.protocol)
        ours = measure(run, task, row.metric)
        if ours is not None:
            found.append(Comparison(benchmark, row.protocol, task, row, ours, _factor(row, spec.scale),
                                    reference_n=row.n or spec.expected_rows,
                                    not_comparable=item_set_difference(row, counts),
                                    item_sets=counts[row.metric].notes if row.metric in counts else ""))
    return found


def _number(value: float, decimals: int) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{decimals}f}"


def table(comparisons: Iterable[Comparison], title: str = "") -> str:
    """The comparison as a markdown table (one line per published number), then why rows are not comparable."""
    comparisons = list(comparisons)
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
    reasons = notes(comparisons)
    return "\n".join(lines + (["", *reasons] if reasons else []))


def notes(comparisons: Iterable[Comparison]) -> list[str]:
    """One line per published row without a verdict because it counts another item set, with the reason, then
    the benchmark's note on its item sets (once)."""
    rows = [c for c in comparisons if c.status == "not comparable"]
    lines = [f"- not comparable: {c.row.model} ({c.row.source}) {c.row.metric}: {c.not_comparable}" for c in rows]
    explanations = dict.fromkeys(c.item_sets for c in rows if c.item_sets)
    return lines + [f"  ({text})" for text in explanations]


def counts(comparisons: Iterable[Comparison]) -> dict[str, int]:
    """How many comparisons have each status (the three verdicts always present, others when they occur)."""
    found: dict[str, int] = dict.fromkeys(VERDICTS, 0)
    for c in comparisons:
        found[c.status] = found.get(c.status, 0) + 1
    return found


def headline(comparisons: Iterable[Comparison]) -> str:
    """The tally line: the three verdicts, then the rows without a verdict and why."""
    found = counts(comparisons)
    verdicts = sum(found[v] for v in VERDICTS)
    text = f"{found['match']} match, {found['MISS']} MISS, {found['inconclusive']} inconclusive (of {verdicts} " \
           "with a verdict)"
    others = [f"{n} {status}" for status, n in sorted(found.items()) if status not in VERDICTS]
    return text + (f"; {', '.join(others)}" if others else "")
