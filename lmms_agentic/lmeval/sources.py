"""lmms-eval task YAMLs as data: the source of every generated lm-eval task and every upstream export.

`read(path)` resolves a task YAML the way lmms-eval's loader does (`include:` is a shallow merge, later includes
lose to earlier ones and the file itself wins; a relative `dataset_kwargs.data_files` path is resolved against the
folder of the file that names it) but keeps `!function` references as `Ref` strings instead of importing them.
`source_tasks(benchmark)` lists a benchmark's tasks and groups (generated permutation tasks included), and
`SourceTask` answers what the generators need: the hooks, the `lmms_eval_specific_kwargs` entry lm-eval runs
with, the placeholder row, the generation settings and metrics.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.benchmarks import Benchmark


class Ref(str):
    """A `!function` reference (an absolute `package.module.function` string)."""


class SourceError(ValueError):
    """A task YAML cannot be translated; the message names the file and the key."""


class _Loader(yaml.SafeLoader):
    pass


def _function(loader: yaml.SafeLoader, node: yaml.Node) -> Ref:
    return Ref(str(loader.construct_scalar(node)))  # type: ignore[arg-type]


_Loader.add_constructor("!function", _function)


def _load(path: Path) -> dict[str, Any]:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader) or {}
    if not isinstance(data, dict):
        raise SourceError(f"{path}: a task YAML must be a mapping")
    files = (data.get("dataset_kwargs") or {}).get("data_files")
    if isinstance(files, dict):
        data["dataset_kwargs"]["data_files"] = {split: str((path.parent / name).resolve()) if isinstance(name, str)
                                                else name for split, name in files.items()}
    return data


def read(path: Path) -> dict[str, Any]:
    """The resolved config of one task YAML (`!function` kept as `Ref`)."""
    data = _load(path)
    includes = data.pop("include", None)
    if includes is None:
        return data
    merged: dict[str, Any] = {}
    for name in reversed([includes] if isinstance(includes, str) else list(includes)):
        merged.update(read((path.parent / name).resolve()))
    merged.update(data)
    return merged


# lmms-eval keys and what becomes of them under lm-eval
HOOKS = ("process_docs", "doc_to_messages", "doc_to_target", "process_results")
DROPPED = frozenset({
    "dataset_path", "dataset_kwargs", "test_split", "doc_to_visual", "doc_to_text", "lmms_eval_specific_kwargs",
    "reasoning_tags", "cluster_key", "process_results_use_image", "model_specific_generation_kwargs",
    "model_specific_target_kwargs", *HOOKS,
})
COPIED = frozenset({"task", "output_type", "generation_kwargs", "metric_list", "metadata"})
LMEVAL_OVERRIDES: Mapping[str, Any] = {"video_mode": "frames"}
"""lm-eval has no video input: tasks with a video mode sample frames (the benchmark's frame policy)."""


@dataclass(frozen=True)
class SourceTask:
    """One lmms-eval task or group of a benchmark."""

    name: str
    path: Path
    config: Mapping[str, Any]
    benchmark: Benchmark

    @property
    def is_group(self) -> bool:
        return "group" in self.config

    @property
    def relative(self) -> Path:
        """The YAML's path inside the benchmark folder (e.g. `permutations/robovista_circular.yaml`)."""
        return self.path.relative_to(self.benchmark.folder)

    def hook(self, key: str) -> str:
        value = self.config.get(key)
        if not isinstance(value, Ref):
            raise SourceError(f"{self.path}: {key} must be a `!function` reference for lm-eval (got {value!r})")
        return str(value)

    def kwargs(self) -> dict[str, Any]:
        """The `default` `lmms_eval_specific_kwargs` entry, with lm-eval's overrides (frames, never video)."""
        entries = self.config.get("lmms_eval_specific_kwargs") or {}
        chosen = dict(entries.get("default") or {})
        chosen.update({key: value for key, value in LMEVAL_OVERRIDES.items() if key in chosen})
        return chosen

    def placeholder(self, tasks_root: Path) -> str:
        """The placeholder row's file (lmms-eval's test split), relative to the task folder."""
        files = (self.config.get("dataset_kwargs") or {}).get("data_files") or {}
        split = self.config.get("test_split", "test")
        if not isinstance(files, dict) or split not in files:
            raise SourceError(f"{self.path}: dataset_kwargs.data_files.{split} (the placeholder row) is missing")
        return Path(files[split]).resolve().relative_to(tasks_root.resolve()).as_posix()

    def generation_kwargs(self) -> dict[str, Any]:
        """lm-eval's spelling: `max_gen_toks` for `max_new_tokens`; the rest as lmms-eval has it."""
        settings = dict(self.config.get("generation_kwargs") or {})
        if "max_new_tokens" in settings:
            settings = {("max_gen_toks" if key == "max_new_tokens" else key): value for key, value in settings.items()}
        if "temperature" in settings:
            settings["temperature"] = float(settings["temperature"])
        return settings

    def metric_names(self) -> list[str]:
        return [str(entry["metric"]) for entry in self.config.get("metric_list") or []]

    def unknown_keys(self) -> list[str]:
        return sorted(set(self.config) - DROPPED - COPIED - {"group", "aggregate_metric_list"})

    def copy(self, key: str) -> Any:
        return copy.deepcopy(self.config.get(key))


def source_tasks(benchmark: Benchmark) -> list[SourceTask]:
    """Every task and group YAML of a benchmark, in path order."""
    found = []
    for path in sorted(benchmark.folder.rglob("*.yaml")):
        config = read(path)
        name = config.get("group") if "group" in config else config.get("task")
        if isinstance(name, str):
            found.append(SourceTask(name, path, config, benchmark))
    return found


def all_sources(root: Path | None = None) -> dict[str, list[SourceTask]]:
    """Every benchmark's tasks, by benchmark name."""
    return {name: source_tasks(benchmark) for name, benchmark in benchmarks.all_benchmarks(root).items()}
