"""One finished lmms-eval run as the multi-model report and `reproduce` read it, and its metrics with error bars.

``load_run(path)`` takes an lmms-eval or lm-eval ``--output_path`` folder (or a results file) and reads the run
through ``run_files.open_run`` (every results file of the model, combined task by task, with notes saying so), its
sample files, the ``reproduce.json`` manifest `reproduce` writes next to the run (if any) and the preset the run
used (from the manifest, else from the results' model arguments; see ``presets.for_run``).

``measure(run, task, metric)`` gives a metric's value with its standard error:

- the value is lmms-eval's number for the task or group (``results[task]["<metric>,none"]``); when lmms-eval has
  none (a group that does not aggregate that metric), the mean of the per-sample values pooled over the group's
  subtasks; for ``domain_<d>_acc`` of a group without that metric, the headline of its ``<task>_<d>`` subtask;
- the standard error comes from the per-sample values every sample line carries under the metric's name
  (``{"score": x}``, see ``adapters.samples``; the record-carrying metric's from the record, ``judged.line_value``;
  ``n`` counts the items with a value, so a judged metric's unscored items are left out): samples sharing an item
  id (ICL seeds, option permutations) are averaged first, so the error is clustered by item; right/wrong values
  use the plus-two estimate (``standard_error``); ``None`` when the metric has no per-sample values (e.g.
  calibration error).
"""

from __future__ import annotations

import functools
import json
import math
import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.samples import read_record
from lmms_agentic.report.judged import line_value
from lmms_agentic.report.labels import run_label
from lmms_agentic.report.run_files import ReportInputError, RunFiles, open_run, sample_lines

RUN_MANIFEST = "reproduce.json"
"""What `python -m lmms_agentic reproduce` writes into a run folder (preset, versions, data, seeds); read back here."""

_DOMAIN = re.compile(r"domain_(?P<domain>.+)_acc")


@dataclass(frozen=True)
class Measure:
    """A metric of one run: value on its benchmark's scale, standard error (None = unknown), items counted."""

    value: float
    se: float | None
    n: int
    source: str


@dataclass
class Run:
    """A finished lmms-eval run."""

    path: Path
    results_file: Path
    results: dict[str, Any]
    manifest: dict[str, Any] | None
    files: RunFiles | None = None
    label_override: str | None = None
    _lines: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def stamp(self) -> str:
        return self.files.stamp if self.files is not None else self.results_file.name.removesuffix("_results.json")

    @property
    def notes(self) -> list[str]:
        """What reading the folder combined or replaced (``run_files.open_run``)."""
        return list(self.files.notes) if self.files is not None else []

    @property
    def config(self) -> dict[str, Any]:
        config = self.results.get("config")
        return config if isinstance(config, dict) else {}

    @functools.cached_property
    def preset(self) -> Any:
        """The `presets.Preset` the run used, or None."""
        from lmms_agentic import presets

        name = (self.manifest or {}).get("preset", {}).get("name") if self.manifest else None
        if isinstance(name, str) and name in presets.all_presets():
            return presets.all_presets()[name]
        return presets.for_run(self.config)

    @property
    def label(self) -> str:
        """``--label``, else the preset's name, else the model id the backend was given (``labels.run_label``)."""
        return run_label(self.results, str(self.preset.name) if self.preset is not None else None,
                         self.label_override)

    def sample_file(self, task: str) -> Path | None:
        if self.files is not None:
            return self.files.sample_file(task)
        path = self.results_file.parent / f"{self.stamp}_samples_{task}.jsonl"
        return path if path.is_file() else None

    def leaves(self, task: str) -> list[str]:
        """The leaf tasks of a task or group (lmms-eval's `group_subtasks`, recursively)."""
        groups: Mapping[str, list[str]] = self.results.get("group_subtasks", {})
        if not groups.get(task):
            return [task]
        return [leaf for sub in groups[task] for leaf in self.leaves(sub)]

    def lines(self, task: str) -> list[dict[str, Any]]:
        """The sample lines of a leaf task ([] when it logged none)."""
        if task not in self._lines:
            path = self.sample_file(task)
            self._lines[task] = [line for _, line in sample_lines(path)] if path is not None else []
        return self._lines[task]

    def top_level(self) -> list[str]:
        """Tasks and groups that are not part of another group."""
        groups: Mapping[str, list[str]] = self.results.get("group_subtasks", {})
        members = {task for subtasks in groups.values() for task in subtasks}
        return [name for name in self.results["results"] if name not in members]

    def benchmarks(self) -> list[str]:
        """The benchmarks whose tasks the run evaluated (sorted)."""
        found = {owner.name for task in self.results["results"]
                 if (owner := benchmarks.benchmark_of_task(task)) is not None}
        return sorted(found)


