"""The plugin's lmms-eval hooks for any benchmark core, written once: the core wrapped in the plugin's extras.

A benchmark folder declares what the plugin needs beyond its core in one `PluginBenchmark` (how its release loads,
which document fields hold media cells, its judge, how its record says "answered", where a document's video is)
and binds the names its task YAMLs reference to one `PluginTask` (`tasks/<benchmark>/hooks.py`: bindings only).
Everything else is here, once for every benchmark:

- `process_docs(variant)`: the release's canonical documents (loaded, validated and located once per process by
  the benchmark's loader: data location, schema overrides, bad records, media integrity, provenance), selected by
  the core's `VARIANTS[variant]` without reading any media: the variant sees each media column as its row number,
  and every media field of a chosen document gets that row's cells back (a row's own images, or its in-context
  example's). Option-permutation tasks expand the result (`adapters.permutation.permutable`).
- the prompt: the core's `prompt(doc, settings, media)` with `PluginMedia`: strict image decoding
  (`adapters.media`), once per question (the rows of one question under option permutations share their media),
  files only inside the data folder (`adapters.data.resolve_media`), video frames sampled by `adapters.frames` or,
  with `video_mode: native`, the video file (`adapters.glue.hub_media.VideoFile`).
- `doc_to_visual`, `doc_to_text`, `doc_to_messages` from the core's `Prompt`, built as the upstream exports build
  them (`adapters.glue.lmms_eval_glue`: `visuals`, `text_prompt`, `chat_messages`; the task YAML's
  `lmms_eval_specific_kwargs` are the prompt settings).
- `process_results(kind)`: the core's record and metric values with the benchmark's judge passed in, the
  thinking-loop verdict, the video frames this process sampled, and the permutation rows
  (`adapters.samples.core_results_function`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
from PIL import Image

from lmms_agentic.adapters import frames
from lmms_agentic.adapters.core.task import CoreTask, Judge, Prompt
from lmms_agentic.adapters.data import resolve_media
from lmms_agentic.adapters.frames import IndexRule
from lmms_agentic.adapters.glue.hub_media import VideoFile, converts_to_rgb
from lmms_agentic.adapters.glue.lmms_eval_glue import PromptHooks
from lmms_agentic.adapters.media import as_pil, as_rgb, decoded_once
from lmms_agentic.adapters.permutation import permutable
from lmms_agentic.adapters.samples import (
    LOOP_VIEWS,
    ProcessResults,
    View,
    core_results_function,
    has_letter,
    read_record,
)

Kind = str | Callable[[Mapping[str, Any]], str]
"""A task's kind (`TASK_METRICS` key), or how a document names its own (tasks that mix kinds)."""


def _answer(doc: Mapping[str, Any]) -> str:
    return str(doc["answer"])


def _same(cell: str) -> str:
    return cell


@dataclass(frozen=True)
class PluginBenchmark:
    """What the plugin needs to know about a benchmark beyond its core (declared in its folder)."""

    core: CoreTask
    load: Callable[[], datasets.Dataset]
    """Every canonical document of the located release, media cells undecoded (cached by the loader)."""
    media_columns: Mapping[str, str] = field(default_factory=dict)
    """Document field -> release column: the variant's document holds a row number there, and gets that row's
    cells of the column (e.g. RoboVista's `icl_images` -> `images` of its in-context example's row)."""
    judge: Callable[[], Judge | None] = lambda: None
    """The judge the core may call (None: its rules only), asked once per scored item."""
    answered: Callable[[Mapping[str, Any]], bool] = has_letter
    """Whether the core's record holds an answer (the loop check's `answered`)."""
    video: Callable[[Mapping[str, Any]], str | None] | None = None
    """The document's video as the dataset names it, under `media_root` (None: the benchmark has no videos);
    the record logs it under `video` with the frames this process sampled from it."""
    target: Callable[[Mapping[str, Any]], str] = _answer
    loop_views: Mapping[str, View] = field(default_factory=lambda: dict(LOOP_VIEWS))
    """The thinking-loop metrics' views of the record (on the benchmark's scale)."""
    file_of: Callable[[str], str] = _same
    """The path under `media_root` of a media cell that names a file (the core's cell -> the release's path)."""
    file_field: str = "media"
    """The release field that names media files (in error messages)."""
    aggregations: str | None = None
    """A module with one aggregation function per metric (loop metrics included), named as the metric, that the
    task YAMLs reference instead of the core's own (Agent-X's adds the judge layer's coverage check); None: the
    core's functions, and `adapters.core.scores.mean_score` for the loop metrics."""


