"""Single-run report: benchmark-level tables and per-domain charts from lmms-eval's result and sample files.

lmms-eval reports each subtask on its own and averages groups; breakdowns that cut across subtasks (RoboVista's
ability types over all domains) need the per-sample records. This module reads `<ts>_results.json` and the
`<ts>_samples_<task>.jsonl` files written next to it (run with `--log_samples`), pools each group's subtasks, and
writes `<ts>_report.md` plus one `<ts>_<benchmark>_domains.png` bar chart per benchmark into the same folder.

It knows no benchmark by name: each record says its `benchmark`, whose `benchmark.json` declares the headline
metric, the record field it counts (`correct_field`), the scale and the breakdown fields. MCQ records follow
`adapters.samples` (`pred` is the strict extractor's letter everywhere; `confidence` where a benchmark logs it).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmms_agentic.adapters import benchmarks, stats
from lmms_agentic.adapters import permutation_metrics as pm
from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.adapters.core import scores
from lmms_agentic.adapters.samples import read_record

EXCLUDED_FROM_BREAKDOWNS = "unknown"


class ReportInputError(ValueError):
    """An input is not an lmms-eval output (folder without results, unreadable results or sample file); the
    message names the path."""


class NoResultsError(ReportInputError, FileNotFoundError):
    """A folder holds no `*_results.json`."""


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
    """The newest `*_results.json` under `folder` (lmms-eval may add a model sub-folder); a results file itself is
    returned as is."""
    if folder.is_file() and folder.name.endswith("_results.json"):
        return folder
    if not folder.exists():
        raise NoResultsError(f"{folder}: no such file or folder")
    found = sorted(folder.rglob("*_results.json"), key=lambda p: p.name) if folder.is_dir() else []
    if not found:
        raise NoResultsError(f"{folder}: not an lmms-eval output (no *_results.json in it; lmms-eval writes one "
                             "into its --output_path)")
    return found[-1]


def read_results(results_file: Path) -> dict[str, Any]:
    """The results JSON of a run; `ReportInputError` naming the file when it is not lmms-eval's."""
    try:
        data = json.loads(results_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportInputError(f"{results_file}: not an lmms-eval results file ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise ReportInputError(f"{results_file}: not an lmms-eval results file (no 'results' table)")
    return data


def records(sample_file: Path) -> list[dict[str, Any]]:
    """The sample records of one `*_samples_<task>.jsonl` file, sorted by item id (lmms-eval writes rank by rank)."""
    items = []
    with sample_file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                line_data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ReportInputError(f"{sample_file}, line {number}: not a JSON sample line ({exc})") from exc
            if not isinstance(line_data, dict):
                raise ReportInputError(f"{sample_file}, line {number}: not an lmms-eval sample line (not an object)")
            record = read_record(line_data)
            if record is not None:
                items.append(record)
    return sorted(items, key=lambda item: str(item["id"]))


def collect(results_file: Path) -> tuple[dict[str, Any], list[Variant]]:
    """The results JSON and one `Variant` per top-level group or standalone task that logged samples."""
    results = read_results(results_file)
    stamp = results_file.name.removesuffix("_results.json")
    samples = {p.name.removeprefix(f"{stamp}_samples_").removesuffix(".jsonl"): p
               for p in results_file.parent.glob(f"{stamp}_samples_*.jsonl")}
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
    """`[low, high]` 95% bootstrap interval of the share of true ``key`` (percent), resampling questions (all
    permutations of one question together)."""
    cluster = "group_id" if all("group_id" in item for item in items) else None
    low, high = stats.bootstrap_share_ci(items, key, cluster, n_boot=1000)
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


def _value(value: float, scale: str) -> str:
    """Percent-scale values with one decimal, 0-1 scale values with two (as each benchmark's paper prints them)."""
    return "n/a" if value != value else (f"{value:.1f}" if scale == "percent" else f"{value:.2f}")


def _other_tasks(results: Mapping[str, Any], shown: set[str]) -> list[str]:
    """lmms-eval's own numbers for the top-level tasks and groups without MCQ records (e.g. Agent-X)."""
    groups: Mapping[str, list[str]] = results.get("group_subtasks", {})
    members = {task for subtasks in groups.values() for task in subtasks}
    lines: list[str] = []
    for name in sorted(n for n in results.get("results", {}) if n not in shown and n not in members):
        row = results["results"][name]
        owner = benchmarks.benchmark_of_task(name)
        scale = owner.scale if owner is not None else "percent"
        metrics = {k.removesuffix(",none"): v for k, v in row.items()
                   if k.endswith(",none") and "_stderr" not in k and isinstance(v, int | float)}
        if metrics:
            lines.append(f"| {name} | {scale} | "
                         + ", ".join(f"{k} {_value(float(v), scale)}" for k, v in sorted(metrics.items())) + " |")
    if lines:
        lines = ["", "## Other tasks (lmms-eval's numbers, on each benchmark's scale)", "",
                 "| task | scale | metrics |", "|---|---|---|", *lines]
    return lines


def render_markdown(results: Mapping[str, Any], variants: list[Variant], charts: list[Path],
                    results_file: Path | None = None) -> str:
    config = results.get("config", {})
    lines = [
        "# lmms-agentic run report",
        "",
        f"- model: `{config.get('model')}` `{config.get('model_args') or ''}`",
        f"- lmms-eval {results.get('lmms_eval_version', '?')}; versions: "
        + ", ".join(f"{v.name} v{results.get('versions', {}).get(v.name, '?')}" for v in variants),
        "- accuracy in %; unanswered items count as wrong (papers' convention); "
        "rows without a domain/ability label count only in `all`.",
        "- `score` is lmms-eval's headline metric for the task or group (its benchmark's convention, e.g. AgentVQA's "
        "mean of domains); `pooled acc` is correct / all rows of the variant, counted as the headline counts "
        "(RoboVista: the runner's parser); `strict acc` uses the strict extractor where that differs; "
        "letter shares and `no answer` always use the strict extractor.",
        "",
        "| benchmark / variant | n | score | pooled acc [95% CI] | strict acc | no answer | calibration error "
        "| gold-letter shares | predicted-letter shares |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
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
    lines += _other_tasks(results, {v.name for v in variants})
    permuted = [v for v in variants if v.permuted]
    if permuted:
        lines += ["", "## Option permutations (pooled over each variant; strict letters; CIs clustered by question)",
                  "", "| variant | questions | orig acc | perm mean ± std | circular acc | consistency | flip rate "
                  "| letter bias p | most over-predicted letter |", "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
        lines += [_permutation_line(v) for v in permuted]
    if results_file is not None:
        from lmms_agentic.report.loops import loop_section

        lines += loop_section(results, variants, results_file)
    lines += ["", "## Breakdowns (accuracy as the benchmark's headline counts it)", "",
              "| variant | by | value | n | acc |", "|---|---|---|---:|---:|"]
    for v in variants:
        for field in v.benchmark.breakdowns:
            if all(field in item for item in v.items):
                lines += _breakdown_rows(v, field)
    if charts:
        lines += ["", "## Charts", ""] + [f"![{c.stem}]({c.name})" for c in charts]
    return "\n".join(lines) + "\n"


def plot_domains(variants: list[Variant], target: Path, title: str) -> Path:
    """Grouped bar chart: headline accuracy per domain (x) for each variant (bars)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    domains = sorted({str(i["domain"]) for v in variants for i in v.items} - {EXCLUDED_FROM_BREAKDOWNS})
    width = 0.8 / max(1, len(variants))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(domains)), 4.0))
    for k, v in enumerate(variants):
        table = scores.breakdown(v.items, "domain", v.correct_field)
        values = [table.get(d, (float("nan"), 0))[0] for d in domains]
        ax.bar([x + k * width for x in range(len(domains))], values, width, label=v.name)
    ax.set_xticks([x + width * (len(variants) - 1) / 2 for x in range(len(domains))])
    ax.set_xticklabels([d.replace("_", "\n") for d in domains], fontsize=8)
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target


def summary(text: str) -> str:
    """The report up to its breakdown section (the part worth printing in a terminal)."""
    return text.split("\n## Breakdowns")[0]


def write_report(folder: Path) -> tuple[Path, str]:
    """Write the markdown report and charts next to the newest results file; returns (path, text)."""
    results_file = latest_results(folder)
    results, variants = collect(results_file)
    stamp = results_file.name.removesuffix("_results.json")
    by_benchmark: dict[str, list[Variant]] = {}
    for v in variants:
        by_benchmark.setdefault(v.benchmark.name, []).append(v)
    model = results.get("config", {}).get("model", "?")
    charts = [plot_domains(vs, results_file.parent / f"{stamp}_{name}_domains.png",
                           f"{name}: accuracy per domain (model: {model})")
              for name, vs in sorted(by_benchmark.items())]
    text = render_markdown(results, variants, charts, results_file)
    target = results_file.parent / f"{stamp}_report.md"
    target.write_text(text)
    return target, text


def compare_runs(folder_a: Path, folder_b: Path) -> str:
    """Paired comparison of two runs (two models, or two settings) on the variants both ran: accuracy of each,
    the difference B - A with a paired bootstrap 95% interval (clustered by question), and McNemar's exact test."""
    _, variants_a = collect(latest_results(folder_a))
    _, variants_b = collect(latest_results(folder_b))
    by_name = {v.name: v for v in variants_b}
    lines = [f"Paired comparison: A = {folder_a}, B = {folder_b} (accuracy %, B - A)", "",
             "| variant | common items | acc A | acc B | B - A [95% CI] | only B right | only A right | McNemar p |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for va in variants_a:
        vb = by_name.get(va.name)
        if vb is None:
            continue
        cluster = "group_id" if va.permuted else None
        r = stats.paired_comparison(va.items, vb.items, key=va.correct_field, cluster_key=cluster)
        low, high = r["diff_ci95"]
        lines.append(f"| {va.name} | {r['n_common']} | {_fmt(r['acc_a'])} | {_fmt(r['acc_b'])} | "
                     f"{r['diff']:+.1f} [{_fmt(low)}, {_fmt(high)}] | {r['b_only_correct']} | "
                     f"{r['a_only_correct']} | {r['mcnemar_p']:.3g} |")
    if len(lines) == 4:
        lines.append("| (no variant in common) | | | | | | | |")
    return "\n".join(lines)
