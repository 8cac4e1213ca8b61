"""The one shape every benchmark core presents to harness glue: documents -> prompt -> reply -> record -> metrics.

Standard library only. A benchmark's core (`tasks/<benchmark>/core/`) exposes a module `core/task.py` whose
module-level names satisfy `CoreTask` below; nothing else in the project decides a score. The harness glue
(one lmms-eval adapter, one lm-eval adapter, the upstream exports' generated `utils.py`) is written once against
this shape and never per benchmark:

- `documents(rows)` turns release rows (plain dicts; media cells are passed through untouched, whatever the
  harness stores in them) into canonical documents; `VARIANTS[name](docs)` selects and decorates the documents of
  one task (a domain, an in-context seed, a coordinate convention...). Both are pure: lists of dicts in and out.
- `prompt(doc, settings, media)` returns a `Prompt`: an optional system text and the ordered user parts (text
  strings and media objects the `media` reader returned). `settings` is the task YAML's prompt configuration
  (lmms-eval's `lmms_eval_specific_kwargs`), so every wording is visible in the YAML.
- `score(doc, reply, judge=None)` returns the item's **record**: every field any metric reads, the headline
  included (the core decides correctness; glue never recomputes it). A judge, when a metric needs one, is passed
  in as a callable; without one those metrics are unscored with a reason, never guessed.
- optionally `text_prompt(doc, settings)`: the prompt for text-only backends, where it is not the system text
  leading the user turn's texts (Agent-X's paper protocol shows the query without its frame labels); and
  `MEDIA_FIELDS`, the document fields that hold media cells (lmms-eval hands its text hook documents without their
  image columns: the glue lays those fields out empty); and `IMAGE_MODE = None` where the reader must hand images
  over in their stored mode (RoboVista's image policy converts them itself), RGB otherwise.
- `METRICS` is the single table of metric names: each `Metric` says how to read its per-item value from a record
  (`view`; None = the item does not count for it), how to aggregate those values over all items gathered from all
  ranks (`aggregation`), and its direction. `TASK_METRICS[name]` lists the metrics one kind of task reports, in
  report order; the first is the record metric, which carries the whole record (logged once per sample).

Task YAMLs name metrics and aggregations that are generated from or checked against `METRICS`; no other file spells
a metric name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

Record = dict[str, Any]
View = Callable[[Mapping[str, Any]], Any]
Aggregation = Callable[[Sequence[Any]], float]
Variant = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def whole_record(record: Mapping[str, Any]) -> Any:
    """The view of a task's record metric: the record itself (its aggregation reads the headline field)."""
    return record


@dataclass(frozen=True)
class Metric:
    """One metric: its per-item view of the record, its aggregation over every item, its direction."""

    name: str
    view: View
    aggregation: Aggregation
    higher_is_better: bool = True
    description: str = ""


def metric_table(*metrics: Metric) -> dict[str, Metric]:
    """`METRICS` from its entries, in report order; a name given twice is an error."""
    table: dict[str, Metric] = {}
    for metric in metrics:
        if metric.name in table:
            raise ValueError(f"metric {metric.name!r} is defined twice")
        table[metric.name] = metric
    return table


@dataclass(frozen=True)
class Prompt:
    """What the model is asked: an optional system text and the ordered user parts (texts and media objects)."""

    system: str | None
    parts: tuple[Any, ...] = field(default_factory=tuple)

    def texts(self) -> list[str]:
        return [part for part in self.parts if isinstance(part, str)]

    def media(self) -> list[Any]:
        return [part for part in self.parts if not isinstance(part, str)]


class MediaReader(Protocol):
    """What the harness glue hands `prompt`: it knows where media lives (a dataset cell, a file of the dataset
    repository, a local folder); the core only decides which media go where and how they are prepared."""

    def image(self, cell: Any) -> Any:
        """A decoded `PIL.Image.Image` from a dataset cell (bytes/dict/image object) or a relative path: in RGB,
        or in its stored mode where the core declares `IMAGE_MODE = None`."""

    def video(self, path: str, n_frames: int) -> Any:
        """`n_frames` uniformly sampled frames (a list of images), or the video file's path where the harness
        hands native video to the model; the core declares `n_frames` and the glue logs it."""


Judge = Callable[[Sequence[Any]], Sequence[Any]]
"""A judge takes a benchmark's judge calls and returns one result per call (the core defines both types)."""


