"""The task YAMLs' metric lists are written from the cores' METRICS (`lmms_agentic.devtools.metric_lists`)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import ClassVar

import pytest

import lmms_agentic
from lmms_agentic.adapters.core.task import Metric, metric_table, whole_record
from lmms_agentic.cli import main
from lmms_agentic.devtools import metric_lists
from lmms_agentic.devtools.metric_lists import MARKER_TEXT, MetricListError, entries, rewrite, stale_files
from lmms_agentic.tasks.agentx import hooks as agentx_hooks
from lmms_agentic.tasks.robovista import hooks as robovista_hooks

TASKS = Path(lmms_agentic.tasks_dir())
MARKED = {"agentvqa": 5, "robovista": 4, "agentx": 2}
"""The marked YAML files per benchmark: one per kind of task (Agent-X's executed-tools tasks list their own)."""


def test_every_metric_list_of_the_repository_is_the_cores() -> None:
    assert stale_files() == []
    assert {b: len(metric_lists.marked_files(TASKS / b)) for b in MARKED} == MARKED


def test_a_stale_list_is_found_and_written_back(tmp_path: Path) -> None:
    root = tmp_path / "tasks"
    shutil.copytree(TASKS / "robovista", root / "robovista")
    path = root / "robovista" / "_full_template_yaml"
    original = path.read_text(encoding="utf-8")
    path.write_text(original.replace("  - {metric: strict_acc,", "  - {metric: strict_accuracy,"), encoding="utf-8")
    assert stale_files(root) == [path.resolve()]
    assert stale_files(root, write=True) == [path.resolve()]
    assert path.read_text(encoding="utf-8") == original
    assert stale_files(root) == []


def test_the_check_command_passes_on_the_repository(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metric-lists", "--check"]) == 0
    assert capsys.readouterr().out.startswith("0 task YAML file(s) to rewrite")


def test_a_metric_added_to_the_core_reaches_the_yaml() -> None:
    plugin = robovista_hooks.PLUGIN
    core = plugin.core
    added = Metric("strict_acc_twice", lambda record: record, lambda values: 0.0, higher_is_better=False)

    class Core:
        BENCHMARK = core.BENCHMARK
        METRICS = metric_table(*core.METRICS.values(), added)
        TASK_METRICS: ClassVar = {**core.TASK_METRICS, "full": (*core.TASK_METRICS["full"], added.name)}
        VARIANTS = core.VARIANTS
        documents, prompt, score = core.documents, core.prompt, core.score

    grown = dataclasses.replace(plugin, core=Core())  # type: ignore[arg-type]
    text = (TASKS / "robovista" / "_full_template_yaml").read_text(encoding="utf-8")
    with pytest.raises(MetricListError, match=r"strict_acc_twice.*not a module-level function"):
        rewrite(text, grown)
    named = dataclasses.replace(grown, aggregations="some.module")
    lines = rewrite(text, named).splitlines()
    block = [line for line in lines if line.startswith("  - {metric:")]
    assert block[-3:] == ["  - {metric: strict_acc_twice, aggregation: !function some.module.strict_acc_twice, "
                          "higher_is_better: false}",
                          "  - {metric: loop_rate, aggregation: !function some.module.loop_rate, "
                          "higher_is_better: false}",
                          "  - {metric: truncation_rate, aggregation: !function some.module.truncation_rate, "
                          "higher_is_better: false}"]


@pytest.mark.parametrize(("plugin", "kind", "first", "aggregation"), [
    (robovista_hooks.PLUGIN, "domain", "parity_acc", "lmms_agentic.adapters.core.scores.mean_score"),
    (robovista_hooks.PLUGIN, "confidence", "parity_acc", "lmms_agentic.adapters.core.scores.mean_score"),
    (agentx_hooks.PLUGIN, "text_answer", "ground_s", "lmms_agentic.tasks.agentx.aggregations.ground_s"),
])
def test_entries_follow_the_table_then_the_loop_metrics(plugin: object, kind: str, first: str,
                                                        aggregation: str) -> None:
    assert isinstance(plugin, metric_lists.PluginBenchmark)
    lines = entries(plugin, kind)
    names = [line.split("metric: ")[1].split(",")[0] for line in lines]
    assert names == [*plugin.core.TASK_METRICS[kind], *plugin.loop_views]
    assert lines[0] == f"  - {{metric: {first}, aggregation: !function {aggregation}, higher_is_better: true}}"
    assert plugin.core.METRICS[names[0]].view is whole_record


@pytest.mark.parametrize(("text", "problem"), [
    (MARKER_TEXT.format(kind="domain") + "\nmetadata: {}\n", "directly above `metric_list:`"),
    (MARKER_TEXT.format(kind="nope") + "\nmetric_list:\n  - {metric: x}\n", "no task kind 'nope'"),
])
def test_a_bad_marker_is_named(text: str, problem: str) -> None:
    with pytest.raises(MetricListError, match=problem):
        rewrite(text, robovista_hooks.PLUGIN, "x.yaml")


def test_unmarked_blocks_are_left_alone() -> None:
    text = "metric_list:\n  - {metric: hand_written, aggregation: mean, higher_is_better: true}\n"
    assert rewrite(text, robovista_hooks.PLUGIN) == text
