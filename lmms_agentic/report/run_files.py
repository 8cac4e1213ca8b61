"""Where a finished run's files are, which harness wrote them, and the run they make together: the one place the
analysis commands (`report`, `compare`, `rescore`, `reproduce --from`, `errors`) read a run folder.

Two output layouts are recognised (both may add a model sub-folder under ``--output_path``):

- lmms-eval: ``<stamp>_results.json`` and ``<stamp>_samples_<task>.jsonl`` (``--log_samples``);
- lm-evaluation-harness: ``results_<date>.json`` and ``samples_<task>_<date>.jsonl`` (``--log_samples``).

``read_results`` returns the results JSON in lmms-eval's shape (lm-eval's ``config.model_args`` dict becomes the
``k=v,...`` string lmms-eval writes, and the task kwargs lmms-agentic's generated lm-eval tasks carry in
``dataset_kwargs.lmms_agentic.kwargs`` become lmms-eval's ``lmms_eval_specific_kwargs``), with ``harness`` added.
``open_run(path)`` gives a `RunFiles`: the results of every results file under ``path`` of one model, combined task by
task (a task evaluated in several runs comes from the newest), the sample file of each task, and ``notes`` saying what
was combined or superseded, so a folder holding a RoboVista run and a later Agent-X run of the same model reports both.
Runs of different models in one folder stop with the folders to pass instead. ``sample_lines`` reads a sample file,
naming the file and line of a damaged (e.g. truncated) line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LMMS_EVAL, LM_EVAL = "lmms-eval", "lm-eval"
_LMMS_RESULTS = re.compile(r"(?P<stamp>.+)_results\.json")
_LM_RESULTS = re.compile(r"results_(?P<stamp>.+)\.json")
_TABLES = ("results", "group_subtasks", "configs", "versions", "n-shot", "higher_is_better", "n-samples")
"""Per-task tables of a results file (combined task by task when a folder holds several runs)."""


class ReportInputError(ValueError):
    """An input is not a harness output (folder without results, unreadable results or sample file); the message
    names the path and the fix."""


class NoResultsError(ReportInputError, FileNotFoundError):
    """A folder holds no results file of either harness."""


@dataclass(frozen=True)
class ResultsFile:
    """One results file and the harness that wrote it."""

    path: Path
    harness: str
    stamp: str

    def sample_files(self) -> dict[str, Path]:
        """Task -> its sample file written with this results file."""
        folder = self.path.parent
        if self.harness == LMMS_EVAL:
            prefix = f"{self.stamp}_samples_"
            return {p.name.removeprefix(prefix).removesuffix(".jsonl"): p
                    for p in sorted(folder.glob(f"{glob_escape(prefix)}*.jsonl"))}
        suffix = f"_{self.stamp}.jsonl"
        return {p.name.removeprefix("samples_").removesuffix(suffix): p
                for p in sorted(folder.glob(f"samples_*{glob_escape(suffix)}"))}


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def classify(path: Path) -> ResultsFile | None:
    """The results file at ``path`` with its harness, or None when the name is neither harness's."""
    if (match := _LMMS_RESULTS.fullmatch(path.name)) is not None:
        return ResultsFile(path, LMMS_EVAL, match["stamp"])
    if (match := _LM_RESULTS.fullmatch(path.name)) is not None:
        return ResultsFile(path, LM_EVAL, match["stamp"])
    return None


def results_files(path: Path) -> list[ResultsFile]:
    """The results files at ``path`` (a results file, or a folder searched recursively), oldest first."""
    path = Path(path)
    if not path.exists():
        raise NoResultsError(f"{path}: no such file or folder")
    if path.is_file():
        found = classify(path)
        if found is None:
            raise ReportInputError(f"{path}: not a results file (lmms-eval writes <stamp>_results.json, lm-eval "
                                   "results_<date>.json); pass the run's --output_path folder")
        return [found]
    found_all = [rf for p in path.rglob("*.json") if (rf := classify(p)) is not None]
    if not found_all:
        raise NoResultsError(f"{path}: not an lmms-eval or lm-eval output (no *_results.json or results_*.json in "
                             "it; the harness writes one into its --output_path)")
    return sorted(found_all, key=lambda rf: (rf.stamp, str(rf.path)))


def _model_args_text(value: Any) -> str:
    if isinstance(value, Mapping):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return "" if value is None else str(value)


