"""Multi-model report: several runs (one model each, lmms-eval's or lm-eval's) side by side, as markdown, CSV, PNG.

``write_multi_report([RUN_DIR, ...], output)`` writes into ``output``:

- ``report.md``: each run's harness, versions, partial-run warning and folder notes (``caveats``); per benchmark,
  each model's accuracy overall and per domain with 95% Wilson intervals and the paper's number for that model; a
  ranking table (each benchmark's headline, the harness's number, and the rank); Spearman and Kendall rank
  correlations between benchmarks and between the domains of each benchmark, with bootstrap intervals
  (``ranking``); the option-permutation robustness of every permuted variant; the Agent-X metric profile with the
  paper's values for the run's judge, every judged value with its n and judge coverage (a caveat under 95%), then
  the metrics computed without a judge;
- ``scores.csv`` (one row per model, benchmark and domain or metric; ``judged``, ``eligible`` and ``coverage`` for
  judged metrics) and ``correlations.csv`` (only with correlations to write: fewer than 3 models give none, and the
  report says so);
- ``<benchmark>_domains.png`` and ``<benchmark>_profile.png`` for benchmarks that declare a metric profile
  (``figures``); no profile chart when no metric has a value (no judge), with a line saying why.

A model's benchmark data come from the task that runs the benchmark's default protocol for its preset
(``presets.task_for``; the benchmark's own task when the run has not the preset's variant), e.g. ``robovista`` for
RoboVista's Table I, and from its logged samples. The paper's
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
from lmms_agentic.report import caveats, figures, ranking
from lmms_agentic.report.judged import Coverage, coverage
from lmms_agentic.report.published import run_judge
from lmms_agentic.report.run_files import ReportInputError
from lmms_agentic.report.runs import Run, item_scores, load_run, measure, number
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
    """The task of the benchmark's default protocol: the preset's own variant, else the benchmark's task (a run
    of the plain task by a model whose preset names a variant still reports)."""
    default, table = presets.protocols(benchmark)
    for task in (presets.task_for(run.preset, benchmark, default), table[default]):
        if task in run.results["results"]:
            return task
    return None


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
             low: float, high: float, paper: float | None, source: str, judged: Coverage | None = None) -> None:
        self.csv_rows.append({"model": label, "preset": run.preset.name if run.preset else "", "run": str(run.path),
                              "benchmark": benchmark, "task": task, "key": key, "n": n, "value": value,
                              "ci_low": low, "ci_high": high,
                              "judged": "" if judged is None else judged.scored,
                              "eligible": "" if judged is None else judged.eligible,
                              "coverage": "" if judged is None else judged.share,
                              "paper": "" if paper is None else paper,
                              "paper_source": source if paper is not None else ""})

    def mcq_section(self, benchmark: str) -> None:
        bench = benchmarks.get(benchmark)
        series: list[figures.Series] = []
        domains: set[str] = set()
        table: list[tuple[str, dict[str, tuple[float, float, float, int]], dict[str, float]]] = []
        for label, run in zip(self.labels, self.runs, strict=True):
            task = _primary_task(run, benchmark)
            found = collect(run.files or run.results_file)[1] if task else []
            variant = next((v for v in found if v.name == task), None)
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
        self.lines += ["## Ranking (each benchmark's headline, the harness's number; rank 1 = best)", "",
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
            for v in collect(run.files or run.results_file)[1]:
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
        for label, run in zip(self.labels, self.runs, strict=True):
            task = _primary_task(run, benchmark)
            if task is None:
                continue
            judge = run_judge(run) if declared.judged else None
            paper, source = _paper(run, benchmark, judge or declared.paper_judge)
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
            lines.append(f"| {label} |{judge_cell} " + " | ".join(texts) + " |")
            series.append(figures.Series(label, cells, {k: v for k, v in paper.items() if k in metrics}))
            deterministic[label] = self._unjudged(run, task, benchmark, label, sample_lines, set(metrics))
        if not lines:
            return
        scale = "0-1" if declared.scale == "unit" else "%"
        judged = f", for the run's judge or {declared.paper_judge}" if declared.judged else ""
        self.lines += [f"## {declared.title} metric profile ({scale}; n = items with a value, judged = items the "
                       f"judge scored of those the metric counts; paper values in parentheses{judged})", ""]
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
        if all(math.isnan(cell[0]) for s in series for cell in s.cells.values()):
            self.lines += [f"No {declared.title} profile chart: no metric of the profile has a value in any run "
                           "(no judge scored an item: the judged metrics need LMMS_AGENTIC_JUDGE_PRESET or "
                           "LMMS_AGENTIC_JUDGE_BASE_URL, then `rescore`).", ""]
            return
        limits = (0.0, 1.0) if declared.scale == "unit" else (0.0, 100.0)
        chart = figures.grouped_bars(list(metrics), series, self.output / f"{benchmark}_profile.png",
                                     f"{declared.title} metric profile (◆ paper)", f"score ({scale})", limits)
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
        self.lines += [f"| {label} | " + " | ".join(f"{found[m]:.2f}" if m in found else "-" for m in names) + " |"
                       for label, found in values.items()]
        self.lines.append("")


def write_multi_report(folders: Sequence[Path], output: Path | None = None, n_boot: int = ranking.N_BOOT
                       ) -> tuple[Path, str]:
    """Write the multi-model report for the runs in ``folders``; returns (markdown path, text)."""
    runs = [load_run(Path(folder)) for folder in folders]
    if output is None:
        common = Path(os.path.commonpath([str(r.path.resolve()) for r in runs]))
        output = (common if common.is_dir() else common.parent) / "multi_report"
    try:
        output.mkdir(parents=True, exist_ok=True)
        return _write(runs, output, n_boot)
    except OSError as exc:
        raise ReportInputError(f"{exc.filename or output}: cannot write the report ({exc.strerror or exc}); pass "
                               "--output to a writable folder") from exc


def _write(runs: list[Run], output: Path, n_boot: int) -> tuple[Path, str]:
    report = _Report(runs, output, n_boot)
    report.correlation_rows = []
    smoke = [label for label, run in zip(report.labels, runs, strict=True)
             if run.preset is not None and run.preset.kind in ("smoke", "baseline")]
    report.lines += ["# lmms-agentic multi-model report", ""]
    for label, run in zip(report.labels, runs, strict=True):
        config = run.config
        report.lines.append(f"- **{label}**: `{run.results_file}` (`{config.get('model')}` "
                            f"`{config.get('model_args') or ''}`)")
        report.lines += [f"  {line}" for line in caveats.header_lines(run.results, run.notes, run.manifest)]
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
    if not report.correlation_rows:
        report.lines += ["No `correlations.csv`: rank correlations need at least 3 models with values on the same "
                         f"benchmarks or domains ({len(runs)} run(s) given).", ""]
    text = "\n".join(report.lines) + "\n"
    target = output / "report.md"
    target.write_text(text, encoding="utf-8")
    _csv(output / "scores.csv", report.csv_rows)
    _csv(output / "correlations.csv", report.correlation_rows)
    return target, text


def _csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write ``rows``; with none, no file (a stale one from an earlier report is removed): the report says why."""
    if not rows:
        path.unlink(missing_ok=True)
        return
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
