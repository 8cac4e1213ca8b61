"""Multi-model report: several lmms-eval runs (one model each) side by side, as markdown, CSV and PNG.

``write_multi_report([RUN_DIR, ...], output)`` writes into ``output``:

- ``report.md``: per benchmark, each model's accuracy overall and per domain with 95% Wilson intervals and the
  paper's number for that model; a ranking table (each benchmark's headline, lmms-eval's number, and the rank);
  Spearman and Kendall rank correlations between benchmarks and between the domains of each benchmark, with
  bootstrap intervals (``ranking``); the option-permutation robustness of every permuted variant; the Agent-X
  metric profile with the paper's values for the run's judge;
- ``scores.csv`` (one row per model, benchmark and domain or metric) and ``correlations.csv``;
- ``<benchmark>_domains.png`` and ``<benchmark>_profile.png`` for benchmarks that declare a metric profile
  (``figures``).

A model's benchmark data come from the task that runs the benchmark's default protocol for its preset
(``presets.task_for``), e.g. ``robovista`` for RoboVista's Table I, and from its logged samples. The paper's
numbers are the preset's primary published row (an empty ``variant``; else the first variant published).
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lmms_agentic import presets
from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.reference import ReferenceRow, load_reference
from lmms_agentic.report import figures, ranking
from lmms_agentic.report.published import run_judge
from lmms_agentic.report.runs import Run, item_scores, load_run, measure
from lmms_agentic.report.single import EXCLUDED_FROM_BREAKDOWNS, collect, permutation_row

Z95 = 1.959963984540054


def wilson(k: float, n: int) -> tuple[float, float]:
    """95% Wilson score interval of k/n, in percent."""
    if n == 0:
        return math.nan, math.nan
    p = k / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return max(0.0, 100 * (centre - half)), min(100.0, 100 * (centre + half))


def _primary_task(run: Run, benchmark: str) -> str | None:
    default, _ = presets.protocols(benchmark)
    task = presets.task_for(run.preset, benchmark, default)
    return task if task in run.results["results"] else None


def _paper(run: Run, benchmark: str, judge: str | None = None) -> tuple[dict[str, float], str]:
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


def _labels(runs: Sequence[Run]) -> list[str]:
    labels = [run.label for run in runs]
    return [label if labels.count(label) == 1 else f"{label} ({run.path.name})" for label, run in zip(
        labels, runs, strict=True)]


class _Report:
    def __init__(self, runs: Sequence[Run], output: Path, n_boot: int) -> None:
        self.runs, self.labels, self.output, self.n_boot = list(runs), _labels(runs), output, n_boot
        self.lines: list[str] = []
        self.csv_rows: list[dict[str, Any]] = []
        self.item_tables: dict[str, dict[str, dict[str, float]]] = {}
        self.domain_tables: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
        self.headline: dict[str, dict[str, float]] = {}
        self.charts: list[Path] = []

    def benchmarks(self) -> list[str]:
        return sorted({b for run in self.runs for b in run.benchmarks()})

    def _row(self, label: str, run: Run, benchmark: str, task: str, key: str, n: int, value: float,
             low: float, high: float, paper: float | None, source: str) -> None:
        self.csv_rows.append({"model": label, "preset": run.preset.name if run.preset else "", "run": str(run.path),
                              "benchmark": benchmark, "task": task, "key": key, "n": n, "value": value,
                              "ci_low": low, "ci_high": high, "paper": "" if paper is None else paper,
                              "paper_source": source if paper is not None else ""})

    def mcq_section(self, benchmark: str) -> None:
        bench = benchmarks.get(benchmark)
        series: list[figures.Series] = []
        domains: set[str] = set()
        table: list[tuple[str, dict[str, tuple[float, float, float, int]], dict[str, float]]] = []
        for label, run in zip(self.labels, self.runs, strict=True):
            task = _primary_task(run, benchmark)
            variant = next((v for v in collect(run.results_file)[1] if v.name == task), None) if task else None
            if task is None or variant is None:
                continue
            field = variant.correct_field
            cells: dict[str, tuple[float, float, float, int]] = {}
            groups: dict[str, list[bool]] = {"all": [bool(i[field]) for i in variant.items]}
            for item in variant.items:
                if str(item["domain"]) != EXCLUDED_FROM_BREAKDOWNS:
                    groups.setdefault(str(item["domain"]), []).append(bool(item[field]))
                    self.domain_tables.setdefault(benchmark, {}).setdefault(str(item["domain"]), {}).setdefault(
                        str(item["id"]), {})[label] = 100.0 * bool(item[field])
            for key, values in groups.items():
                low, high = wilson(sum(values), len(values))
                cells[key] = (100.0 * sum(values) / len(values), low, high, len(values))
            domains |= set(groups) - {"all"}
            paper, source = _paper(run, benchmark)
            marks = {"all": paper[bench.headline_metric]} if bench.headline_metric in paper else {}
            marks |= {d: paper[f"domain_{d}_acc"] for d in groups if f"domain_{d}_acc" in paper}
            for key, (value, low, high, n) in cells.items():
                self._row(label, run, benchmark, task, "all" if key == "all" else f"domain:{key}", n, value, low,
                          high, marks.get(key), source)
            table.append((label, cells, marks))
            series.append(figures.Series(label, {k: v[:3] for k, v in cells.items()}, marks))
        if not table:
            return
        columns = ["all", *sorted(domains)]
        self.lines += [f"### {bench.title} (`{benchmark}`)", "",
                       "| model | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
        for label, cells, marks in table:
            parts = []
            for key in columns:
                if key not in cells:
                    parts.append("-")
                    continue
                value, low, high, n = cells[key]
                paper_text = f" (paper {marks[key]:.1f})" if key in marks else ""
                parts.append(f"{value:.1f} [{low:.1f}, {high:.1f}] n={n}{paper_text}")
            self.lines.append(f"| {label} | " + " | ".join(parts) + " |")
        chart = figures.grouped_bars(columns, series, self.output / f"{benchmark}_domains.png",
                                     f"{bench.title}: accuracy per domain (95% Wilson intervals; ◆ paper)",
                                     "accuracy (%)", (0.0, 100.0))
        self.charts.append(chart)
        self.lines += ["", f"![{benchmark} per domain]({chart.name})", ""]

    def item_table(self, benchmark: str) -> None:
        bench = benchmarks.get(benchmark)
        for label, run in zip(self.labels, self.runs, strict=True):
            task = _primary_task(run, benchmark)
            if task is None:
                continue
            found = measure(run, task, bench.headline_metric)
            if found is not None:
                self.headline.setdefault(benchmark, {})[label] = found.value
            for item, score in item_scores(run, task, bench.headline_metric).items():
                self.item_tables.setdefault(benchmark, {}).setdefault(item, {})[label] = score

    def ranking_section(self) -> None:
        names = sorted(self.headline)
        if not names:
            return
        rank = {b: ranking.ranks(self.headline[b]) for b in names}
        self.lines += ["## Ranking (each benchmark's headline, lmms-eval's number; rank 1 = best)", "",
                       "| model | " + " | ".join(names) + " | mean rank |", "|---|" + "---:|" * (len(names) + 1)]
        for label in self.labels:
            cells, ranks = [], []
            for b in names:
                value = self.headline[b].get(label, math.nan)
                scale = benchmarks.get(b).scale
                cells.append("-" if math.isnan(value) else
                             f"{value:.1f}" if scale == "percent" else f"{value:.2f}")
                if label in rank[b]:
                    cells[-1] += f" ({rank[b][label]:g})"
                    ranks.append(rank[b][label])
            mean = f"{sum(ranks) / len(ranks):.2f}" if ranks else "-"
            self.lines.append(f"| {label} | " + " | ".join(cells) + f" | {mean} |")
        self.lines.append("")
        between = ranking.correlate(self.item_tables, self.n_boot, desc="benchmark correlations")
        self._correlations("Rank correlation between benchmarks", "benchmarks", "", between)
        for benchmark, tables in sorted(self.domain_tables.items()):
            found = ranking.correlate(tables, self.n_boot, desc=f"{benchmark} domain correlations")
            self._correlations(f"Rank correlation between domains: {benchmark}", "domains", benchmark, found)

    def _correlations(self, title: str, kind: str, benchmark: str, found: list[ranking.Correlation]) -> None:
        if not found:
            return
        if all(len(c.models) < 3 for c in found):
            self.lines += [f"### {title}", "", f"n/a: rank correlations need at least 3 models ({len(found)} pairs).",
                           ""]
            return
        self.lines += [f"### {title} (bootstrap 95% intervals over items)", "",
                       "| a | b | models | Spearman ρ [95% CI] | Kendall τ [95% CI] |", "|---|---|---:|---:|---:|"]
        for c in found:
            if len(c.models) < 3:
                rho = tau = "n/a (needs 3 models)"
            else:
                rho = f"{c.spearman:.2f} [{c.spearman_ci[0]:.2f}, {c.spearman_ci[1]:.2f}]"
                tau = f"{c.kendall:.2f} [{c.kendall_ci[0]:.2f}, {c.kendall_ci[1]:.2f}]"
            self.lines.append(f"| {c.a} | {c.b} | {len(c.models)} | {rho} | {tau} |")
            self.correlation_rows.append({"kind": kind, "benchmark": benchmark, "a": c.a, "b": c.b,
                                          "models": len(c.models), "spearman": c.spearman,
                                          "spearman_low": c.spearman_ci[0], "spearman_high": c.spearman_ci[1],
                                          "kendall": c.kendall, "kendall_low": c.kendall_ci[0],
                                          "kendall_high": c.kendall_ci[1]})
        self.lines.append("")

    correlation_rows: list[dict[str, Any]]

    def permutation_section(self) -> None:
        rows = []
        for label, run in zip(self.labels, self.runs, strict=True):
            for v in collect(run.results_file)[1]:
                if v.permuted:
                    r = permutation_row(v.items)
                    rows.append(f"| {label} | {v.name} | {len({i['group_id'] for i in v.items})} | "
                                f"{r['orig_acc']:.1f} | {r['perm_mean_acc']:.1f} ± {r['perm_std_acc']:.1f} | "
                                f"{r['circular_acc']:.1f} | {r['consistency']:.1f} | {r['flip_rate']:.1f} |")
        self.lines += ["## Option-permutation robustness", ""]
        if not rows:
            self.lines += ["No run evaluated a permutation variant (`<task>_circular`, `<task>_perm5`).", ""]
            return
        self.lines += ["| model | variant | questions | orig acc | perm mean ± std | circular acc | consistency "
                       "| flip rate |", "|---|---|---:|---:|---:|---:|---:|---:|", *rows, ""]

    def profile_section(self, benchmark: str) -> None:
        """The metrics a benchmark declares as its `profile` (manifest), side by side per model, with a chart."""
        declared = benchmarks.get(benchmark)
        metrics = declared.profile
        series, lines = [], []
        for label, run in zip(self.labels, self.runs, strict=True):
            task = _primary_task(run, benchmark)
            if task is None:
                continue
            judge = run_judge(run) if declared.judged else None
            paper, source = _paper(run, benchmark, judge or declared.paper_judge)
            cells, texts = {}, []
            for metric in metrics:
                m = measure(run, task, metric)
                value = m.value if m is not None else math.nan
                half = Z95 * m.se if m is not None and m.se is not None else math.nan
                cells[metric] = (value, value - half, value + half)
                self._row(label, run, benchmark, task, f"metric:{metric}", m.n if m else 0, value, value - half,
                          value + half, paper.get(metric), source)
                texts.append(("n/a" if math.isnan(value) else f"{value:.2f}")
                             + (f" ({paper[metric]:.2f})" if metric in paper else ""))
            judge_cell = f" {judge or 'none'} |" if declared.judged else ""
            lines.append(f"| {label} |{judge_cell} " + " | ".join(texts) + " |")
            series.append(figures.Series(label, cells, {k: v for k, v in paper.items() if k in metrics}))
        if not lines:
            return
        scale = "0-1" if declared.scale == "unit" else "%"
        judged = f", for the run's judge or {declared.paper_judge}" if declared.judged else ""
        self.lines += [f"## {declared.title} metric profile ({scale}; paper values in parentheses{judged})", "",
                       "| model |" + (" judge |" if declared.judged else "") + " " + " | ".join(metrics) + " |",
                       "|---|" + ("---|" if declared.judged else "") + "---:|" * len(metrics), *lines, ""]
        limits = (0.0, 1.0) if declared.scale == "unit" else (0.0, 100.0)
        chart = figures.grouped_bars(list(metrics), series, self.output / f"{benchmark}_profile.png",
                                     f"{declared.title} metric profile (◆ paper)", f"score ({scale})", limits)
        self.charts.append(chart)
        self.lines += [f"![{declared.title} profile]({chart.name})", ""]


def write_multi_report(folders: Sequence[Path], output: Path | None = None, n_boot: int = ranking.N_BOOT
                       ) -> tuple[Path, str]:
    """Write the multi-model report for the runs in ``folders``; returns (markdown path, text)."""
    runs = [load_run(Path(folder)) for folder in folders]
    if output is None:
        common = Path(os.path.commonpath([str(r.path.resolve()) for r in runs]))
        output = (common if common.is_dir() else common.parent) / "multi_report"
    output.mkdir(parents=True, exist_ok=True)
    report = _Report(runs, output, n_boot)
    report.correlation_rows = []
    smoke = [label for label, run in zip(report.labels, runs, strict=True)
             if run.preset is not None and run.preset.kind in ("smoke", "baseline")]
    report.lines += ["# lmms-agentic multi-model report", ""]
    for label, run in zip(report.labels, runs, strict=True):
        config = run.config
        report.lines.append(f"- **{label}**: `{run.results_file}` (`{config.get('model')}` "
                            f"`{config.get('model_args') or ''}`)")
    if smoke:
        report.lines.append(f"- **smoke-test / baseline models** ({', '.join(smoke)}): their numbers check the "
                            "plumbing, they are not model scores.")
    report.lines += ["", "## Accuracy per domain (%, 95% Wilson intervals; paper numbers in parentheses)", ""]
    for benchmark in report.benchmarks():
        if benchmarks.get(benchmark).mcq:
            report.mcq_section(benchmark)
        report.item_table(benchmark)
    report.ranking_section()
    report.permutation_section()
    for benchmark in report.benchmarks():
        if benchmarks.get(benchmark).profile:
            report.profile_section(benchmark)
    text = "\n".join(report.lines) + "\n"
    target = output / "report.md"
    target.write_text(text, encoding="utf-8")
    _csv(output / "scores.csv", report.csv_rows)
    _csv(output / "correlations.csv", report.correlation_rows)
    return target, text


def _csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        if not rows:
            return
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
