"""Contract tests for every task YAML of every benchmark folder, using lmms-eval's own loader.

Nothing here names a benchmark: namespaces, required prompt kwargs and MCQ status come from each folder's
`benchmark.json`, so a new benchmark is checked as soon as its folder exists."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import datasets
import pytest
import yaml

import lmms_agentic
from lmms_agentic.adapters import benchmarks

TASKS_DIR = Path(lmms_agentic.tasks_dir())
BENCHMARKS = benchmarks.all_benchmarks()
YAMLS = sorted(p for b in BENCHMARKS.values() for p in b.folder.rglob("*.yaml"))
TEMPLATES = sorted(p for b in BENCHMARKS.values() for p in b.folder.rglob("*_yaml") if p.is_file())
NAMESPACES = tuple(BENCHMARKS)


def _benchmark(path: Path) -> benchmarks.Benchmark:
    return BENCHMARKS[path.relative_to(TASKS_DIR).parts[0]]


class _Raw(yaml.SafeLoader):
    """Reads YAML without resolving `!function`, keeping the reference string."""


_Raw.add_constructor("!function", lambda loader, node: ("!function", loader.construct_scalar(node)))


def _raw(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.load(path.read_text(), Loader=_Raw)
    return data


def _full(path: Path) -> dict[str, Any]:
    from lmms_eval import utils

    config: dict[str, Any] = utils.load_yaml_config(str(path), mode="full")
    return config


def _function_refs(node: Any) -> list[str]:
    if isinstance(node, tuple) and node and node[0] == "!function":
        return [node[1]]
    if isinstance(node, dict):
        return [ref for value in node.values() for ref in _function_refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _function_refs(value)]
    return []


def test_there_are_tasks_to_check() -> None:
    assert len(YAMLS) >= 15 and TEMPLATES


@pytest.mark.parametrize("path", YAMLS + TEMPLATES, ids=lambda p: p.name)
def test_function_references_are_absolute_and_importable(path: Path) -> None:
    for ref in _function_refs(_raw(path)):
        module_name, _, attribute = ref.rpartition(".")
        assert module_name.startswith("lmms_agentic."), f"{path.name}: relative !function {ref}"
        assert not (path.parent / f"{module_name}.py").exists()
        assert callable(getattr(importlib.import_module(module_name), attribute)), ref


@pytest.mark.parametrize("path", YAMLS + TEMPLATES, ids=lambda p: p.name)
def test_includes_exist(path: Path) -> None:
    include = _raw(path).get("include")
    for name in [include] if isinstance(include, str) else include or []:
        assert (path.parent / name).is_file(), f"{path.name} includes missing {name}"


@pytest.mark.parametrize("path", YAMLS, ids=lambda p: p.name)
def test_yaml_loads_with_lmms_eval_and_is_versioned(path: Path) -> None:
    config = _full(path)
    name = config["group"] if "group" in config else config.get("task")
    assert isinstance(name, str) and name.startswith(NAMESPACES), f"{path.name}: un-namespaced name {name}"
    assert isinstance(config["metadata"]["version"], float | int)


def _leaf_tasks() -> list[Path]:
    return [p for p in YAMLS if isinstance(_raw(p).get("task"), str)]


@pytest.mark.parametrize("path", _leaf_tasks(), ids=lambda p: p.name)
def test_leaf_task_config_is_complete(path: Path) -> None:
    from lmms_eval.api.task import TaskConfig

    config = _full(path)
    TaskConfig(**config)  # unknown keys raise TypeError
    generation = config["generation_kwargs"]
    assert {"until", "temperature", "do_sample", "max_new_tokens"} <= set(generation), path.name
    assert generation["do_sample"] is (generation["temperature"] > 0), "sampling must match the temperature"
    agentic = config.get("output_type") == "generate_until_agentic"  # agentx_tools: its own kwargs, no messages
    required = set(config["lmms_eval_specific_kwargs"]["default"]) if agentic else _benchmark(path).required_kwargs
    for backend, entry in config["lmms_eval_specific_kwargs"].items():
        # a backend entry replaces 'default' wholesale: every entry must restate every key
        assert set(entry) == required, f"{path.name}: {backend}"
    for hook in ("doc_to_text", "doc_to_target", "doc_to_visual", *(() if agentic else ("doc_to_messages",)),
                 "process_docs", "process_results"):
        assert callable(config[hook]), f"{path.name}: {hook}"


def _docs(config: dict[str, Any]) -> datasets.Dataset:
    """The documents lmms-eval builds: the placeholder the YAML names, through the task's process_docs."""
    placeholder = datasets.load_dataset("json", data_files=config["dataset_kwargs"]["data_files"],
                                        split=config["test_split"])
    return config["process_docs"](placeholder)


