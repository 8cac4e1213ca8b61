"""`python -m lmms_agentic metric-lists`: every task YAML's `metric_list` written from its benchmark's core.

A benchmark's metrics are named once, in its core's `METRICS` table (`adapters.core.task`); a task YAML's
`metric_list` is that table's `TASK_METRICS[kind]` for the YAML's kind of task, then the plugin's thinking-loop
metrics, each with its aggregation and direction. The block is marked in the YAML by the line

    # metric_list of kind <kind>: written by `python -m lmms_agentic metric-lists` from the core's METRICS

directly above `metric_list:`, and everything in the block is rewritten. Adding a metric to a benchmark is then an
edit of its core's `METRICS` (and tests) followed by this command; `--check` (run by the tests) lists the YAML files
whose block is out of date instead of writing them.

Aggregation references: where the benchmark's plugin declaration names an `aggregations` module (Agent-X's, which
adds the judge layer's coverage check), its function of the metric's name; otherwise the core's own aggregation
function under the name it is importable by, and `adapters.core.scores.mean_score` for the loop metrics.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.core.scores import mean_score
from lmms_agentic.adapters.plugin_task import PluginBenchmark

MARKER = re.compile(r"^# metric_list of kind (?P<kind>[\w-]+): written by `python -m lmms_agentic metric-lists`.*$",
                    re.MULTILINE)
MARKER_TEXT = "# metric_list of kind {kind}: written by `python -m lmms_agentic metric-lists` from the core's METRICS"


class MetricListError(ValueError):
    """A marked YAML block cannot be written; the message names the file and what is wrong."""


def _importable_name(function: Callable[..., Any], metric: str, benchmark: str) -> str:
    module, name = getattr(function, "__module__", None), getattr(function, "__qualname__", "")
    if module and "<" not in name:
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            found = None
        if found is function:
            return f"{module}.{name}"
    raise MetricListError(f"{benchmark}: the aggregation of {metric!r} is not a module-level function a YAML can "
                          "name; declare an `aggregations` module in the benchmark's PluginBenchmark")


def entries(plugin: PluginBenchmark, kind: str) -> list[str]:
    """The `metric_list` lines of a task of `kind`: its metrics in report order, then the loop metrics."""
    core = plugin.core
    if kind not in core.TASK_METRICS:
        raise MetricListError(f"{core.BENCHMARK} has no task kind {kind!r} (its kinds: {', '.join(core.TASK_METRICS)})")
    lines = []
    for name in (*core.TASK_METRICS[kind], *plugin.loop_views):
        metric = core.METRICS.get(name)
        if plugin.aggregations is not None:
            reference = f"{plugin.aggregations}.{name}"
        elif metric is not None:
            reference = _importable_name(metric.aggregation, name, core.BENCHMARK)
        else:
            reference = _importable_name(mean_score, name, core.BENCHMARK)
        better = "true" if metric is not None and metric.higher_is_better else "false"
        lines.append(f"  - {{metric: {name}, aggregation: !function {reference}, higher_is_better: {better}}}")
    return lines


def rewrite(text: str, plugin: PluginBenchmark, where: str = "<yaml>") -> str:
    """`text` with every marked `metric_list` block written from the core (unmarked blocks are left alone)."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        out.append(line)
        index += 1
        found = MARKER.match(line.rstrip("\n"))
        if found is None:
            continue
        if index >= len(lines) or lines[index].rstrip() != "metric_list:":
            raise MetricListError(f"{where}: the metric-lists marker must stand directly above `metric_list:`")
        out.append(lines[index])
        index += 1
        while index < len(lines) and lines[index].startswith("  - "):
            index += 1
        out.extend(f"{entry}\n" for entry in entries(plugin, found["kind"]))
    return "".join(out)


def plugin_of(benchmark: str) -> PluginBenchmark | None:
    """The benchmark's plugin declaration (`tasks/<benchmark>/hooks.py`'s `PLUGIN`), if it has one."""
    try:
        hooks = importlib.import_module(f"lmms_agentic.tasks.{benchmark}.hooks")
    except ModuleNotFoundError:
        return None
    plugin = getattr(hooks, "PLUGIN", None)
    return plugin if isinstance(plugin, PluginBenchmark) else None


def marked_files(folder: Path) -> list[Path]:
    """The benchmark folder's task YAMLs with a marked block (generated permutation tasks aside)."""
    return sorted(p for p in [*folder.glob("*.yaml"), *folder.glob("_*_yaml")]
                  if MARKER.search(p.read_text(encoding="utf-8")))


def stale_files(root: Path | None = None, write: bool = False) -> list[Path]:
    """The marked YAML files whose block differs from the core's table (written when `write`)."""
    base = (root or benchmarks.tasks_root()).resolve()
    stale = []
    for name, benchmark in benchmarks.all_benchmarks(base).items():
        plugin = plugin_of(name)
        if plugin is None:
            continue
        for path in marked_files(benchmark.folder):
            text = path.read_text(encoding="utf-8")
            fresh = rewrite(text, plugin, str(path))
            if fresh != text:
                stale.append(path)
                if write:
                    path.write_text(fresh, encoding="utf-8")
    return stale
