"""Single-run report: benchmark-level tables and per-domain charts from a run's result and sample files.

The harness reports each subtask on its own and averages groups; breakdowns that cut across subtasks (RoboVista's
ability types over all domains) need the per-sample records. This module reads the run through ``run_files``
(lmms-eval's `<ts>_results.json` and `<ts>_samples_<task>.jsonl`, or lm-eval's `results_<date>.json` and
`samples_<task>_<date>.jsonl`, run with `--log_samples`; several runs of one model combined), pools each group's
subtasks, and writes `<ts>_report.md` plus one `<ts>_<benchmark>_domains.png` bar chart per benchmark next to the
newest results file. A mini-split or partial run's report starts with its banner and its charts carry a watermark
(``banner``); the header names the run's label (``labels``), the harness and versions, a `--limit` run and what was
combined (``caveats``); accuracies carry the interval of ``intervals`` (the multi-model report's); a run without MCQ
records gets no MCQ tables, and non-MCQ tasks are listed with the judge coverage of each judged number and the
format-error hint of ``hints``.

It knows no benchmark by name: each record says its `benchmark`, whose `benchmark.json` declares the headline
metric, the record field it counts (`correct_field`), the scale and the breakdown fields. MCQ records follow
`adapters.samples` (`pred` is the strict extractor's letter everywhere; `confidence` where a benchmark logs it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters import permutation_metrics as pm
from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.adapters.core import scores
from lmms_agentic.adapters.samples import read_record
from lmms_agentic.report import caveats, hints, intervals, labels, run_files
from lmms_agentic.report.banner import Banner, banner
from lmms_agentic.report.run_files import NoResultsError, ReportInputError, RunFiles

__all__ = ["EXCLUDED_FROM_BREAKDOWNS", "NoResultsError", "ReportInputError", "Variant", "collect", "latest_results",
           "read_results", "records", "render_markdown", "summary", "write_report"]

EXCLUDED_FROM_BREAKDOWNS = "unknown"


@dataclass
class Variant:
    """One reported row: a group (its subtasks pooled) or a standalone task, with its benchmark's declaration."""

    name: str
    tasks: list[str]
    items: list[dict[str, Any]]
    benchmark: Benchmark

    @property
    def permuted(self) -> bool:
        return all("group_id" in item for item in self.items)

    @property
    def correct_field(self) -> str:
        """The record field the benchmark's headline counts (`correct`, the strict letter, in permutation tasks)."""
        return "correct" if self.permuted else self.benchmark.correct_field or "correct"


def latest_results(folder: Path) -> Path:
    """The newest results file under `folder` (either harness; lmms-eval may add a model sub-folder); a results
    file itself is returned as is."""
    return run_files.results_files(Path(folder))[-1].path


def read_results(results_file: Path) -> dict[str, Any]:
    """The results JSON of a run in lmms-eval's shape (``run_files.read_results``)."""
    return run_files.read_results(Path(results_file))


def records(sample_file: Path) -> list[dict[str, Any]]:
    """The sample records of one sample file, sorted by item id (lmms-eval writes rank by rank)."""
    items = [record for _, line in run_files.sample_lines(sample_file) if (record := read_record(line)) is not None]
    return sorted(items, key=lambda item: str(item["id"]))


def collect(source: Path | RunFiles) -> tuple[dict[str, Any], list[Variant]]:
    """The results JSON and one `Variant` per top-level MCQ group or standalone task that logged samples;
    ``source`` is a run (``run_files.open_run``), a run folder or one results file."""
    run = source if isinstance(source, RunFiles) else run_files.open_run(Path(source))
    results, samples = run.results, run.samples
    groups: Mapping[str, list[str]] = {name: subtasks for name, subtasks in results.get("group_subtasks", {}).items()
                                       if subtasks}
    members = {task for subtasks in groups.values() for task in subtasks}
    variants = []
    for name in sorted(groups) + sorted(t for t in samples if t not in members and t not in groups):
        tasks = groups.get(name, [name])
        items = [item for task in tasks if task in samples for item in records(samples[task])]
        owners = {str(item["benchmark"]) for item in items}
        if len(owners) == 1:
            benchmark = benchmarks.get(owners.pop())
            if benchmark.mcq:
                variants.append(Variant(name, list(tasks), items, benchmark))
    return results, variants


def _fmt(value: float) -> str:
    return "n/a" if value != value else f"{value:.1f}"


def _breakdown_rows(variant: Variant, field: str) -> list[str]:
    rows = []
    for name, (acc, n) in scores.breakdown(variant.items, field, variant.correct_field).items():
        if name != EXCLUDED_FROM_BREAKDOWNS:
            rows.append(f"| {variant.name} | {field} | {name} | {n} | {_fmt(acc)} |")
    return rows


