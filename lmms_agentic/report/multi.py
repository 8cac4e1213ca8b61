"""Multi-model report: several runs (one model each, lmms-eval's or lm-eval's) side by side, as markdown, CSV, PNG.

``write_multi_report([RUN_DIR, ...], output)`` writes into ``output``:

- ``report.md``: first the banner of every run that read a mini split or is partial (``banner``; such runs are
  tagged in every table and the charts watermarked), then each run's label (``labels``), harness, versions,
  partial-run warning and folder notes (``caveats``); per benchmark, each model's accuracy overall and per domain
  with the 95% interval of ``intervals`` (the single-run report's) and the paper's number for that model; a
  ranking table (each benchmark's headline, the harness's number, and the rank); Spearman and Kendall rank
  correlations between benchmarks and between the domains of each benchmark, with bootstrap intervals
  (``ranking``); the option-permutation robustness of every permuted variant; the Agent-X metric profile with the
  paper's values for the run's judge, every judged value with its n and judge coverage (a caveat under 95%), then
  the metrics computed without a judge and the format-error hint (``hints``);
- ``scores.csv`` (one row per model, benchmark and domain or metric; ``judged``, ``eligible`` and ``coverage`` for
  judged metrics) and ``correlations.csv`` (only with correlations to write: fewer than 3 models give none, and the
  report says so);
- ``<benchmark>_domains.png`` and ``<benchmark>_profile.png`` for benchmarks that declare a metric profile
  (``figures``); no profile chart when no metric has a value (no judge), with a line saying why.

A model's benchmark data come from the task that runs the benchmark's default protocol for its preset
(``presets.task_for``; the benchmark's own task when the run has not the preset's variant), e.g. ``robovista`` for
RoboVista's Table I, and from its logged samples. The paper's
numbers are the preset's primary published row (an empty ``variant``; else the first variant published).

An ``output`` folder that already holds a report is left as it is: the report goes to ``<output>-2`` (``-3``, ...),
and says so.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lmms_agentic.adapters import benchmarks
from lmms_agentic.report import caveats, figures, intervals, ranking
from lmms_agentic.report.multi_base import ReportBase, paper_of, primary_task
from lmms_agentic.report.run_files import ReportInputError
from lmms_agentic.report.runs import Run, item_scores, load_run, measure
from lmms_agentic.report.single import EXCLUDED_FROM_BREAKDOWNS, collect, permutation_row

REPORT = "report.md"


class _Report(ReportBase):
    def mcq_section(self, benchmark: str) -> None:
        bench = benchmarks.get(benchmark)
        series: list[figures.Series] = []
        domains: set[str] = set()
        table: list[tuple[str, dict[str, tuple[float, float, float, int]], dict[str, float]]] = []
        for label, run in zip(self.labels, self.runs, strict=True):
            task = primary_task(run, benchmark)
            found = collect(run.files or run.results_file)[1] if task else []
            variant = next((v for v in found if v.name == task), None)
            if task is None or variant is None:
                continue
            field = variant.correct_field
            cells: dict[str, tuple[float, float, float, int]] = {}
            groups: dict[str, list[dict[str, Any]]] = {"all": list(variant.items)}
            for item in variant.items:
                if str(item["domain"]) != EXCLUDED_FROM_BREAKDOWNS:
                    groups.setdefault(str(item["domain"]), []).append(item)
                    self.domain_tables.setdefault(benchmark, {}).setdefault(str(item["domain"]), {}).setdefault(
                        str(item["id"]), {})[label] = 100.0 * bool(item[field])
            for key, rows in groups.items():
                low, high, _ = intervals.share_ci(rows, field)
                cells[key] = (100.0 * sum(bool(row[field]) for row in rows) / len(rows), low, high, len(rows))
            domains |= set(groups) - {"all"}
            paper, source = paper_of(run, benchmark)
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
            self.lines.append(f"| {self.cell(label)} | " + " | ".join(parts) + " |")
        chart = figures.grouped_bars(columns, series, self.output / f"{benchmark}_domains.png",
                                     f"{bench.title}: accuracy per domain (95% intervals as in the report; ◆ paper)",
                                     "accuracy (%)", (0.0, 100.0), self.watermark)
        self.charts.append(chart)
        self.lines += ["", f"![{benchmark} per domain]({chart.name})", ""]

    def item_table(self, benchmark: str) -> None:
        bench = benchmarks.get(benchmark)
        for label, run in zip(self.labels, self.runs, strict=True):
            task = primary_task(run, benchmark)
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
            self.lines.append(f"| {self.cell(label)} | " + " | ".join(cells) + f" | {mean} |")
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
                    rows.append(f"| {self.cell(label)} | {v.name} | {len({i['group_id'] for i in v.items})} | "
                                f"{r['orig_acc']:.1f} | {r['perm_mean_acc']:.1f} ± {r['perm_std_acc']:.1f} | "
                                f"{r['circular_acc']:.1f} | {r['consistency']:.1f} | {r['flip_rate']:.1f} |")
        self.lines += ["## Option-permutation robustness", ""]
        if not rows:
            self.lines += ["No run evaluated a permutation variant (`<task>_circular`, `<task>_perm5`).", ""]
            return
        self.lines += ["| model | variant | questions | orig acc | perm mean ± std | circular acc | consistency "
                       "| flip rate |", "|---|---|---:|---:|---:|---:|---:|---:|", *rows, ""]



def fresh_output(output: Path) -> Path:
    """``output``, or the first ``<output>-N`` (N = 2, 3, ...) without a report when ``output`` holds one."""
    candidate, number = output, 1
    while (candidate / REPORT).exists():
        number += 1
        candidate = output.with_name(f"{output.name}-{number}")
    return candidate


def write_multi_report(folders: Sequence[Path], output: Path | None = None, n_boot: int = ranking.N_BOOT,
                       labels: Sequence[str | None] | None = None) -> tuple[Path, str]:
    """Write the multi-model report for the runs in ``folders`` (called ``labels`` where given) into ``output``,
    or a new folder beside it when it holds a report; returns (markdown path, text)."""
    given = list(labels or [])
    if len(given) > len(folders):
        raise ReportInputError(f"{len(given)} labels for {len(folders)} runs: give at most one --label per run")
    given += [None] * (len(folders) - len(given))
    runs = [load_run(Path(folder), label) for folder, label in zip(folders, given, strict=True)]
    if output is None:
        common = Path(os.path.commonpath([str(r.path.resolve()) for r in runs]))
        output = (common if common.is_dir() else common.parent) / "multi_report"
    target = fresh_output(output)
    try:
        target.mkdir(parents=True, exist_ok=True)
        return _write(runs, target, n_boot, output if target != output else None)
    except OSError as exc:
        raise ReportInputError(f"{exc.filename or target}: cannot write the report ({exc.strerror or exc}); pass "
                               "--output to a writable folder") from exc


def _write(runs: list[Run], output: Path, n_boot: int, kept: Path | None = None) -> tuple[Path, str]:
    report = _Report(runs, output, n_boot)
    report.correlation_rows = []
    smoke = [label for label, run in zip(report.labels, runs, strict=True)
             if run.preset is not None and run.preset.kind in ("smoke", "baseline")]
    for label in report.labels:
        report.lines += report.banners[label].markdown(label)
    report.lines += ["", "# lmms-agentic multi-model report", ""] if report.lines else [
        "# lmms-agentic multi-model report", ""]
    if kept is not None:
        report.lines.append(f"- written to `{output}`: `{kept}` holds an earlier report, left as it was")
    for label, run in zip(report.labels, runs, strict=True):
        config = run.config
        report.lines.append(f"- **{report.cell(label)}**: `{run.results_file}` (`{config.get('model')}` "
                            f"`{config.get('model_args') or ''}`)")
        report.lines += [f"  {line}" for line in caveats.header_lines(run.results, run.notes, run.manifest)]
    if smoke:
        report.lines.append(f"- **smoke-test / baseline models** ({', '.join(smoke)}): their numbers check the "
                            "plumbing, they are not model scores.")
    report.lines += ["", "## Accuracy per domain (%; paper numbers in parentheses)", "",
                     f"{intervals.CAPTION[0].upper()}{intervals.CAPTION[1:]}; the single-run report gives the same.",
                     ""]
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
    target = output / REPORT
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
