"""Core-based upstream export: the benchmark core as sibling modules plus a thin `utils.py` in the harness's idiom.

Every benchmark is exported this way, for both harnesses: what only the benchmark knows (its hooks, citation,
notes, the tasks left out) is its `tasks/<name>/upstream.py` (`adapters.upstream.UpstreamHooks`, reached through
`Benchmark.package().export_hooks()`). The folder holds the task YAMLs (from the benchmark's lmms-eval tasks, `layout`),
the copied core (`cores`), the benchmark's thin `utils.py`, a README in the harness's template (`readme`) and,
outside the folder, a test file (`testgen`). Differences from the plugin's tasks, all on purpose:

- data: `dataset_path` is the benchmark's Hub dataset with the manifest's revision (`main` plus a to-do comment
  when the manifest pins none); the plugin's data locations, schema overrides and bad-record skipping stay there;
- metrics: the plugin-only diagnostics (`PLUGIN_ONLY_METRICS`) are left out, and so are the metrics a benchmark's
  `REPORTED_METRICS` leaves out (e.g. judged metrics its tasks cannot score); every other metric keeps its name;
- metadata: only `version` (the plugin's own keys are dropped).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.adapters.core.task import CoreTask
from lmms_agentic.adapters.upstream import HooksRequest, hooks_of
from lmms_agentic.lmeval.export import cores, generated
from lmms_agentic.lmeval.export.layout import ExportedTask, Names, exported_tasks, split_template, yaml_path
from lmms_agentic.lmeval.generate import Block, dump
from lmms_agentic.lmeval.sources import Ref

PACKAGES = {"lmms-eval": "lmms_eval", "lm-eval": "lm_eval"}


@dataclass
class Generated:
    """The generated `utils.py` of a benchmark whose core has `task.py` (empty: the benchmark's own source)."""

    text: str = ""
    core: CoreTask | None = None
    chosen: dict[str, generated.CoreChoice] = field(default_factory=dict)
HARNESSES = ("lmms-eval", "lm-eval")


PLUGIN_ONLY_METRICS = ("loop_rate", "truncation_rate")
KEPT_METADATA = ("version",)
REVISION_TODO = "main  # TODO: pin the dataset commit (the exporting project pins none yet)"
HEADER = "# {title} ({benchmark})\n"


def _clean(config: dict[str, Any], revision: str | None) -> dict[str, Any]:
    """A task or group config without the plugin's metrics and metadata keys, with the revision set."""
    out = dict(config)
    for key in ("metric_list", "aggregate_metric_list"):
        if key in out:
            out[key] = [m for m in out[key] if m.get("metric") not in PLUGIN_ONLY_METRICS]
    if "metadata" in out:
        out["metadata"] = {k: v for k, v in out["metadata"].items() if k in KEPT_METADATA}
    if "dataset_path" in out:
        kwargs = dict(out.get("dataset_kwargs") or {})
        kwargs["revision"] = revision or "__REVISION__"
        out["dataset_kwargs"] = Block(kwargs)
    return out


def yaml_files(benchmark: Benchmark, harness: str, generated_utils: Generated | None = None
               ) -> tuple[list[ExportedTask], dict[str, str]]:
    """The exported tasks and the YAML text of each file (the shared template first); with `generated_utils`, the
    hooks and metric blocks are those of the generated `utils.py` (filled in)."""
    tasks = exported_tasks(benchmark, harness, Names())
    core = generated.exported_core(benchmark)
    if core is not None and generated_utils is not None:
        chosen = generated.choices(benchmark, core, tasks)
        imports = generated.Imports(benchmark.name, harness, {})
        generated.adapt(tasks, harness, core, chosen, imports)
        generated_utils.text = generated.utils_text(benchmark, harness, core, chosen, imports)
        generated_utils.core, generated_utils.chosen = core, chosen
    for task in tasks:
        if harness == "lm-eval" and not task.source.is_group and core is None:
            _lm_eval_hooks(task)
        task.config = _clean(task.config, benchmark.source.revision)
    template, own = split_template(tasks)
    header = HEADER.format(title=benchmark.title, benchmark=benchmark.name)

    def text(config: dict[str, Any]) -> str:
        revision = REVISION_TODO if core is None else "main"
        return (header + dump(config)).replace("revision: __REVISION__", f"revision: {revision}")

    files = {"_default_template_yaml": text(template)}
    files.update({str(yaml_path(task)): text(own[task.source.name]) for task in tasks})
    return tasks, files


def _rows_function(task: ExportedTask) -> str:
    return task.source.hook("process_docs").rpartition(".")[2]


def _lm_eval_hooks(task: ExportedTask) -> None:
    """lm-eval: each task scores with its own process_results (the source's), not one shared hook."""
    task.config["process_results"] = Ref(f"utils.{task.source.hook('process_results').rpartition('.')[2]}")


def _settings(leaves: list[ExportedTask]) -> dict[str, dict[str, Any]]:
    return {t.source.name: t.source.kwargs() for t in leaves}


def _rows_by_task(leaves: list[ExportedTask]) -> dict[str, str]:
    return {t.source.name: _rows_function(t) for t in leaves}


def utils_text(harness: str, benchmark: Benchmark, tasks: list[ExportedTask]) -> str:
    """The benchmark's thin `utils.py` for these tasks."""
    leaves = [t for t in tasks if not t.source.is_group]
    names = tuple(dict.fromkeys(m for t in leaves for m in t.source.metric_names() if m not in PLUGIN_ONLY_METRICS))
    request = HooksRequest(harness=harness, package=PACKAGES[harness], hub_id=benchmark.source.hub_id,
                           revision=benchmark.source.revision or None, metric_names=names,
                           settings=_settings(leaves), rows_by_task=_rows_by_task(leaves))
    own = hooks_of(benchmark)
    if not hasattr(own, "utils_source"):
        raise cores.CoreExportError(f"{benchmark.name}: its core has no task.py and its upstream.py no utils_source")
    text: str = own.utils_source(request)
    return text


def folder_files(benchmark: Benchmark, harness: str, readme: Callable[[Benchmark, str, list[ExportedTask]], str],
                 made: Generated | None = None) -> tuple[list[ExportedTask], dict[str, str]]:
    """Every file of the task folder (name -> text) and the exported tasks; `made`, when given, receives the
    generated `utils.py` with the core and the task choices behind it (a benchmark whose core has `task.py`)."""
    made = made if made is not None else Generated()
    tasks, files = yaml_files(benchmark, harness, made)
    own = hooks_of(benchmark)
    if made.text:
        files.update(generated.core_files(benchmark.name, harness, own.LEFT_OUT_CORE, own.DATA_FILES))
        files.update(generated.script_files(benchmark, harness))
        files["utils.py"] = made.text
        files["README.md"] = readme(benchmark, harness, tasks)
        return tasks, files
    core = cores.exported_core(benchmark.name, PACKAGES[harness], getattr(own, "SHARED_MODULES", ()),
                               own.LEFT_OUT_CORE)
    core_folder = cores.benchmark_folder(benchmark.name)
    core.update({name: (core_folder / name).read_text(encoding="utf-8") for name in own.DATA_FILES})
    clash = sorted(set(core) & {"utils.py", *files})
    if clash:
        raise cores.CoreExportError(f"core modules {clash} would replace a file of the task folder")
    files.update(core)
    files["utils.py"] = utils_text(harness, benchmark, tasks)
    files["README.md"] = readme(benchmark, harness, tasks)
    return tasks, files


def python_files(folder: Path, files: dict[str, str]) -> list[Path]:
    return [folder / name for name in sorted(files) if name.endswith(".py")]