def load_run(path: Path, label: str | None = None) -> Run:
    """The run under ``path`` (a folder or a results file, either harness), called ``label`` when given;
    ``ReportInputError`` names bad inputs."""
    files = open_run(Path(path))
    results_file, results = files.results_file, files.results
    manifest = None
    for folder in (results_file.parent, results_file.parent.parent):  # lmms-eval may add a model sub-folder
        candidate = folder / RUN_MANIFEST
        if candidate.is_file():
            try:
                manifest = json.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise ReportInputError(f"{candidate}: unreadable reproduce manifest ({exc})") from exc
            break
    return Run(Path(path), results_file, results, manifest, files, label)


def number(value: Any) -> float | None:
    """A finite float, or None (lmms-eval writes "N/A" and NaN for missing values)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def item_scores(run: Run, task: str, metric: str) -> dict[str, float]:
    """Per-item values of ``metric`` over the task's leaves, by item id (repeats of an item averaged: ICL seeds,
    option permutations)."""
    by_item: dict[str, list[float]] = {}
    for leaf in run.leaves(task):
        for line in run.lines(leaf):
            _, score, _ = line_value(line, metric)
            if score is None:
                continue
            record = read_record(line)
            key = str(record.get("group_id", record["id"])) if record is not None else f"{leaf}:{line.get('doc_id')}"
            by_item.setdefault(key, []).append(score)
    return {key: statistics.fmean(values) for key, values in by_item.items()}


def standard_error(scores: list[float], top: float = 100.0) -> float | None:
    """Standard error of a mean of per-item values on a 0..``top`` scale (100 for percentages, 1 for the unit
    scale); for right/wrong values (0 or ``top``) the plus-two estimate ``top``·√(p̃(1−p̃)/n) with p̃ = (k+1)/(n+2),
    which stays positive when every item agrees (a plain √(p(1−p)/n) would claim certainty from a handful of
    items)."""
    if len(scores) < 2:
        return None
    if all(s in (0.0, top) for s in scores):
        tilde = (sum(s / top for s in scores) + 1.0) / (len(scores) + 2.0)
        return top * math.sqrt(tilde * (1.0 - tilde) / len(scores))
    return statistics.stdev(scores) / math.sqrt(len(scores))


def measure(run: Run, task: str, metric: str) -> Measure | None:
    """``metric`` of ``task`` in ``run`` with its standard error (see the module docstring); None when the run
    has neither lmms-eval's number nor per-sample values for it."""
    row = run.results["results"].get(task)
    if not isinstance(row, dict):
        return None
    scores = list(item_scores(run, task, metric).values())
    reported = row.get(f"{metric},none")
    value = number(reported)
    source = "results"
    if value is None and scores:
        value, source = statistics.fmean(scores), "samples"
    if value is None:
        match = _DOMAIN.fullmatch(metric)
        owner = benchmarks.benchmark_of_task(task)
        subtask = f"{task}_{match['domain']}" if match else ""
        if match and owner is not None and subtask in run.results["results"]:
            found = measure(run, subtask, owner.headline_metric)
            return None if found is None else Measure(found.value, found.se, found.n, f"subtask {subtask}")
        if isinstance(reported, float) and math.isnan(reported):
            return Measure(math.nan, None, 0, "results")  # the task ran but has no value (e.g. no judge)
        return None
    owner = benchmarks.benchmark_of_task(task)
    top = 1.0 if owner is not None and owner.scale == "unit" else 100.0
    return Measure(value, standard_error(scores, top), len(scores), source)
