"""The generated part of a benchmark's exported folder: its `utils.py`, the hooks of its task YAMLs and their
metric blocks, all from the benchmark core's tables (`tasks/<b>/core/task.py`, `adapters.core.task.CoreTask`).

Each exported task reads one variant (`VARIANTS`) and reports one kind's metrics (`TASK_METRICS`): the variant is
the task's `process_docs` selection (`docs_<variant>`, or `load_docs` for every row; a benchmark's `upstream.py`
may name it in `TASK_VARIANTS`), the kind is the one whose metrics the task's YAML lists (the name of its
`process_results` hook, `process_results_<kind>`, else the variant's, breaks a tie). `utils.py` is nothing but
module-level assignments from the shared glue (`LmmsEvalHooks` / `LmEvalHooks`) and the core: one `process_docs`
per variant (lm-eval: per task, with the task's prompt settings), one `process_results` per kind, one aggregation
per aggregation function of the metrics (`aggregation_names`: metrics whose `METRICS` entries share one function
share its hook, named after the function; a metric with its own function has `<metric>_aggregation`).
The YAMLs' metric blocks list `TASK_METRICS[kind]` with each metric's aggregation and direction from `METRICS`.
A benchmark whose `upstream.py` names `REPORTED_METRICS` exports the core as `ReportedCore` (`exported_core`): its
tasks declare only those metrics (group lists too), and `utils.py` builds the same view of the copied core; its
lm-eval groups leave out `NOT_GROUPED_UNDER_LM_EVAL`. Its `SCRIPTS` are copied into the folder with the core's
imports rewritten (`script_files`).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.adapters.core.task import CoreTask, ReportedCore, check_core_task
from lmms_agentic.adapters.upstream import hooks_of
from lmms_agentic.lmeval.export import shared
from lmms_agentic.lmeval.export.layout import ExportedTask
from lmms_agentic.lmeval.sources import Ref, SourceTask

PLUGIN_ONLY_METRICS = ("loop_rate", "truncation_rate")
LMMS_EVAL_HOOKS = ("doc_to_visual", "doc_to_text", "doc_to_messages", "doc_to_target")
LM_EVAL_HOOKS = ("doc_to_image", "doc_to_text", "doc_to_target")
ALL_ROWS = ("load_docs",)
"""process_docs names that select every row (the core's `all` variant)."""


class GeneratedExportError(ValueError):
    """A task cannot be mapped onto the core's tables; the message names the task and the fix."""


@dataclass(frozen=True)
class CoreChoice:
    """What one exported task reads from the core: its variant, its kind and its prompt settings."""

    task: str
    variant: str
    kind: str
    settings: Mapping[str, Any]


def core_task(benchmark: str) -> CoreTask | None:
    """The benchmark's `core/task.py` as a `CoreTask`, or None while the benchmark has none."""
    name = f"{shared.ROOT}.tasks.{benchmark}.core.task"
    if importlib.util.find_spec(f"{shared.ROOT}.tasks.{benchmark}.core") is None or \
            importlib.util.find_spec(name) is None:
        return None
    return check_core_task(importlib.import_module(name))


def exported_core(benchmark: Benchmark) -> CoreTask | None:
    """The core as the export reports it: `core_task`, narrowed to the `REPORTED_METRICS` of its `upstream.py`."""
    core = core_task(benchmark.name)
    reported = getattr(hooks_of(benchmark), "REPORTED_METRICS", None)
    return core if core is None or reported is None else check_core_task(ReportedCore(core, reported))


def identifier(name: str) -> str:
    return re.sub(r"\W", "_", name)


def _variant(source: SourceTask, core: CoreTask, named: Mapping[str, str]) -> str:
    if source.name in named:
        return named[source.name]
    function = source.hook("process_docs").rpartition(".")[2]
    candidates = ["all"] if function in ALL_ROWS else [function.removeprefix("docs_"), function]
    found = next((c for c in candidates if c in core.VARIANTS), None)
    if found is None:
        raise GeneratedExportError(f"{source.name}: its process_docs {function} names no variant of the core "
                                   f"({', '.join(core.VARIANTS)}); name it in TASK_VARIANTS of its upstream.py")
    return found


def _kind(source: SourceTask, core: CoreTask, variant: str) -> str:
    listed = tuple(m for m in source.metric_names() if m not in PLUGIN_ONLY_METRICS and m in core.METRICS)
    matches = [kind for kind, names in core.TASK_METRICS.items() if tuple(names) == listed]
    hook = source.hook("process_results").rpartition(".")[2].removeprefix("process_results").lstrip("_")
    if len(matches) > 1 and (hook in matches or variant in matches):
        return hook if hook in matches else variant
    if not matches:
        raise GeneratedExportError(f"{source.name}: its metrics {list(listed)} are no TASK_METRICS entry of the core")
    return matches[0]


def choices(benchmark: Benchmark, core: CoreTask, tasks: Sequence[ExportedTask]) -> dict[str, CoreChoice]:
    """Every leaf task's variant, kind and prompt settings."""
    named: Mapping[str, str] = getattr(hooks_of(benchmark), "TASK_VARIANTS", {})
    found = {}
    for task in tasks:
        if task.source.is_group:
            continue
        source = task.source
        variant = _variant(source, core, named)
        found[source.name] = CoreChoice(source.name, variant, _kind(source, core, variant), source.kwargs())
    return found


def aggregation_names(core: CoreTask) -> dict[str, str]:
    """metric -> the `utils.py` name of its aggregation hook, for every metric of `METRICS` (in order). Metrics whose
    aggregation is one function (e.g. `mean_score`) share one hook named after it (`mean_score_aggregation`); a
    metric with its own function keeps `<metric>_aggregation` (also where the function's name is taken or generic)."""
    groups: dict[int, list[str]] = {}
    for name in core.METRICS:
        groups.setdefault(id(core.METRICS[name].aggregation), []).append(name)
    singles = {f"{identifier(name)}_aggregation" for names in groups.values() if len(names) == 1 for name in names}
    found: dict[str, str] = {}
    for names in groups.values():
        function = getattr(core.METRICS[names[0]].aggregation, "__name__", "")
        shared_name = f"{function}_aggregation"
        taken = shared_name in singles or shared_name in found.values() or not function.isidentifier()
        own = len(names) == 1 or taken or function.endswith("aggregation")
        found.update({name: f"{identifier(names[0] if own else function)}_aggregation" for name in names})
    return found


def metric_list(core: CoreTask, kind: str) -> list[dict[str, Any]]:
    """The YAML metric block of a task of `kind`."""
    names = aggregation_names(core)
    return [{"metric": name, "aggregation": Ref(f"utils.{names[name]}"),
             "higher_is_better": core.METRICS[name].higher_is_better} for name in core.TASK_METRICS[kind]]


def _core_import(reference: str, benchmark: str) -> tuple[str, str] | None:
    """(module file stem, function) of a reference into the shared or the benchmark core; None otherwise."""
    module, _, function = reference.rpartition(".")
    for prefix in (f"{shared.ROOT}.adapters.core.", f"{shared.ROOT}.tasks.{benchmark}.core."):
        if module.startswith(prefix) and "." not in module[len(prefix):]:
            return module[len(prefix):], function
    return None


@dataclass
class Imports:
    """Functions of the cores that YAMLs name besides the glue's hooks (e.g. a group's aggregation)."""

    benchmark: str
    harness: str
    names: dict[str, tuple[str, str]]

    def ref(self, reference: str, where: str) -> Ref:
        found = _core_import(reference, self.benchmark)
        if found is None:
            raise GeneratedExportError(f"{where} names {reference}, which is neither a glue hook nor a core function")
        self.names[found[1]] = found
        return Ref(f"utils.{found[1]}")

    def lines(self) -> list[str]:
        out = []
        for module, name in sorted(self.names.values()):
            package = (shared.shared_package(self.harness) if module in shared.CORE_MODULES
                       else f"{shared.HARNESS_PACKAGES[self.harness]}.tasks.{self.benchmark}")
            out.append(f"from {package}.{module} import {name}  # noqa: F401 (named by the YAMLs)")
        return out


def adapt(tasks: Sequence[ExportedTask], harness: str, core: CoreTask, chosen: Mapping[str, CoreChoice],
          imports: Imports) -> None:
    """Point every task's hooks and metric blocks at the generated `utils.py` (in place)."""
    for task in tasks:
        config = task.config
        if task.source.is_group:
            ungrouped = set(getattr(hooks_of(benchmarks.get(imports.benchmark)), "NOT_GROUPED_UNDER_LM_EVAL", ())) if (
                harness == "lm-eval") else set()
            kept = [e for e in config.get("aggregate_metric_list") or []
                    if e.get("metric") in core.METRICS and e.get("metric") not in ungrouped]
            if "aggregate_metric_list" in config:
                config["aggregate_metric_list"] = kept
            for entry in kept:
                original = next((e.get("aggregation") for e in task.source.config.get("aggregate_metric_list", [])
                                 if e.get("metric") == entry.get("metric")), None)
                if isinstance(original, Ref):
                    entry["aggregation"] = imports.ref(str(original), task.source.name)
            continue
        choice = chosen[task.source.name]
        hooks = LMMS_EVAL_HOOKS if harness == "lmms-eval" else LM_EVAL_HOOKS
        for hook in hooks:
            if harness == "lm-eval" or hook in config:
                config[hook] = Ref(f"utils.{hook}")
        docs = (f"process_docs_{identifier(choice.variant)}" if harness == "lmms-eval"
                else f"{identifier(choice.task)}_docs")
        config["process_docs"] = Ref(f"utils.{docs}")
        config["process_results"] = Ref(f"utils.process_results_{identifier(choice.kind)}")
        config["metric_list"] = metric_list(core, choice.kind)
        for key, value in list(config.items()):
            if isinstance(value, Ref) and key not in (*hooks, "process_docs", "process_results"):
                config[key] = imports.ref(str(task.source.config[key]), f"{task.source.name}.{key}")


def _literal(value: Any) -> str:
    text = json.dumps(value, indent=4, sort_keys=True, ensure_ascii=False)
    return text.replace(": true", ": True").replace(": false", ": False").replace(": null", ": None")


def _prompt_literal(settings: Mapping[str, Any], earlier: Mapping[str, Mapping[str, Any]]) -> str:
    """A task's prompt settings: as an earlier prompt's (the one that needs the fewest keys changed, among those
    whose keys it has) with the keys that differ, else in full."""
    changes = {name: {key: value for key, value in settings.items() if key not in base or base[key] != value}
               for name, base in earlier.items() if set(base) <= set(settings)}
    if not changes:
        return _literal(settings)
    base = min(changes, key=lambda name: len(changes[name]))
    return f"{{**{base}," + _literal(changes[base])[1:]


def utils_text(benchmark: Benchmark, harness: str, core: CoreTask, chosen: Mapping[str, CoreChoice],
               imports: Imports) -> str:
    """The folder's `utils.py`: assignments from the glue and the core's tables, nothing else."""
    module, hooks_class = shared.GLUE_CLASSES[harness]
    package = shared.HARNESS_PACKAGES[harness]
    revision = benchmark.source.revision or "main"
    release = release_file(benchmark)
    release_arg = f', release_file="{release}"' if release else ""
    reported = (f"from {shared.shared_package(harness)}.task import ReportedCore",
                f"REPORTED_METRICS = {tuple(core.METRICS)!r}") if isinstance(core, ReportedCore) else ()
    core_name = "ReportedCore(task, REPORTED_METRICS)" if reported else "task"
    lines = [f'"""{benchmark.title} hooks for {harness}: every name the task YAMLs reference, from the shared '
             f"glue (`{hooks_class}`)\nover this folder's core (`task`): one process_docs per "
             f"{'variant' if harness == 'lmms-eval' else 'task'}, one process_results per kind of task, one "
             'aggregation per aggregation function of the metrics."""', "",
             f"from {shared.shared_package(harness)}.{module} import {hooks_class}", *reported[:1],
             f"from {package}.tasks.{benchmark.name} import task", *imports.lines(), "", *reported[1:],
             f'HOOKS = {hooks_class}({core_name}, "{benchmark.source.hub_id}", "{revision}"{release_arg})', ""]
    hooks = LMMS_EVAL_HOOKS if harness == "lmms-eval" else LM_EVAL_HOOKS
    lines += [f"{hook} = HOOKS.{hook}" for hook in hooks] + [""]
    if harness == "lmms-eval":
        variants = sorted({c.variant for c in chosen.values()})
        lines += [f'process_docs_{identifier(v)} = HOOKS.process_docs("{v}")' for v in variants]
    else:
        prompts: dict[str, str] = {}
        earlier: dict[str, Mapping[str, Any]] = {}
        for choice in chosen.values():
            if _literal(choice.settings) not in prompts:
                name = prompts[_literal(choice.settings)] = f"PROMPT_{len(prompts) + 1}"
                lines.append(f"{name} = {_prompt_literal(choice.settings, earlier)}")
                earlier[name] = choice.settings
        lines.append("")
        lines += [f'{identifier(c.task)}_docs = HOOKS.process_docs("{c.variant}", {prompts[_literal(c.settings)]})'
                  for c in chosen.values()]
    lines += [""] + [f'process_results_{identifier(k)} = HOOKS.process_results("{k}")'
                     for k in sorted({c.kind for c in chosen.values()})]
    names = aggregation_names(core)
    shared_hooks: dict[str, str] = {}  # utils name -> the first metric (in the tasks' order) it aggregates
    for metric in (m for c in chosen.values() for m in core.TASK_METRICS[c.kind]):
        shared_hooks.setdefault(names[metric], metric)
    lines += [""] + [f'{name} = HOOKS.aggregation("{metric}")' for name, metric in shared_hooks.items()]
    return "\n".join(lines) + "\n"


def release_file(benchmark: Benchmark) -> str | None:
    """The keyed JSON release file the hooks read (a release with a `data.json` and no parquet), else None."""
    mini = benchmark.folder / "data" / "mini"
    if not mini.is_dir() or any(mini.rglob("*.parquet")):
        return None
    tables = sorted(p.name for p in mini.glob("*.json"))
    return tables[0] if tables else None


def core_files(benchmark: str, harness: str, left_out: Sequence[str], data_files: Sequence[str]) -> dict[str, str]:
    """file name -> text of the benchmark core's modules (imports rewritten) and the data files they read."""
    folder = Path(importlib.import_module(f"{shared.ROOT}.tasks.{benchmark}.core").__file__ or "").parent
    files = {}
    for path in sorted(folder.glob("*.py")):
        if path.stem in ("__init__", *left_out):
            continue
        text = shared.rewrite(path.read_text(encoding="utf-8"), harness, benchmark)
        files[path.name] = shared.checked(f"tasks/{benchmark}/core/{path.name}", text)
    target = f"{shared.HARNESS_PACKAGES[harness]}.tasks.{benchmark}"
    for name, text in files.items():
        missing = [m for m in left_out
                   if re.search(rf"from {re.escape(target)}(?:\.{m} import| import .*\b{m}\b)", text)]
        if missing:
            raise GeneratedExportError(f"{benchmark}: {name} imports {', '.join(missing)}, which the export leaves "
                                       "out (LEFT_OUT_CORE of its upstream.py)")
    files.update({name: (folder / name).read_text(encoding="utf-8") for name in data_files})
    return files


def script_files(benchmark: Benchmark, harness: str) -> dict[str, str]:
    """file name -> text of the benchmark's `SCRIPTS` (next to its `upstream.py`), their imports rewritten."""
    folder = benchmark.folder
    names: Sequence[str] = getattr(hooks_of(benchmark), "SCRIPTS", ())
    return {name: shared.checked(f"tasks/{benchmark.name}/{name}",
                                 shared.rewrite((folder / name).read_text(encoding="utf-8"), harness, benchmark.name))
            for name in names}
