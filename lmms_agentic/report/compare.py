"""`python -m lmms_agentic compare A B`: paired comparison of two finished runs (either harness) on what both ran.

Multiple-choice variants: accuracy of each run, the difference B - A with a paired bootstrap 95% interval
(clustered by question) and McNemar's exact test. Other benchmarks (e.g. Agent-X, no MCQ records): every metric of
the benchmark's ``profile`` (else its headline), then the other metrics with per-item values, on the items both runs
scored, from the per-item values of the
sample lines (``runs.item_scores``; unscored judged items leave the comparison): each run's mean, B - A with a
paired bootstrap 95% interval over items, and the number of common items. Nothing in common says why. Each run is
named by its label (``labels``), and the banner of a mini-split or partial run (``banner``) is printed under it.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from lmms_agentic.adapters import benchmarks, stats
from lmms_agentic.report.banner import banner
from lmms_agentic.report.runs import Run, item_scores, load_run, measure
from lmms_agentic.report.single import Variant, collect

N_BOOT = 2000


def _fmt(value: float, digits: int = 1) -> str:
    return "n/a" if value != value else f"{value:.{digits}f}"


def _mcq_rows(variants_a: list[Variant], variants_b: list[Variant]) -> list[str]:
    by_name = {v.name: v for v in variants_b}
    rows = []
    for va in variants_a:
        vb = by_name.get(va.name)
        if vb is None:
            continue
        cluster = "group_id" if va.permuted else None
        r = stats.paired_comparison(va.items, vb.items, key=va.correct_field, cluster_key=cluster)
        low, high = r["diff_ci95"]
        rows.append(f"| {va.name} | {r['n_common']} | {_fmt(r['acc_a'])} | {_fmt(r['acc_b'])} | "
                    f"{r['diff']:+.1f} [{_fmt(low)}, {_fmt(high)}] | {r['b_only_correct']} | "
                    f"{r['a_only_correct']} | {r['mcnemar_p']:.3g} |")
    return rows


def _metric_rows(run_a: Run, run_b: Run, mcq_shown: set[str]) -> list[str]:
    """Rows for the common top-level tasks of non-MCQ benchmarks, one per profile metric."""
    rows = []
    for task in sorted(set(run_a.top_level()) & set(run_b.top_level()) - mcq_shown):
        owner = benchmarks.benchmark_of_task(task)
        if owner is None or owner.mcq:
            continue
        digits = 2 if owner.scale == "unit" else 1
        declared = list(owner.profile or (owner.headline_metric,))
        reported = sorted({key.removesuffix(",none") for run in (run_a, run_b)
                           for key in (run.results["results"].get(task) or {})
                           if key.endswith(",none") and "_stderr" not in key} - set(declared))
        for metric in declared + reported:
            a, b = item_scores(run_a, task, metric), item_scores(run_b, task, metric)
            common = sorted(set(a) & set(b))
            ma, mb = measure(run_a, task, metric), measure(run_b, task, metric)
            if not common and (metric in reported or (ma is None and mb is None)):
                continue  # a metric outside the profile without per-item values, or one neither run has
            if not common:
                why = "no item scored in both runs" if a or b else "no per-item values (a composite of means)"
                rows.append(f"| {task} | {metric} | 0 | {_fmt(ma.value, digits) if ma else '-'} | "
                            f"{_fmt(mb.value, digits) if mb else '-'} | {why}: no interval |")
                continue
            pairs = [{"d": b[i] - a[i]} for i in common]
            low, high = stats.bootstrap_ci(pairs, lambda rows_: statistics.fmean(r["d"] for r in rows_),
                                           n_boot=N_BOOT)
            mean_a, mean_b = statistics.fmean(a[i] for i in common), statistics.fmean(b[i] for i in common)
            rows.append(f"| {task} | {metric} | {len(common)} | {_fmt(mean_a, digits)} | {_fmt(mean_b, digits)} | "
                        f"{mean_b - mean_a:+.{digits}f} [{_fmt(low, digits)}, {_fmt(high, digits)}] |")
    return rows


def compare_runs(folder_a: Path, folder_b: Path) -> str:
    """The comparison tables of two runs (module docstring)."""
    run_a, run_b = load_run(Path(folder_a)), load_run(Path(folder_b))
    _, variants_a = collect(run_a.files or Path(folder_a))
    _, variants_b = collect(run_b.files or Path(folder_b))
    lines = [f"Paired comparison: A = {run_a.label}, {folder_a} ({run_a.results['harness']}), B = {run_b.label}, "
             f"{folder_b} ({run_b.results['harness']})"]
    for name, run in (("A", run_a), ("B", run_b)):
        lines += [f"{name}: {line}" for line in banner(run.results).lines]
        lines += [f"{name}: {note}" for note in run.notes]
        if run.config.get("limit") is not None:
            lines.append(f"{name}: PARTIAL RUN (--limit {run.config['limit']}): only the items both runs hold count")
    mcq = _mcq_rows(variants_a, variants_b)
    if mcq:
        lines += ["", "Multiple-choice variants (accuracy %, B - A):", "",
                  "| variant | common items | acc A | acc B | B - A [95% CI] | only B right | only A right "
                  "| McNemar p |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|", *mcq]
    other = _metric_rows(run_a, run_b, {v.name for v in variants_a})
    if other:
        lines += ["", "Other benchmarks (mean per item on the items both runs scored; B - A with a paired bootstrap "
                  "95% interval):", "", "| task | metric | common items | A | B | B - A [95% CI] |",
                  "|---|---|---:|---:|---:|---:|", *other]
    if not mcq and not other:
        tasks_a, tasks_b = sorted(run_a.top_level()), sorted(run_b.top_level())
        lines += ["", f"nothing to compare: A ran {', '.join(tasks_a) or 'no task'}; B ran "
                  f"{', '.join(tasks_b) or 'no task'} (no task in common with per-item sample records; run both "
                  "with --log_samples on the same tasks)"]
    return "\n".join(lines)
