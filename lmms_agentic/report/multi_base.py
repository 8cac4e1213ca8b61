"""The multi-model report's shared state and its metric-profile section (``multi`` writes the rest).

``ReportBase`` holds the runs, their labels (``labels.unique``: never two alike) and banners (``banner``), the
markdown lines and the CSV rows; ``cell(label)`` is a run's label as a table cell, tagged ``[mini split]`` or
``[partial run]``; ``watermark`` is what every chart of the report carries when one of its runs is not a result.
``profile_section`` writes a benchmark's metric profile: each judged value with its n and judge coverage, a 95%
normal interval from the standard error clustered by item (``runs.measure``), then the metrics computed without a
judge and the format-error hint (``hints``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lmms_agentic import presets
from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.reference import ReferenceRow, load_reference
from lmms_agentic.report import figures, hints, labels
from lmms_agentic.report.banner import Banner, banner
from lmms_agentic.report.intervals import Z95
from lmms_agentic.report.judged import Coverage, coverage
from lmms_agentic.report.published import run_judge
from lmms_agentic.report.runs import Run, measure, number


def primary_task(run: Run, benchmark: str) -> str | None:
    """The task of the benchmark's default protocol: the preset's own variant, else the benchmark's task (a run
    of the plain task by a model whose preset names a variant still reports)."""
    default, table = presets.protocols(benchmark)
    for task in (presets.task_for(run.preset, benchmark, default), table[default]):
        if task in run.results["results"]:
            return task
    return None


def paper_of(run: Run, benchmark: str, judge: str | None = None) -> tuple[dict[str, float], str]:
    """metric -> the paper's value for the run's model (primary published variant), and its source."""
    names = set(run.preset.reference.get(benchmark, ())) if run.preset is not None else set()
    default, _ = presets.protocols(benchmark)
    rows = [r for r in load_reference(benchmark) if r.model in names and r.protocol == default
            and (not judge or not r.judge or r.judge == judge)]
    if not rows:
        return {}, ""
    variant = "" if any(r.variant == "" for r in rows) else rows[0].variant
    chosen: list[ReferenceRow] = [r for r in rows if r.variant == variant]
    return {r.metric: r.value for r in chosen}, chosen[0].source



class ReportBase:
    def __init__(self, runs: Sequence[Run], output: Path, n_boot: int) -> None:
        self.runs, self.output, self.n_boot = list(runs), output, n_boot
        self.labels = labels.unique([run.label for run in runs], [run.path.name for run in runs])
        self.banners: dict[str, Banner] = {label: banner(run.results)
                                           for label, run in zip(self.labels, runs, strict=True)}
        self.lines: list[str] = []
        self.csv_rows: list[dict[str, Any]] = []
        self.item_tables: dict[str, dict[str, dict[str, float]]] = {}
        self.domain_tables: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
        self.headline: dict[str, dict[str, float]] = {}
        self.charts: list[Path] = []

    def cell(self, label: str) -> str:
        """A run's label in a table: tagged when the run read a mini split or is partial."""
        return label + self.banners[label].tag

    @property
    def watermark(self) -> str | None:
        """The charts' watermark: the mini split's when a run read one, else a partial run's, else None."""
        marks = [b.watermark for b in self.banners.values() if b.watermark]
        return next((m for m in marks if m.startswith("mini")), marks[0] if marks else None)

    def benchmarks(self) -> list[str]:
        return sorted({b for run in self.runs for b in run.benchmarks()})

    def _row(self, label: str, run: Run, benchmark: str, task: str, key: str, n: int, value: float,
             low: float, high: float, paper: float | None, source: str, judged: Coverage | None = None) -> None:
        self.csv_rows.append({"model": label, "preset": run.preset.name if run.preset else "", "run": str(run.path),
                              "benchmark": benchmark, "task": task, "key": key, "n": n, "value": value,
                              "ci_low": low, "ci_high": high,
                              "judged": "" if judged is None else judged.scored,
                              "eligible": "" if judged is None else judged.eligible,
                              "coverage": "" if judged is None else judged.share,
                              "paper": "" if paper is None else paper,
                              "paper_source": source if paper is not None else ""})


    def _task_lines(self, run: Run, task: str) -> list[dict[str, Any]]:
        return [line for leaf in run.leaves(task) for line in run.lines(leaf)]

    def profile_section(self, benchmark: str) -> None:
        """The metrics a benchmark declares as its `profile` (manifest), side by side per model, each judged value
        with its n and judge coverage, then the metrics computed without a judge; a chart unless nothing was
        scored (then a note says why)."""
        declared = benchmarks.get(benchmark)
        metrics = declared.profile
        series, lines, deterministic = [], [], {}
        low: dict[str, list[str]] = {}
        tips: list[str] = []
        for label, run in zip(self.labels, self.runs, strict=True):
            task = primary_task(run, benchmark)
            if task is None:
                continue
            judge = run_judge(run) if declared.judged else None
            paper, source = paper_of(run, benchmark, judge or declared.paper_judge)
            sample_lines = self._task_lines(run, task)
            cells, texts = {}, []
            for metric in metrics:
                m = measure(run, task, metric)
                value = m.value if m is not None else math.nan
                half = Z95 * m.se if m is not None and m.se is not None else math.nan
                top = 1.0 if declared.scale == "unit" else 100.0
                ci_low, ci_high = (math.nan, math.nan) if math.isnan(value + half) else (
                    max(0.0, value - half), min(top, value + half))
                cells[metric] = (value, ci_low, ci_high)
                found = coverage(sample_lines, metric)
                self._row(label, run, benchmark, task, f"metric:{metric}", m.n if m else 0, value, ci_low, ci_high,
                          paper.get(metric), source, found)
                text = "n/a" if math.isnan(value) else f"{value:.2f}"
                text += f" n={m.n if m else 0}" + (f", {found.scored}/{found.eligible} judged" if found else "")
                if found is not None and found.low:
                    text += " ⚠"
                    low.setdefault(label, []).append(f"{metric} {100 * found.share:.0f}%")
                texts.append(text + (f" ({paper[metric]:.2f})" if metric in paper else ""))
            judge_cell = f" {judge or 'none'} |" if declared.judged else ""
            lines.append(f"| {self.cell(label)} |{judge_cell} " + " | ".join(texts) + " |")
            series.append(figures.Series(label, cells, {k: v for k, v in paper.items() if k in metrics}))
            deterministic[label] = self._unjudged(run, task, benchmark, label, sample_lines, set(metrics))
            if "format_error_rate,none" in (run.results["results"].get(task) or {}):
                tip = hints.hint(f"{task}` of `{label}", *hints.tool_key_counts(sample_lines))
                tips += [tip, ""] if tip else []
        if not lines:
            return
        scale = "0-1" if declared.scale == "unit" else "%"
        judged = f", for the run's judge or {declared.paper_judge}" if declared.judged else ""
        self.lines += [f"## {declared.title} metric profile ({scale}; n = items with a value, judged = items the "
                       f"judge scored of those the metric counts; paper values in parentheses{judged}; the CSV's and "
                       "the chart's 95% intervals: normal, from the standard error clustered by item)", ""]
        if low:
            parts = [f"{label}: " + ("no item judged (0% on every judged metric)" if all(
                m.endswith(" 0%") for m in found) else ", ".join(found))
                for label, found in low.items()]
            self.lines += ["⚠ **Low judge coverage** (under 95% of the items scored) — " + "; ".join(parts)
                           + ". Such a value averages only the scored items and may not be comparable with the "
                           "paper's; set a reachable judge and `rescore` the run.", ""]
        self.lines += ["| model |" + (" judge |" if declared.judged else "") + " " + " | ".join(metrics) + " |",
                       "|---|" + ("---|" if declared.judged else "") + "---:|" * len(metrics), *lines, ""]
        self._unjudged_table(declared.title, deterministic)
        self.lines += tips
        if all(math.isnan(cell[0]) for s in series for cell in s.cells.values()):
            self.lines += [f"No {declared.title} profile chart: no metric of the profile has a value in any run "
                           "(no judge scored an item: the judged metrics need LMMS_AGENTIC_JUDGE_PRESET or "
                           "LMMS_AGENTIC_JUDGE_BASE_URL, then `rescore`).", ""]
            return
        limits = (0.0, 1.0) if declared.scale == "unit" else (0.0, 100.0)
        chart = figures.grouped_bars(list(metrics), series, self.output / f"{benchmark}_profile.png",
                                     f"{declared.title} metric profile (95% normal intervals; ◆ paper)",
                                     f"score ({scale})", limits, self.watermark)
        self.charts.append(chart)
        self.lines += [f"![{declared.title} profile]({chart.name})", ""]

    def _unjudged(self, run: Run, task: str, benchmark: str, label: str, sample_lines: list[dict[str, Any]],
                  shown: set[str]) -> dict[str, float]:
        """The task's metrics outside the profile that no judge produces (the harness's values), into the CSV."""
        row = run.results["results"].get(task) or {}
        found: dict[str, float] = {}
        for key, value in sorted(row.items()):
            metric = key.removesuffix(",none")
            if not key.endswith(",none") or "_stderr" in key or metric in shown or number(value) is None:
                continue
            if coverage(sample_lines, metric) is not None or any(
                    isinstance(line.get(metric), dict) and "unscored_reason" in line[metric]
                    for line in sample_lines):
                continue
            m = measure(run, task, metric)
            found[metric] = float(value)
            if m is not None:
                half = Z95 * m.se if m.se is not None else math.nan
                self._row(label, run, benchmark, task, f"metric:{metric}", m.n, m.value, m.value - half,
                          m.value + half, None, "")
        return found

    def _unjudged_table(self, title: str, values: dict[str, dict[str, float]]) -> None:
        names = sorted({metric for found in values.values() for metric in found})
        if not names:
            return
        self.lines += [f"{title}: metrics computed without a judge (the harness's numbers)", "",
                       "| model | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
        self.lines += [f"| {self.cell(label)} | " + " | ".join(f"{found[m]:.2f}" if m in found else "-"
                                                               for m in names) + " |"
                       for label, found in values.items()]
        self.lines.append("")