class PluginMedia:
    """The plugin's `MediaReader` for one document (see the module docstring)."""

    def __init__(self, benchmark: PluginBenchmark, doc: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
        self.benchmark = benchmark
        self.doc = doc
        self.settings = settings
        self.name = benchmark.core.BENCHMARK
        self.question = doc.get("group_id") or doc["id"]
        self._fields: dict[str, list[Image.Image]] = {}

    def _where(self, field_name: str) -> str:
        return f"{self.name} record {self.doc['id']!r}, {field_name}"

    def _decode(self, cell: Any, where: str) -> Image.Image:
        if converts_to_rgb(self.benchmark.core):
            return as_rgb(cell, where=where)
        image = as_pil(cell, where=where)
        image.load()
        return image

    def file(self, cell: str, field_name: str) -> Path:
        """The file a media cell names, inside the document's data folder."""
        return resolve_media(self.doc["media_root"], self.benchmark.file_of(cell), benchmark=self.name,
                             record_id=str(self.doc["id"]), field_name=field_name)

    def _cells(self, cell: Any) -> tuple[str, int] | None:
        for name in self.benchmark.media_columns:
            held = self.doc.get(name) or []
            for index, candidate in enumerate(held):
                if candidate is cell:
                    return name, index
        return None

    def image(self, cell: Any) -> Image.Image:
        """A decoded RGB image: one of the document's cells (its field decoded whole, once per question) or a file
        of the data folder the cell names."""
        found = self._cells(cell)
        if found is None and isinstance(cell, str):
            where = self._where(self.benchmark.file_field)
            return decoded_once((self.name, self.question, cell),
                                lambda: [self._decode(str(self.file(cell, self.benchmark.file_field)), where)])[0]
        if found is None:
            return self._decode(cell, self._where("images"))
        name, index = found
        if name not in self._fields:  # one cache lookup per field and document
            cells = list(self.doc.get(name) or [])

            def load() -> list[Image.Image]:
                return [self._decode(item, self._where(f"{name}[{i}]")) for i, item in enumerate(cells)]

            self._fields[name] = decoded_once((self.name, self.question, name), load)
        return self._fields[name][index]

    def _native(self) -> bool:
        mode = str(self.settings.get("video_mode", "frames"))
        if mode not in ("frames", "native"):
            raise ValueError(f"video_mode must be 'frames' or 'native', got {mode!r}")
        return mode == "native"

    def video(self, path: str, n_frames: int) -> tuple[Image.Image, ...] | VideoFile:
        """`n_frames` uniformly sampled frames, or (`video_mode: native`) the video file itself."""
        located = self.file(path, "video")
        if self._native():
            return VideoFile(str(located))
        return frames.sample_frames(located, n_frames).frames

    def video_frames(self, path: str, n_frames: int, rule: IndexRule) -> tuple[Image.Image, ...]:
        """`n_frames` frames picked by `rule` (a benchmark script's own sampling)."""
        return frames.sample_frames(self.file(path, "video"), n_frames, rule=rule).frames


def _bound_hooks(home: str) -> PluginTask:
    hooks: PluginTask = importlib.import_module(home).HOOKS
    return hooks


class PluginTask(PromptHooks):
    """The lmms-eval hooks of one benchmark's tasks (the names its YAMLs reference are bound to these): the prompt
    hooks as the upstream exports build them (`adapters.glue.lmms_eval_glue.PromptHooks`) on the plugin's media."""

    def __init__(self, benchmark: PluginBenchmark, home: str) -> None:
        self.benchmark = benchmark
        self.core = benchmark.core
        self.home = home
        """The module that binds these hooks under the name `HOOKS` (how a copy or a pickle finds them again)."""
        self._text_rows: dict[str, list[dict[str, Any]]] = {}
        self._results: dict[bool, dict[str, ProcessResults]] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> PluginTask:
        """The hooks themselves: the harness deep-copies task configs, whose hooks are this object's methods (its
        core is a module, which cannot be copied, and nothing in it changes)."""
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by reference: the `HOOKS` of the binding module (lmms-eval pickles task configs for workers)."""
        return (_bound_hooks, (self.home,))

    # ------------------------------------------------------------------ documents

    def all_docs(self) -> datasets.Dataset:
        """Every canonical document of the located release (loaded and validated once per process)."""
        return self.benchmark.load()

    def _rows(self, docs: datasets.Dataset) -> list[dict[str, Any]]:
        """The documents without media cells: each media column holds its row number (once per loaded table)."""
        key = docs._fingerprint
        if key not in self._text_rows:
            columns = sorted(set(self.benchmark.media_columns.values()) & set(docs.column_names))
            text = docs.remove_columns(columns).to_list() if columns else docs.to_list()
            self._text_rows[key] = [{**row, **dict.fromkeys(columns, index)} for index, row in enumerate(text)]
        return [dict(row) for row in self._text_rows[key]]

    def select_variant(self, variant: str) -> datasets.Dataset:
        """The documents of the core's variant `variant`, with their media cells (taken from the table undecoded)."""
        docs = self.all_docs()
        chosen = self.core.VARIANTS[variant](self._rows(docs))
        if not chosen:
            return docs.select([])
        order = list(chosen[0])
        media = [name for name in self.benchmark.media_columns if name in chosen[0]]
        columns = [datasets.Dataset.from_list([{k: v for k, v in doc.items() if k not in media} for doc in chosen])]
        for name in media:
            source = self.benchmark.media_columns[name]
            cells = docs.select([int(doc[name]) for doc in chosen]).select_columns([source]).flatten_indices()
            columns.append(cells.rename_column(source, name) if source != name else cells)
        return datasets.concatenate_datasets(columns, axis=1).select_columns(order)

    def process_docs(self, variant: str) -> Callable[[datasets.Dataset], datasets.Dataset]:
        """The `process_docs` of the core's variant `variant` (the YAML's placeholder row is replaced)."""
        if variant not in self.core.VARIANTS:
            raise KeyError(f"{self.core.BENCHMARK} has no variant {variant!r}")

        def process_docs(placeholder: datasets.Dataset) -> datasets.Dataset:
            return self.select_variant(variant)

        process_docs.__name__ = f"docs_{variant}"
        process_docs.__doc__ = f"process_docs of the core's variant `{variant}`."
        return permutable(process_docs)

    # ------------------------------------------------------------------ prompt

    def prompt(self, doc: Mapping[str, Any], settings: Mapping[str, Any] | None) -> Prompt:
        settings = settings or {}
        return self.core.prompt(doc, settings, PluginMedia(self.benchmark, doc, settings))

    def doc_to_target(self, doc: Mapping[str, Any]) -> str:
        return self.benchmark.target(doc)

    # ------------------------------------------------------------------ scoring

    def process_results(self, kind: Kind, *, judged: bool = True) -> ProcessResults:
        """The `process_results` of tasks of `kind`: every metric it declares (None where an item does not count),
        the loop metrics, and the record (the frames sampled from the document's video added)."""
        by_kind = self._by_kind(judged)

        def process_results(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
            values = by_kind[kind(doc) if callable(kind) else kind](doc, results)
            logged = read_record(values)
            if logged is not None and self.benchmark.video is not None:
                logged["video"] = self._frames_log(doc, self.benchmark.video(doc))
            return values

        process_results.__name__ = "process_results" if callable(kind) else f"process_results_{kind}"
        return process_results

    def _by_kind(self, judged: bool) -> dict[str, ProcessResults]:
        """The core's results function of each task kind (made once per hooks object and judge setting)."""
        if judged not in self._results:
            judge = self.benchmark.judge if judged else (lambda: None)
            self._results[judged] = {name: core_results_function(self.core, name, judge, self.benchmark.answered,
                                                                 self.benchmark.loop_views)
                                     for name in self.core.TASK_METRICS}
        return self._results[judged]

    def _frames_log(self, doc: Mapping[str, Any], shown: str | None) -> dict[str, Any] | None:
        if not shown:
            return None
        located = resolve_media(doc["media_root"], shown, benchmark=self.core.BENCHMARK, record_id=str(doc["id"]),
                                field_name="video")
        return frames.frames_log(located, shown)

    def record(self, doc: Mapping[str, Any], results: list[Any], kind: Kind, *, judged: bool = True
               ) -> dict[str, Any]:
        """The sample record `process_results` logs for `doc`."""
        logged = read_record(self.process_results(kind, judged=judged)(doc, results))
        if logged is None:
            raise ValueError(f"{self.core.BENCHMARK} record {doc['id']!r}: process_results returned no record")
        return logged
