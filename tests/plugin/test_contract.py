"""Contract tests for every task YAML, using lmms-eval's own loader (see shared/specs/harness.md §1-§5)."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import datasets
import pytest
import yaml

import lmms_agentic

TASKS_DIR = Path(lmms_agentic.tasks_dir())
YAMLS = sorted(TASKS_DIR.rglob("*.yaml"))
TEMPLATES = sorted(p for p in TASKS_DIR.rglob("*_yaml") if p.is_file())
NAMESPACES = ("robovista", "agentvqa", "agentx")
REQUIRED_KWARGS = {
    "robovista": {"protocol", "system_prompt", "suffix", "confidence_request", "icl_system_prompt", "icl_reasoning",
                  "image_preprocess", "system_role"},
    "agentvqa": {"history_header", "post_prompt", "video_mode", "n_frames"},
    "agentx": {"video_mode", "n_frames", "system_role"},
}


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
    benchmark = path.relative_to(TASKS_DIR).parts[0]
    for backend, entry in config["lmms_eval_specific_kwargs"].items():
        # a backend entry replaces 'default' wholesale: every entry must restate every key
        assert set(entry) == REQUIRED_KWARGS[benchmark], f"{path.name}: {backend}"
    for hook in ("doc_to_text", "doc_to_target", "doc_to_visual", "doc_to_messages", "process_docs",
                 "process_results"):
        assert callable(config[hook]), f"{path.name}: {hook}"


@pytest.mark.parametrize("path", _leaf_tasks(), ids=lambda p: p.name)
def test_metric_list_matches_process_results_keys(path: Path, mini_env: None) -> None:
    config = _full(path)
    source = TASKS_DIR / path.relative_to(TASKS_DIR).parts[0] / "source.json"
    manifest = datasets.load_dataset("json", data_files=str(source), split="train")
    doc = dict(config["process_docs"](manifest)[0])
    keys = set(config["process_results"](doc, ["B"]))
    names = [m["metric"] for m in config["metric_list"]]
    assert keys == set(names), f"{path.name}: metrics {sorted(names)} vs payload keys {sorted(keys)}"
    for metric in config["metric_list"]:
        assert callable(metric["aggregation"]) and len(inspect.signature(metric["aggregation"]).parameters) == 1


def test_metric_names_are_not_substrings_of_each_other() -> None:
    """lmms-eval matches group metrics by substring: a group metric must match only itself."""
    from lmms_agentic.tasks.agentvqa import metrics as agentvqa_metrics
    from lmms_agentic.tasks.robovista import metrics

    names = (*metrics.ICL_METRICS, *agentvqa_metrics.COMMON, *agentvqa_metrics.SOURCE_METRICS)
    for group_path in [p for p in YAMLS if "group" in _raw(p)]:
        for entry in _raw(group_path)["aggregate_metric_list"]:
            clashes = [n for n in names if entry["metric"] in n and n != entry["metric"]]
            assert not clashes, f"{group_path.name}: {entry['metric']} also matches {clashes}"


def test_task_names_are_unique_across_files() -> None:
    names = [_raw(p)["group"] if "group" in _raw(p) else _raw(p)["task"] for p in YAMLS]
    assert len(names) == len(set(names))


def test_templates_are_not_indexed_as_tasks() -> None:
    assert all(not p.name.endswith(".yaml") for p in TEMPLATES)