def letter_shares(items: Iterable[Mapping[str, Any]], field: str) -> dict[str, float]:
    counts = Counter("none" if item.get(field) is None else str(item[field]) for item in items)
    total = sum(counts.values())
    return {letter: 100.0 * n / total for letter, n in sorted(counts.items())}


def _score(results: Mapping[str, Any], variant: Variant) -> str:
    """The headline metric lmms-eval reported for a task or group (`orig_acc` for permutation tasks)."""
    row = results.get("results", {}).get(variant.name, {})
    key = f"{'orig_acc' if variant.permuted else variant.benchmark.headline_metric},none"
    return _fmt(float(row[key])) if isinstance(row.get(key), int | float) else "-"


def _ci(items: list[dict[str, Any]], key: str) -> str:
    """`[low, high]` 95% interval of the share of true ``key`` (percent), as ``intervals.share_ci`` gives it."""
    low, high, _ = intervals.share_ci(items, key)
    return f"[{_fmt(low)}, {_fmt(high)}]"


def permutation_row(items: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The permutation metrics over a variant's pooled records (each metric applied to its own views)."""
    views = [pm.views(item) for item in items]
    names = (*pm.METRICS, "orig_acc")
    return {name: float(getattr(pm, name)([v[name] for v in views if name in v])) for name in names}


def _permutation_line(v: Variant) -> str:
    row = permutation_row(v.items)
    predicted, gold = pm.letter_shares(v.items)
    excess = {k: predicted[k] - gold[k] for k in gold if predicted[k] == predicted[k]}
    top = max(excess, key=lambda k: excess[k]) if excess else "-"
    flagged = f"{top} ({excess[top]:+.1f} pts)" if excess else "-"
    # one row per question ("right under every order"): a question drawn twice by the bootstrap counts twice (a
    # resample of the pooled rows merged its copies into one question, and recomputed every metric 1,000 times)
    per_question: dict[Any, bool] = {}
    for item in v.items:
        per_question[item["group_id"]] = per_question.get(item["group_id"], True) and bool(item["correct"])
    circular_ci = _ci([{"circular": ok} for ok in per_question.values()], "circular")
    return (f"| {v.name} | {len({i['group_id'] for i in v.items})} | {_fmt(row['orig_acc'])} | "
            f"{_fmt(row['perm_mean_acc'])} ± {_fmt(row['perm_std_acc'])} | "
            f"{_fmt(row['circular_acc'])} {circular_ci} | {_fmt(row['consistency'])} | {_fmt(row['flip_rate'])} | "
            f"{row['letter_bias_p']:.2g} | {flagged} |")


def _calibration(v: Variant) -> str:
    """Calibration error over items that stated a confidence, with its coverage; '-' when none did."""
    scored = [item for item in v.items if item.get("confidence") is not None]
    if not scored:
        return "-"
    error = scores.calibration_error([i["confidence"] for i in scored], [bool(i[v.correct_field]) for i in scored])
    return f"{_fmt(error)} ({len(scored)}/{len(v.items)} stated)"


def render_markdown(results: Mapping[str, Any], variants: list[Variant], charts: list[Path],
                    results_file: Path | None = None, run: RunFiles | None = None, label: str | None = None) -> str:
    config = results.get("config", {})
    notes = run.notes if run is not None else []
    found = banner(results)
    lines = [
        *found.markdown(),
        *([""] if found.entries else []),
        "# lmms-agentic run report",
        "",
        f"- model: **{label or labels.run_label(results)}** (`{config.get('model')}` "
        f"`{config.get('model_args') or ''}`)",
        *caveats.header_lines(results, notes),
    ]
    if variants:
        lines += [
            "- task versions: " + ", ".join(f"{v.name} v{results.get('versions', {}).get(v.name, '?')}"
                                            for v in variants),
            "- accuracy in %; unanswered items count as wrong (papers' convention); "
            "rows without a domain/ability label count only in `all`.",
            "- `score` is the harness's headline metric for the task or group (its benchmark's convention, e.g. "
            "AgentVQA's mean of domains); `pooled acc` is correct / all rows of the variant, counted as the headline "
            "counts (RoboVista: the runner's parser); `strict acc` uses the strict extractor where that differs; "
            "letter shares and `no answer` always use the strict extractor.",
            f"- {intervals.CAPTION} (the multi-model report gives the same).",
            "",
            "| benchmark / variant | n | score | pooled acc [95% CI] | strict acc | no answer | calibration error "
            "| gold-letter shares | predicted-letter shares |",
            "|---|---:|---:|---:|---:|---:|---:|---|---|",
        ]
    else:
        lines.append("- no multiple-choice task with sample records in this run (MCQ tables left out)")
    for v in variants:
        gold = ", ".join(f"{k} {p:.0f}%" for k, p in letter_shares(v.items, "answer").items())
        pred = ", ".join(f"{k} {p:.0f}%" for k, p in letter_shares(v.items, "pred").items())
        no_answer = scores.percent(sum(item["pred"] is None for item in v.items), len(v.items))
        strict = _fmt(scores.accuracy(v.items, "correct")) if v.correct_field != "correct" else "-"
        field = v.correct_field
        lines.append(f"| {v.name} | {len(v.items)} | {_score(results, v)} | "
                     f"{_fmt(scores.accuracy(v.items, field))} "
                     f"{_ci(v.items, field)} | "
                     f"{strict} | {_fmt(no_answer)} | {_calibration(v)} | {gold} | {pred} |")
    lines += caveats.other_tasks(results, {v.name for v in variants}, _lines_of(run))
    lines += hints.format_hints(results, {v.name for v in variants}, _lines_of(run))
    permuted = [v for v in variants if v.permuted]
    if permuted:
        lines += ["", "## Option permutations (pooled over each variant; strict letters; CIs clustered by question)",
                  "", "| variant | questions | orig acc | perm mean ± std | circular acc | consistency | flip rate "
                  "| letter bias p | most over-predicted letter |", "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
        lines += [_permutation_line(v) for v in permuted]
    if results_file is not None:
        from lmms_agentic.report.loops import loop_section

        lines += loop_section(results, variants, results_file)
    if variants:
        lines += ["", "## Breakdowns (accuracy as the benchmark's headline counts it)", "",
                  "| variant | by | value | n | acc |", "|---|---|---|---:|---:|"]
    for v in variants:
        for field in v.benchmark.breakdowns:
            if all(field in item for item in v.items):
                lines += _breakdown_rows(v, field)
    if charts:
        lines += ["", "## Charts", ""] + [f"![{c.stem}]({c.name})" for c in charts]
    return "\n".join(lines) + "\n"


def _lines_of(run: RunFiles | None) -> Callable[[str], list[dict[str, Any]]]:
    """The sample lines of a task and its subtasks (none without the run's files)."""
    def lines_of(task: str) -> list[dict[str, Any]]:
        if run is None:
            return []
        groups = run.results.get("group_subtasks", {}) or {}
        todo, found = [task], []
        while todo:
            name = todo.pop()
            todo += groups.get(name) or []
            path = run.sample_file(name)
            found += [line for _, line in run_files.sample_lines(path)] if path is not None else []
        return found

    return lines_of


def plot_domains(variants: list[Variant], target: Path, title: str, found: Banner | None = None) -> Path:
    """Grouped bar chart: headline accuracy per domain (x) for each variant (bars) with its interval
    (``intervals.share_ci``); zero and missing values are marked, a mini-split or partial run is watermarked
    (``figures.grouped_bars``)."""
    from lmms_agentic.report import figures

    domains = sorted({str(i["domain"]) for v in variants for i in v.items} - {EXCLUDED_FROM_BREAKDOWNS})
    series = []
    for v in variants:
        cells: dict[str, figures.Cell] = {}
        for domain in domains:
            rows = [item for item in v.items if str(item["domain"]) == domain]
            if rows:
                low, high, _ = intervals.share_ci(rows, v.correct_field)
                cells[domain] = (scores.accuracy(rows, v.correct_field), low, high)
        series.append(figures.Series(v.name, cells, {}))
    return figures.grouped_bars(domains, series, target, title, "accuracy (%)", (0.0, 100.0),
                                found.watermark if found is not None else None)


def summary(text: str) -> str:
    """The report up to its breakdown section (the part worth printing in a terminal)."""
    return text.split("\n## Breakdowns")[0]


def write_report(folder: Path, label: str | None = None) -> tuple[Path, str]:
    """Write the markdown report and charts next to the run's newest results file (every results file of the model
    in ``folder`` combined, see ``run_files.open_run``); ``label`` replaces the run's own (``labels``); returns
    (path, text)."""
    from lmms_agentic import presets

    run = run_files.open_run(Path(folder))
    results, variants = collect(run)
    stamp, parent = run.stamp, run.results_file.parent
    by_benchmark: dict[str, list[Variant]] = {}
    for v in variants:
        by_benchmark.setdefault(v.benchmark.name, []).append(v)
    preset = presets.for_run(results.get("config") or {})
    name_of_run = labels.run_label(results, preset.name if preset is not None else None, label)
    found = banner(results)
    target = parent / f"{stamp}_report.md"
    try:
        charts = [plot_domains(vs, parent / f"{stamp}_{name}_domains.png",
                               f"{name}: accuracy per domain (model: {name_of_run}; 95% CI)",
                               found)
                  for name, vs in sorted(by_benchmark.items())]
        text = render_markdown(results, variants, charts, run.results_file, run, name_of_run)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ReportInputError(f"{target}: cannot write the report ({exc.strerror or exc}); make the folder "
                               "writable or copy the run elsewhere") from exc
    return target, text
