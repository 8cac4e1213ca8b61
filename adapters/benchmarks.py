"""The benchmark registry: what each task folder declares about itself in `tasks/<benchmark>/benchmark.json`.

Every shared tool (data location, demo, report, permutation generator, baselines, contract tests, the README's
data table) learns about the benchmarks from these manifests, never from a list in code, so adding a benchmark
touches only its own folder. The manifest is also the one-row placeholder dataset that the benchmark's task YAMLs
give lmms-eval (`dataset_kwargs.data_files`); `process_docs` replaces it with the real rows.

Manifest fields (see any `tasks/*/benchmark.json`):

- `name`, `title`, `paper`: identity; `name` is the folder name and the prefix of every task name.
- `data`: `hub_id`, `split`, `revision` (pinned commit, "" until pinned), `config`, `snapshot` (the Hub repository
  keeps media next to the table: download the whole snapshot and read it like a local copy), `expected_rows`,
  `schema_assumed` (true while the release's column layout could not be read and the reader follows the paper).
- `mcq`: multiple choice (permutation variants, constant-letter baselines); `n_options`: options per question.
- `headline`: the metric lmms-eval reports as the benchmark score (`metric`), its `scale` ("percent" or "unit",
  i.e. 0-1), and for MCQ benchmarks the per-sample record field it counts (`correct_field`).
- `breakdowns`: record fields the report breaks the score down by (domain first).
- `required_kwargs`: the keys every `lmms_eval_specific_kwargs` entry must restate (lmms-eval replaces, not merges).
- `demo`: the tasks `make demo` runs with the constant-answer model (`dummy`) and with the tiny VLM (`tiny_vlm`).
- `judge` (optional): present when metrics are scored by an LLM judge; `paper_judge` names the judge of the paper's
  headline table (the report compares a run without a judge name against it).
- `profile` (optional): metrics the multi-model report shows side by side per model, as a table and a chart (for
  benchmarks whose score is a profile of metrics rather than one accuracy).
- `protocols` (optional): the published protocols `reproduce` can run: `default`, `tasks` (protocol -> the task that
  runs it; the `protocol` column of `reference.csv` names them) and `published_in` (protocol -> the paper's table);
  without it the benchmark has one protocol, `default`, run by the task named like the benchmark.
- `unreproducible` (optional): model names of `reference.csv` that no preset reproduces -> why (a test checks that
  every model name there is either some preset's or listed here).

Reading is lazy (first use) and cached per task folder; nothing happens at import.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lmms_agentic.adapters.data import DataSource
from lmms_agentic.adapters.interface import BenchmarkPackage, check_package

MANIFEST = "benchmark.json"
Scale = Literal["percent", "unit"]


class ManifestError(ValueError):
    """A `benchmark.json` is malformed; the message names the file and the key."""


@dataclass(frozen=True)
class Benchmark:
    """One benchmark as its folder declares it."""

    name: str
    title: str
    paper: str
    folder: Path
    source: DataSource
    expected_rows: int | None
    mcq: bool
    n_options: int | None
    headline_metric: str
    scale: Scale
    correct_field: str | None
    breakdowns: tuple[str, ...]
    required_kwargs: frozenset[str]
    demo_tasks: tuple[str, ...]
    tiny_vlm_tasks: tuple[str, ...]
    schema_assumed: bool = False
    paper_judge: str | None = None
    profile: tuple[str, ...] = ()
    default_protocol: str = "default"
    protocol_tasks: Mapping[str, str] = field(default_factory=dict)
    protocol_sources: Mapping[str, str] = field(default_factory=dict)
    unreproducible: Mapping[str, str] = field(default_factory=dict)

    @property
    def judged(self) -> bool:
        """Whether some metrics of this benchmark are scored by an LLM judge."""
        return self.paper_judge is not None

    @property
    def manifest_path(self) -> Path:
        return self.folder / MANIFEST

    def task_files(self) -> dict[str, Path]:
        """Task and group names defined in this folder (generated permutation tasks included) -> YAML file."""
        return _task_index(self.folder)

    def package(self) -> BenchmarkPackage:
        """The benchmark's code, `tasks/<name>/__init__.py`, checked against `adapters.interface` (imported on first
        use; the one place a benchmark is imported by its name)."""
        return _package(self.name, self.folder)


def _get(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], path: Path) -> Any:
    if key not in data:
        raise ManifestError(f"{path}: key {key!r} is missing")
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise ManifestError(f"{path}: key {key!r} must be {kind}, got {type(value).__name__}")
    return value


def _strings(data: Mapping[str, Any], key: str, path: Path) -> tuple[str, ...]:
    values = _get(data, key, list, path)
    if not all(isinstance(v, str) for v in values):
        raise ManifestError(f"{path}: every entry of {key!r} must be a string")
    return tuple(values)


def _text_map(data: Mapping[str, Any], key: str, path: Path) -> dict[str, str]:
    value = data.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ManifestError(f"{path}: key {key!r} must be an object of strings")
    return dict(value)


def _protocols(data: Mapping[str, Any], name: str, path: Path) -> tuple[str, dict[str, str], dict[str, str]]:
    """(default protocol, protocol -> task, protocol -> where it is published)."""
    if "protocols" not in data:
        return "default", {"default": name}, {}
    entry = _get(data, "protocols", dict, path)
    default, tasks = _get(entry, "default", str, path), _text_map(entry, "tasks", path)
    if default not in tasks:
        raise ManifestError(f"{path}: protocols.default {default!r} is not one of protocols.tasks ({', '.join(tasks)})")
    return default, tasks, _text_map(entry, "published_in", path)


def read_manifest(path: Path) -> Benchmark:
    """Parse and validate one `benchmark.json`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ManifestError(f"{path}: cannot read the manifest ({exc})") from exc
    if not isinstance(data, dict):
        raise ManifestError(f"{path}: the manifest must be a JSON object")
    name = _get(data, "name", str, path)
    if name != path.parent.name:
        raise ManifestError(f"{path}: name {name!r} must equal the folder name {path.parent.name!r}")
    source_data = _get(data, "data", dict, path)
    headline = _get(data, "headline", dict, path)
    scale = _get(headline, "scale", str, path)
    if scale not in ("percent", "unit"):
        raise ManifestError(f"{path}: headline.scale must be 'percent' or 'unit', got {scale!r}")
    mcq = _get(data, "mcq", bool, path)
    n_options = data.get("n_options")
    if mcq and (not isinstance(n_options, int) or not 2 <= n_options <= 10):
        raise ManifestError(f"{path}: an MCQ benchmark needs n_options between 2 and 10")
    correct_field = headline.get("correct_field")
    if mcq and not isinstance(correct_field, str):
        raise ManifestError(f"{path}: an MCQ benchmark needs headline.correct_field")
    demo = _get(data, "demo", dict, path)
    default_protocol, protocol_tasks, protocol_sources = _protocols(data, name, path)
    expected = source_data.get("expected_rows")
    judge = data.get("judge")
    if judge is not None and not isinstance(judge, dict):
        raise ManifestError(f"{path}: key 'judge' must be an object like {{\"paper_judge\": \"GPT-4o\"}}")
    return Benchmark(
        name=name,
        title=_get(data, "title", str, path),
        paper=str(data.get("paper", "")),
        folder=path.parent,
        source=DataSource(
            benchmark=name,
            hub_id=_get(source_data, "hub_id", str, path),
            split=_get(source_data, "split", str, path),
            revision=source_data.get("revision") or None,
            config=source_data.get("config") or None,
            snapshot=bool(source_data.get("snapshot", False)),
        ),
        expected_rows=expected if isinstance(expected, int) else None,
        mcq=mcq,
        n_options=n_options if mcq else None,
        headline_metric=_get(headline, "metric", str, path),
        scale="percent" if scale == "percent" else "unit",
        correct_field=correct_field if isinstance(correct_field, str) else None,
        breakdowns=_strings(data, "breakdowns", path),
        required_kwargs=frozenset(_strings(data, "required_kwargs", path)),
        demo_tasks=_strings(demo, "dummy", path),
        tiny_vlm_tasks=_strings(demo, "tiny_vlm", path),
        schema_assumed=bool(source_data.get("schema_assumed", False)),
        paper_judge=None if judge is None else _get(judge, "paper_judge", str, path),
        profile=_strings(data, "profile", path) if "profile" in data else (),
        default_protocol=default_protocol,
        protocol_tasks=protocol_tasks,
        protocol_sources=protocol_sources,
        unreproducible=_text_map(data, "unreproducible", path),
    )


