"""The viewer's overview: one row per top-level task (or group) and model, with the headline metric, its interval,
the number of items it counts and the judge coverage of a judged metric.

The value is the harness's number from the results file (``report.runs.measure``, which reads lmms-eval's and
lm-eval's layouts alike); the headline is the benchmark's (``benchmark.json``) when the task reports it, else the
task's first metric (its record metric). The interval is the reports' own: for right/wrong values the interval of
``report.intervals.share_ci`` (Wilson, or the bootstrap over questions when rows repeat a question), else the value
± 1.96 standard errors clustered by item (``measure``); coverage is ``report.judged.coverage``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.samples import read_record
from lmms_agentic.report import intervals
from lmms_agentic.report.judged import coverage, line_value
from lmms_agentic.report.runs import Run, measure

Z95 = intervals.Z95


def headline(run: Run, task: str) -> str | None:
    """The metric the overview shows for ``task``: its benchmark's headline when reported, else the first metric
    of the task's (or its first leaf's) metric list that the results hold."""
    row = run.results["results"].get(task)
    if not isinstance(row, Mapping):
        return None
    owner = benchmarks.benchmark_of_task(task)
    if owner is not None and f"{owner.headline_metric},none" in row:
        return str(owner.headline_metric)
    for leaf in run.leaves(task):
        for entry in (run.results.get("configs", {}).get(leaf) or {}).get("metric_list") or []:
            name = entry.get("metric") if isinstance(entry, Mapping) else None
            if isinstance(name, str) and f"{name},none" in row:
                return name
    return next((key.removesuffix(",none") for key in row
                 if key.endswith(",none") and "_stderr" not in key), None)


def _lines(run: Run, task: str) -> list[dict[str, Any]]:
    return [line for leaf in run.leaves(task) for line in run.lines(leaf)]


def item_scores(run: Run, task: str, metric: str, top: float) -> list[tuple[float, str, str | None]]:
    """(score, item id, question id of a permutation row) of every sample line that has a value for ``metric``;
    a permutation row whose record carries no score counts its ``correct`` (the rows' mean is the metric)."""
    found = []
    for line in _lines(run, task):
        record = read_record(line) or {}
        group = record.get("group_id")
        counts, score, _ = line_value(line, metric)
        if score is None and not counts and group is not None and isinstance(record.get("correct"), bool) \
                and isinstance(line.get(metric), Mapping) and "score" not in record:
            score = top if record["correct"] else 0.0
        if score is not None:
            found.append((score, str(record.get("id", "")), None if group is None else str(group)))
    return found


def interval(run: Run, task: str, metric: str, value: float, top: float) -> tuple[float, float, str] | None:
    """(low, high, method) of the metric (module docstring); None when nothing gives one."""
    items = item_scores(run, task, metric, top)
    if items and all(score in (0.0, top) for score, _, _ in items):
        rows = [{"ok": score == top, **({"group_id": group} if group is not None else {})}
                for score, _, group in items]
        low, high, method = intervals.share_ci(rows, "ok")
        return low * top / 100.0, high * top / 100.0, method
    found = measure(run, task, metric)
    if found is None or found.se is None or not math.isfinite(value):
        return None
    return max(0.0, value - Z95 * found.se), min(top, value + Z95 * found.se), "±1.96 SE, clustered by item"


def _format(value: float | None, top: float) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{value:.1f}" if top == 100.0 else f"{value:.3f}"


def rows(run: Run, run_index: int, label: str) -> list[dict[str, Any]]:
    """The overview rows of one run, in the results file's order of top-level tasks."""
    found = []
    for task in run.top_level():
        metric = headline(run, task)
        owner = benchmarks.benchmark_of_task(task)
        if metric is None:
            continue
        top = 1.0 if owner is not None and owner.scale == "unit" else 100.0
        value = run.results["results"][task].get(f"{metric},none")
        number = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        items = item_scores(run, task, metric, top)
        span = interval(run, task, metric, number, top) if number is not None else None
        judged = coverage(_lines(run, task), metric)
        found.append({
            "run": run_index, "model": label, "task": task, "benchmark": owner.name if owner else "",
            "leaves": [leaf for leaf in run.leaves(task) if run.sample_file(leaf) is not None],
            "metric": metric, "value": _format(number, top),
            "interval": "" if span is None else f"[{_format(span[0], top)}, {_format(span[1], top)}]",
            "method": "" if span is None else span[2], "n": len({group or item for _, item, group in items}),
            "samples": sum(len(run.lines(leaf)) for leaf in run.leaves(task)),
            "coverage": judged.text() if judged is not None else "not judged",
        })
    return found
