"""From run folders to the viewer's data: runs (labelled as the reports label them), the overview, every sample's
list row and page, permutation siblings, and the disagreements of every pair of runs.

A folder holding runs of several models (``runs/demo``: the dummy model and the tiny VLM) is split into its model
folders; each is read through ``report.runs.load_run`` (lmms-eval's and lm-eval's layouts, several results files of
one model combined). Samples get the key ``<run>-<n>`` (``n`` counts the run's sample lines over its leaf tasks in
the results file's order). Two runs disagree on an item (same task, same record id) when one counts it right and
the other not, or when they read different answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.samples import read_record
from lmms_agentic.report import labels
from lmms_agentic.report.run_files import ReportInputError, results_files
from lmms_agentic.report.runs import Run, load_run
from lmms_agentic.viewer import overview, samples
from lmms_agentic.viewer.media import MediaResolver, MediaWriter, add_returned_images, run_data

Progress = Callable[[str], None]


@dataclass
class Sample:
    """One logged sample: its list row and its page."""

    key: str
    row: dict[str, Any]
    page: dict[str, Any]
    record: dict[str, Any]


@dataclass
class ViewedRun:
    index: int
    label: str
    run: Run
    samples: list[Sample] = field(default_factory=list)
    data_notes: list[str] = field(default_factory=list)


def expand(path: Path) -> list[Path]:
    """``path``, or its model folders when it holds runs of several models."""
    folders = sorted({rf.path.parent for rf in results_files(Path(path))})
    if len(folders) == 1:
        return [Path(path)]
    try:
        load_run(Path(path))
        return [Path(path)]
    except ReportInputError:
        return folders


def load_runs(paths: Sequence[Path], names: Sequence[str] | None = None) -> list[ViewedRun]:
    """The runs under ``paths`` with unique labels (``names`` replace the labels, one per path)."""
    loaded: list[tuple[Run, str]] = []
    for index, path in enumerate(paths):
        override = names[index] if names and index < len(names) else None
        loaded += [(load_run(folder, override), str(folder)) for folder in expand(path)]
    unique = labels.unique([run.label for run, _ in loaded], [Path(folder).name for _, folder in loaded])
    return [ViewedRun(index, label, run) for index, ((run, _), label) in enumerate(zip(loaded, unique, strict=True))]


def leaf_tasks(run: Run) -> list[str]:
    """The run's leaf tasks that logged samples, in the results file's order."""
    seen = dict.fromkeys(leaf for task in run.top_level() for leaf in run.leaves(task))
    return [task for task in seen if run.sample_file(task) is not None]


def collect(viewed: ViewedRun, resolver: MediaResolver | None, progress: Progress,
            writer: MediaWriter | None = None) -> None:
    """Fill ``viewed.samples`` (rows, pages, media; the images tools returned through ``writer``, else the
    resolver's), then mark flipped permutation questions."""
    writer = writer or (resolver.writer if resolver is not None else None)
    run = viewed.run
    with run_data(run) as where:
        viewed.data_notes = where
        place = "; ".join(where)
        for task in leaf_tasks(run):
            owner = benchmarks.benchmark_of_task(task)
            lines = run.lines(task)
            progress(f"{viewed.label}: {task} ({len(lines)} samples)")
            for line in lines:
                record = read_record(line)
                if record is None:
                    continue
                key = f"{viewed.index}-{len(viewed.samples)}"
                row = {"key": key, "run": viewed.index, **samples.summary(line, task, owner)}
                page = samples.detail(line, task, owner, viewed.label)
                page["key"] = key
                if writer is not None:
                    add_returned_images(writer, samples.rounds(record), page["rounds"])
                page.update(resolver.resolve(run, task, line, record, place) if resolver is not None else
                            {"media": [], "messages": None, "note": "media not resolved (--no-media)"})
                viewed.samples.append(Sample(key, row, page, record))
    _permutations(viewed)


def _permutations(viewed: ViewedRun) -> None:
    questions: dict[tuple[str, str], list[Sample]] = {}
    for sample in viewed.samples:
        if "group_id" in sample.record:
            questions.setdefault((sample.row["task"], str(sample.record["group_id"])), []).append(sample)
    for group in questions.values():
        group.sort(key=lambda s: int(s.record.get("perm_index", 0) or 0))
        flip = samples.flipped([s.record for s in group])
        orders = [{**samples.permutation_row(s.record, s.page["reply"]), "key": s.key} for s in group]
        for sample in group:
            sample.row["flipped"] = flip
            sample.page["permutations"] = orders
            sample.page["flipped"] = flip


def _verdict(sample: Sample) -> tuple[str, str]:
    return sample.row["status"], sample.row["pred"]


def disagreements(a: ViewedRun, b: ViewedRun) -> list[dict[str, Any]]:
    """The items both runs logged (same task and record id) where they disagree (module docstring)."""
    by_item = {(s.row["task"], s.row["id"]): s for s in b.samples}
    found = []
    for left in a.samples:
        right = by_item.get((left.row["task"], left.row["id"]))
        if right is None or _verdict(left) == _verdict(right):
            continue
        found.append({"task": left.row["task"], "id": left.row["id"], "domain": left.row["domain"],
                      "a": {"key": left.key, "status": left.row["status"], "pred": left.row["pred"]},
                      "b": {"key": right.key, "status": right.row["status"], "pred": right.row["pred"]}})
    return found


def shared_items(a: ViewedRun, b: ViewedRun) -> int:
    keys = {(s.row["task"], s.row["id"]) for s in b.samples}
    return sum((s.row["task"], s.row["id"]) in keys for s in a.samples)


def overview_rows(runs: Sequence[ViewedRun]) -> list[dict[str, Any]]:
    return [row for viewed in runs for row in overview.rows(viewed.run, viewed.index, viewed.label)]