def tasks_root() -> Path:
    """The installed task folder (`lmms_agentic.tasks`)."""
    from lmms_agentic import tasks_dir

    return Path(tasks_dir())


@functools.cache
def _registry(root: Path) -> dict[str, Benchmark]:
    found = {}
    for manifest in sorted(root.glob(f"*/{MANIFEST}")):
        benchmark = read_manifest(manifest)
        found[benchmark.name] = benchmark
    return found


def all_benchmarks(root: Path | None = None) -> dict[str, Benchmark]:
    """Every benchmark under the task folder, by name (sorted)."""
    return _registry((root or tasks_root()).resolve())


def get(name: str, root: Path | None = None) -> Benchmark:
    """The benchmark called `name`; the error lists the known ones."""
    known = all_benchmarks(root)
    if name not in known:
        raise KeyError(f"no benchmark named {name!r}; known: {', '.join(known) or 'none'}")
    return known[name]


def mcq_benchmarks(root: Path | None = None) -> dict[str, Benchmark]:
    return {name: b for name, b in all_benchmarks(root).items() if b.mcq}


@functools.cache
def _names_loader() -> Any:
    """A YAML loader that reads task files without resolving `!function` (libyaml's when PyYAML has it: ~10x faster
    on our 100+ task files)."""
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class _Names(base):  # type: ignore[misc]
        pass

    _Names.add_constructor("!function", lambda loader, node: None)
    return _Names