@pytest.mark.parametrize("path", _leaf_tasks(), ids=lambda p: p.name)
def test_metric_list_matches_process_results_keys(path: Path, mini_env: None) -> None:
    """Every metric of the list gets a value from every document (none missing, none extra), the first one carries
    the sample record (it names the benchmark and the item), and every aggregation takes the gathered values."""
    config = _full(path)
    docs = _docs(config)
    names = [m["metric"] for m in config["metric_list"]]
    first = dict(docs[0])  # order 0 of a question: permutation tasks return `orig_acc` only there
    returned = config["process_results"](first, ["B"])
    assert set(returned) == set(names), f"{path.name}: metrics {sorted(names)} vs returned keys {sorted(returned)}"
    record = returned[names[0]]
    assert record["benchmark"] == _benchmark(path).name and record["id"] == str(first["id"])
    others = [value for name, value in returned.items() if name != names[0] and isinstance(value, dict)]
    assert all("id" not in value for value in others), "views never repeat the record"
    for metric in config["metric_list"]:
        assert callable(metric["aggregation"]) and len(inspect.signature(metric["aggregation"]).parameters) == 1
        value = metric["aggregation"]([returned[metric["metric"]]])
        assert isinstance(value, float), (path.name, metric["metric"])


def _all_metric_names() -> set[str]:
    names: set[str] = set()
    for path in _leaf_tasks():
        names.update(m["metric"] for m in _raw(path).get("metric_list") or [])
    for template in TEMPLATES:
        names.update(m["metric"] for m in _raw(template).get("metric_list") or [])
    return names


def test_metric_names_are_not_substrings_of_each_other() -> None:
    """lmms-eval matches group metrics by substring: a group metric must match only itself."""
    names = _all_metric_names()
    assert len(names) > 20
    for group_path in [p for p in YAMLS if "group" in _raw(p)]:
        for entry in _raw(group_path)["aggregate_metric_list"]:
            clashes = [n for n in names if entry["metric"] in n and n != entry["metric"]]
            assert not clashes, f"{group_path.name}: {entry['metric']} also matches {clashes}"


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_manifest_demo_tasks_exist(name: str) -> None:
    benchmark = BENCHMARKS[name]
    for task in (*benchmark.demo_tasks, *benchmark.tiny_vlm_tasks, benchmark.name):
        assert task in benchmark.task_files(), f"{name}: benchmark.json names unknown task {task}"


def test_task_names_are_unique_across_files() -> None:
    names = [_raw(p)["group"] if "group" in _raw(p) else _raw(p)["task"] for p in YAMLS]
    assert len(names) == len(set(names))


def test_templates_are_not_indexed_as_tasks() -> None:
    assert all(not p.name.endswith(".yaml") for p in TEMPLATES)


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_yaml_metric_lists_are_the_packages_metrics(name: str) -> None:
    """A metric is named once in code, `METRICS` of the benchmark's package (`adapters/interface.py`): every task
    and group YAML of the folder (the generated permutation tasks, whose metrics are the permutation study's, aside)
    reports only names from it, and every name in it is reported by some task."""
    benchmark = BENCHMARKS[name]
    declared = set(benchmark.package().METRICS)
    reported: set[str] = set()
    for path in benchmark.task_files().values():
        if "permutations" in path.relative_to(benchmark.folder).parts:
            continue
        raw = _raw(path)
        entries = raw.get("aggregate_metric_list") if "group" in raw else _full(path).get("metric_list")
        names = {entry["metric"] for entry in entries or []}
        assert names <= declared, f"{path.name} reports {sorted(names - declared)}, not in {name}'s METRICS"
        reported |= names
    assert declared <= reported, f"{name}'s METRICS has names no task reports: {sorted(declared - reported)}"