@runtime_checkable
class CoreTask(Protocol):
    """The module-level names of `tasks/<benchmark>/core/task.py` (checked by `check_core_task`)."""

    BENCHMARK: str
    METRICS: Mapping[str, Metric]
    TASK_METRICS: Mapping[str, tuple[str, ...]]
    VARIANTS: Mapping[str, Variant]

    def documents(self, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]: ...

    def prompt(self, doc: Mapping[str, Any], settings: Mapping[str, Any], media: MediaReader) -> Prompt: ...

    def score(self, doc: Mapping[str, Any], reply: object, judge: Judge | None = None) -> Record: ...


def check_core_task(core: Any) -> CoreTask:
    """`core` as a `CoreTask`, or a `TypeError` naming what is missing or inconsistent."""
    missing = [name for name in ("BENCHMARK", "METRICS", "TASK_METRICS", "VARIANTS", "documents", "prompt", "score")
               if not hasattr(core, name)]
    if missing:
        raise TypeError(f"{getattr(core, '__name__', core)} lacks {', '.join(missing)} (see adapters/core/task.py)")
    for kind, names in core.TASK_METRICS.items():
        unknown = [name for name in names if name not in core.METRICS]
        if unknown:
            raise TypeError(f"{core.BENCHMARK}: TASK_METRICS[{kind!r}] names {', '.join(unknown)}, not in METRICS")
    for kind, names in core.TASK_METRICS.items():
        if not names or core.METRICS[names[0]].view is not whole_record:
            raise TypeError(f"{core.BENCHMARK}: the first metric of TASK_METRICS[{kind!r}] must carry the record "
                            "(view=whole_record)")
    for name, metric in core.METRICS.items():
        if metric.name != name:
            raise TypeError(f"{core.BENCHMARK}: METRICS key {name!r} holds metric {metric.name!r}")
    result: CoreTask = core
    return result


def task_values(core: CoreTask, kind: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """What one item reports to the harness for a task of `kind`: the record under the first metric, each other
    metric's view (None where the item does not count). Every metric the task declares is present."""
    return {name: core.METRICS[name].view(record) for name in core.TASK_METRICS[kind]}


def aggregate(core: CoreTask, name: str, values: Sequence[Any]) -> float:
    """The metric over every item's value (gathered from all ranks); NaN when no item counts."""
    result = core.METRICS[name].aggregation(values)
    return float(result) if result is not None else math.nan


class ReportedCore:
    """A core whose tasks report only `reported` of its metrics (e.g. an export that leaves out the metrics it does
    not score): each kind lists those of its metrics, in order, and the first one of each kind carries the record
    (its aggregation views the records as the metric did). Documents, prompts and records are the core's own."""

    def __init__(self, core: CoreTask, reported: Sequence[str]) -> None:
        unknown = [name for name in reported if name not in core.METRICS]
        if unknown:
            raise ValueError(f"{core.BENCHMARK}: cannot report {', '.join(unknown)}, which METRICS lacks")
        self.core = core
        self.BENCHMARK = core.BENCHMARK
        self.VARIANTS = core.VARIANTS
        self.TASK_METRICS = {kind: tuple(name for name in names if name in reported)
                             for kind, names in core.TASK_METRICS.items()}
        firsts = {names[0] for names in self.TASK_METRICS.values() if names}
        self.METRICS = {name: _carrying_record(core.METRICS[name]) if name in firsts else core.METRICS[name]
                        for name in core.METRICS if name in reported}
        check_core_task(self)

    def documents(self, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return self.core.documents(rows)

    def prompt(self, doc: Mapping[str, Any], settings: Mapping[str, Any], media: MediaReader) -> Prompt:
        return self.core.prompt(doc, settings, media)

    def score(self, doc: Mapping[str, Any], reply: object, judge: Judge | None = None) -> Record:
        return self.core.score(doc, reply, judge)


def _carrying_record(metric: Metric) -> Metric:
    """`metric` carrying the whole record: its aggregation views each record first (None values pass through)."""
    if metric.view is whole_record:
        return metric

    def aggregation(values: Sequence[Any]) -> float:
        return metric.aggregation([value if value is None else metric.view(value) for value in values])

    return Metric(metric.name, whole_record, aggregation, metric.higher_is_better, metric.description)