@functools.cache
def _task_index(folder: Path) -> dict[str, Path]:
    """Task/group name -> YAML file for one benchmark folder (names only; `!function` is not resolved)."""
    import yaml

    loader = _names_loader()
    index: dict[str, Path] = {}
    for path in sorted(folder.rglob("*.yaml")):
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}
        name = data.get("group") if "group" in data else data.get("task")
        if isinstance(name, str):
            index[name] = path
    return index


@functools.cache
def _package(name: str, folder: Path) -> BenchmarkPackage:
    return check_package(name, importlib.import_module(f"lmms_agentic.tasks.{name}"), _group_metrics(folder))


@functools.cache
def _group_metrics(folder: Path) -> tuple[str, ...]:
    """Every metric the groups of one benchmark folder aggregate (`aggregate_metric_list`)."""
    import yaml

    found: list[str] = []
    for name, path in _task_index(folder).items():
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_names_loader()) or {}
        if data.get("group") == name:
            found += [str(entry["metric"]) for entry in data.get("aggregate_metric_list") or []]
    return tuple(found)


def benchmark_of_task(task: str, root: Path | None = None) -> Benchmark | None:
    """The benchmark whose folder defines task or group `task` (None for tasks that are not ours)."""
    for benchmark in all_benchmarks(root).values():
        if task in benchmark.task_files():
            return benchmark
    return None


def clear_cache() -> None:
    """Forget what was read (tests that write task folders call this)."""
    _registry.cache_clear()
    _task_index.cache_clear()
    _package.cache_clear()
    _group_metrics.cache_clear()
