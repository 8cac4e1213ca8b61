"""The task YAMLs of an exported folder, for lmms-eval and for lm-eval, from the benchmark's lmms-eval tasks.

Exported: every task and group of `tasks/<benchmark>/` except the generated permutation variants. The YAMLs load
the Hub dataset directly (`dataset_path` = the manifest's Hub id, `test_split` its split; the revision when one is
pinned; `data_files` when the release keeps a `data.json` instead of parquet), and every `!function` names a
function of the folder's one `utils.py` (`utils.<name>`). Keys every task shares move to `_default_template_yaml`,
which each task includes (both harnesses' convention).

- lmms-eval: the source config as lmms-eval resolves it, with the data keys replaced and `process_docs` pointing at
  a wrapper that hands the loaded split over (`utils.<process_docs name>`).
- lm-eval: `doc_to_image` / `doc_to_text` / `doc_to_target` / `process_results` are the adapter's document-only
  hooks, `description` the per-document system prompt, `process_docs` one function per task (`<task>_docs`, which
  also fixes the task's prompt settings), `max_gen_toks`; groups average with `mean`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.adapters.upstream import hooks_of
from lmms_agentic.lmeval.generate import Block
from lmms_agentic.lmeval.sources import Ref, SourceTask, source_tasks

PERMUTATIONS = "permutations"
DATA_KEYS = ("dataset_path", "dataset_name", "dataset_kwargs", "test_split")
LMEVAL_HOOKS = ("doc_to_image", "doc_to_text", "doc_to_target", "process_results")
SYSTEM_FIELD = "system_prompt"


def exported_sources(benchmark: Benchmark) -> list[SourceTask]:
    """The benchmark's tasks and groups, without the generated permutation variants and the tasks its `upstream.py`
    leaves out (`NOT_EXPORTED` prefixes, e.g. Agent-X's per-model script protocols and its multi-turn tool tasks)."""
    skipped = hooks_of(benchmark).NOT_EXPORTED
    return [s for s in source_tasks(benchmark)
            if PERMUTATIONS not in s.relative.parts and not s.name.startswith(skipped)]


def data_keys(benchmark: Benchmark) -> dict[str, Any]:
    """How the harness loads the Hub dataset (the keys every exported task starts with)."""
    source = benchmark.source
    keys: dict[str, Any] = {"dataset_path": source.hub_id}
    if source.config:
        keys["dataset_name"] = source.config
    kwargs: dict[str, Any] = {}
    if source.revision:
        kwargs["revision"] = source.revision
    mini = benchmark.folder / "data" / "mini"
    tables = [p.name for p in sorted(mini.glob("*.json*"))] if mini.is_dir() else []
    if tables and not any(mini.rglob("*.parquet")):  # a data.json release: name the file, the media are not a table
        kwargs["data_files"] = {source.split: tables[0]}
    if kwargs:
        keys["dataset_kwargs"] = kwargs
    keys["test_split"] = source.split
    return keys


@dataclass
class Names:
    """utils.py names for the functions the YAMLs reference (last component; prefixed when two collide)."""

    refs: dict[str, str] = field(default_factory=dict)

    def add(self, reference: str, wanted: str | None = None) -> str:
        if reference in self.refs:
            return self.refs[reference]
        name = wanted or reference.rpartition(".")[2]
        if name in self.refs.values():
            module = reference.rpartition(".")[0].rpartition(".")[2]
            name = f"{module}_{name}"
        self.refs[reference] = name
        return name


def _refs_to_utils(value: Any, names: Names) -> Any:
    if isinstance(value, Ref):
        return Ref(f"utils.{names.add(str(value))}")
    if isinstance(value, dict):
        return {key: _refs_to_utils(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [_refs_to_utils(item, names) for item in value]
    return value


@dataclass
class ExportedTask:
    """One exported task or group: its full config and, for leaf tasks, what utils.py must provide for it."""

    source: SourceTask
    config: dict[str, Any]
    process_docs: str = ""
    """The source `process_docs` reference (leaf tasks)."""
    docs_function: str = ""
    """The utils.py function the YAML names as `process_docs`."""


def _group(source: SourceTask, names: Names, lmeval: bool) -> dict[str, Any]:
    aggregates = source.copy("aggregate_metric_list") or []
    for entry in aggregates:
        entry.setdefault("weight_by_size", False)  # lmms-eval's default; lm-eval's is true
        if isinstance(entry.get("aggregation"), Ref):
            entry["aggregation"] = "mean" if lmeval else _refs_to_utils(entry["aggregation"], names)
    body: dict[str, Any] = {"group": source.name, "task": source.copy("task"), "aggregate_metric_list": aggregates}
    if "metadata" in source.config:
        body["metadata"] = source.copy("metadata")
    return body


def _lmms_eval_task(source: SourceTask, names: Names, data: Mapping[str, Any]) -> ExportedTask:
    config = copy.deepcopy(dict(data))
    process_docs = source.hook("process_docs")
    docs_function = names.add(process_docs)
    for key, value in source.config.items():
        if key in DATA_KEYS or key == "process_docs":
            continue
        config[key] = _refs_to_utils(copy.deepcopy(value), names)
    config["process_docs"] = Ref(f"utils.{docs_function}")
    return ExportedTask(source, config, process_docs, docs_function)


def _lmeval_task(source: SourceTask, names: Names, data: Mapping[str, Any]) -> ExportedTask:
    config: dict[str, Any] = {**copy.deepcopy(dict(data)), "output_type": "generate_until",
                              "description": SYSTEM_FIELD}
    config.update({hook: Ref(f"utils.{hook}") for hook in LMEVAL_HOOKS})
    docs_function = f"{source.name}_docs"
    config["task"] = source.name
    config["process_docs"] = Ref(f"utils.{docs_function}")
    config["generation_kwargs"] = Block(source.generation_kwargs())
    config["metric_list"] = _refs_to_utils(source.copy("metric_list"), names)
    if "metadata" in source.config:
        config["metadata"] = source.copy("metadata")
    return ExportedTask(source, config, source.hook("process_docs"), docs_function)


def exported_tasks(benchmark: Benchmark, harness: str, names: Names) -> list[ExportedTask]:
    """Every exported task and group with its full config, in file order."""
    data = data_keys(benchmark)
    lmeval = harness == "lm-eval"
    found = []
    for source in exported_sources(benchmark):
        if source.is_group:
            found.append(ExportedTask(source, _group(source, names, lmeval)))
        elif lmeval:
            found.append(_lmeval_task(source, names, data))
        else:
            found.append(_lmms_eval_task(source, names, data))
    return found


def _order(config: Mapping[str, Any]) -> dict[str, Any]:
    first = [k for k in ("task", *DATA_KEYS, "output_type") if k in config]
    return {key: config[key] for key in [*first, *(k for k in config if k not in first)]}


def split_template(tasks: list[ExportedTask]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(the shared template, each task's own keys): keys with one value in every leaf task go to the template."""
    leaves = [t for t in tasks if not t.source.is_group]
    if not leaves:
        return {}, {t.source.name: t.config for t in tasks}
    shared = {key: value for key, value in _order(leaves[0].config).items()
              if key != "task" and all(key in t.config and t.config[key] == value for t in leaves)}
    own: dict[str, dict[str, Any]] = {}
    for task in tasks:
        if task.source.is_group:
            own[task.source.name] = task.config
            continue
        rest = {key: value for key, value in _order(task.config).items() if key not in shared}
        own[task.source.name] = {"include": "_default_template_yaml", **rest}
    return shared, own


def yaml_path(task: ExportedTask) -> Path:
    """The exported file name: the source file's name (flat folder)."""
    return Path(task.source.relative.name)