def read_results(results_file: ResultsFile | Path) -> dict[str, Any]:
    """The results JSON in lmms-eval's shape, with ``harness``; `ReportInputError` naming the file and the cause."""
    if isinstance(results_file, ResultsFile):
        rf: ResultsFile | None = results_file
        path = results_file.path
    else:
        path = Path(results_file)
        rf = classify(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{path}: unreadable results file ({exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        cut = " (the file ends early: the run was interrupted while writing it, or the disk was full)" \
            if not text.rstrip().endswith("}") else ""
        raise ReportInputError(f"{path}: not a valid results file, JSON error at line {exc.lineno} column "
                               f"{exc.colno}{cut}; rerun the evaluation or pass another run") from exc
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise ReportInputError(f"{path}: not an lmms-eval or lm-eval results file (no 'results' table)")
    config = data.get("config")
    if isinstance(config, dict) and isinstance(config.get("model_args"), Mapping):
        data["config"] = {**config, "model_args": _model_args_text(config["model_args"])}
    data["harness"] = rf.harness if rf is not None else LMMS_EVAL
    for task_config in (data.get("configs") or {}).values():
        plugin = ((task_config or {}).get("dataset_kwargs") or {}).get("lmms_agentic") if isinstance(
            task_config, dict) else None
        if isinstance(plugin, dict) and isinstance(plugin.get("kwargs"), dict):
            task_config.setdefault("lmms_eval_specific_kwargs", dict(plugin["kwargs"]))
    return data


def sample_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, sample line) of one sample file; a damaged line stops with the file, line and cause."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise ReportInputError(f"{path}: unreadable sample file ({exc})") from exc
    with handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except json.JSONDecodeError as exc:
                cut = "; it ends without a newline: the file was cut off (interrupted run or full disk)" \
                    if not text.endswith("\n") else ""
                raise ReportInputError(f"{path}, line {number}: not a JSON sample line ({exc.msg}{cut}); rerun "
                                       "the evaluation") from exc
            except UnicodeDecodeError as exc:
                raise ReportInputError(f"{path}, line {number}: not UTF-8 ({exc.reason})") from exc
            if not isinstance(line, dict):
                raise ReportInputError(f"{path}, line {number}: not a sample line (not a JSON object)")
            yield number, line


@dataclass
class RunFiles:
    """One model's finished run under ``path``: results combined over its results files (newest task wins)."""

    path: Path
    results_file: Path
    harness: str
    results: dict[str, Any]
    samples: dict[str, Path]
    sources: list[ResultsFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def stamp(self) -> str:
        rf = classify(self.results_file)
        return rf.stamp if rf is not None else self.results_file.stem

    def sample_file(self, task: str) -> Path | None:
        return self.samples.get(task)


def _leaves(groups: Mapping[str, list[str]], task: str) -> list[str]:
    if not groups.get(task):
        return [task]
    return [task] + [leaf for sub in groups[task] for leaf in _leaves(groups, sub)]


def top_level(results: Mapping[str, Any]) -> list[str]:
    """Tasks and groups that are not part of another group."""
    groups: Mapping[str, list[str]] = results.get("group_subtasks", {}) or {}
    members = {task for subtasks in groups.values() for task in subtasks}
    return [name for name in results.get("results", {}) if name not in members]


def _identity(results: Mapping[str, Any]) -> str:
    config = results.get("config") or {}
    name = results.get("model_name") or f"{config.get('model')} {config.get('model_args') or ''}".strip()
    return f"{results['harness']}: {name}"


def open_run(path: Path) -> RunFiles:
    """The run under ``path`` (module docstring); `ReportInputError` for bad inputs and for several models."""
    files = results_files(Path(path))
    loaded = [(rf, read_results(rf)) for rf in files]
    models: dict[str, list[Path]] = {}
    for rf, results in loaded:
        models.setdefault(_identity(results), []).append(rf.path)
    if len(models) > 1:
        listing = "; ".join(f"{name} in {', '.join(sorted({str(p.parent) for p in paths}))}"
                            for name, paths in models.items())
        raise ReportInputError(f"{path}: holds runs of {len(models)} models ({listing}); pass one model's folder "
                               "or results file (several folders give the multi-model report)")
    newest_rf, newest = loaded[-1]
    if len(loaded) == 1:
        return RunFiles(Path(path), newest_rf.path, newest_rf.harness, newest, newest_rf.sample_files(),
                        [newest_rf])
    owner: dict[str, int] = {}
    superseded: dict[str, list[str]] = {}
    for index, (_rf, results) in enumerate(loaded):
        groups = results.get("group_subtasks", {}) or {}
        for name in top_level(results):
            for task in _leaves(groups, name):
                if task in owner and task == name:
                    superseded.setdefault(loaded[owner[task]][0].path.name, []).append(task)
                owner[task] = index
    combined: dict[str, Any] = {key: value for key, value in newest.items() if key not in _TABLES}
    for key in _TABLES:
        combined[key] = {task: loaded[index][1].get(key, {})[task] for task, index in owner.items()
                         if task in (loaded[index][1].get(key) or {})}
    data: dict[str, Any] = {}
    for index in sorted(set(owner.values())):
        data.update(((loaded[index][1].get("lmms_agentic") or {}).get("data")) or {})
    if data:
        combined["lmms_agentic"] = {**(combined.get("lmms_agentic") or {}), "data": data}
    samples = {task: p for task, index in owner.items()
               if (p := loaded[index][0].sample_files().get(task)) is not None}
    used = sorted(set(owner.values()))
    notes = [f"combined {len(used)} runs of this model found under {path}: "
             + "; ".join(f"{loaded[i][0].path.name} ({', '.join(t for t in top_level(combined) if owner[t] == i)})"
                         for i in used)]
    notes += [f"older results of {', '.join(sorted(tasks))} in {name} are replaced by a newer run's"
              for name, tasks in sorted(superseded.items())]
    unused = [loaded[i][0].path.name for i in range(len(loaded)) if i not in used]
    if unused:
        notes.append(f"not used (every task re-run later): {', '.join(unused)}")
    limits = {str((results.get("config") or {}).get("limit")) for i, (_, results) in enumerate(loaded) if i in used}
    if len(limits) > 1:
        notes.append(f"the combined runs used different --limit values ({', '.join(sorted(limits))})")
        combined.setdefault("config", {})
        combined["config"] = {**combined["config"], "limit": next(
            (loaded[i][1].get("config", {}).get("limit") for i in used
             if loaded[i][1].get("config", {}).get("limit") is not None), None)}
    return RunFiles(Path(path), newest_rf.path, newest_rf.harness, combined, samples,
                    [loaded[i][0] for i in used], notes)
