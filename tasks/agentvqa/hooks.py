"""lmms-eval hooks for AgentVQA: the core (`core/task.py`) plus the plugin's extras around it.

The core decides the documents of each variant, the prompt, the record and every metric value; here are only the
plugin's extras: loading (`adapters.documents.load_canonical` with the release schema of `release.py`: data
location, schema overrides, bad records, media integrity), the image size of coordinate items read from any image
cell (`core.documents.with_image_size`), the data location written into every row (`media_root`, where its video
lives), strict image decoding and the decoded-media cache (`adapters.media`), video location and frame decoding
(`adapters.frames`, the frames log in each record), the MCQ judge fallback passed to the core's scorer, the thinking-
loop verdict and option permutations (`adapters.samples.core_results_function`). Task-variant settings that change
what the model sees — domain, coordinate convention, action history on/off — are the core's `VARIANTS`, chosen by
the `process_docs` reference in the task YAML. The prompt wording and the video mode (task-side frames, or the video
path for backends with native video) are configuration in `lmms_eval_specific_kwargs`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import datasets
from PIL import Image

from lmms_agentic.adapters import frames
from lmms_agentic.adapters.data import Location, resolve_media
from lmms_agentic.adapters.documents import load_canonical
from lmms_agentic.adapters.media import as_pil, as_rgb, decoded_once
from lmms_agentic.adapters.permutation import permutable
from lmms_agentic.adapters.samples import core_results_function, read_record
from lmms_agentic.judges.mcq_fallback import McqExtraction, extract_with_fallback, mcq_judge_enabled
from lmms_agentic.tasks.agentvqa import release
from lmms_agentic.tasks.agentvqa.core import documents, prompt, task
from lmms_agentic.tasks.agentvqa.core.records import BENCHMARK

IMAGES = documents.IMAGES
DEFAULT_CONVENTION = documents.DEFAULT_CONVENTION


# --------------------------------------------------------------------------- loading (process_docs)

def _loaded() -> tuple[datasets.Dataset, Location]:
    return load_canonical(BENCHMARK, release.SCHEMA, release.normalise, IMAGES, check=release.check_columns,
                          finish=_with_image_sizes)


def _with_image_sizes(docs: datasets.Dataset) -> datasets.Dataset:
    """Coordinate items without a recorded image size get their first image's size (read from its header, no
    decode; the cell may name a file of the data folder), so prompts and scoring render the same options; lmms-eval
    removes images before process_results."""
    metas = docs["metadata_json"]
    changed = list(metas)
    for index, raw in enumerate(metas):
        doc = {"metadata_json": raw}
        if documents.needs_image_size(doc):
            cells = docs[index][IMAGES] or []
            if cells:
                with as_pil(cells[0], where=f"agentvqa record {docs[index]['id']!r}, {IMAGES}[0]") as image:
                    changed[index] = documents.with_image_size(doc, image.size)["metadata_json"]
    if changed == metas:
        return docs
    return docs.remove_columns(["metadata_json"]).add_column("metadata_json", changed)


def all_docs() -> datasets.Dataset:
    """All AgentVQA rows in canonical form (loaded and validated once per process and location)."""
    return _loaded()[0]


@functools.lru_cache(maxsize=4)
def _text_docs(docs: datasets.Dataset) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The documents without their image cells (what the core's variants read), and each id's row."""
    text = docs.remove_columns([IMAGES]) if IMAGES in docs.column_names else docs
    rows: list[dict[str, Any]] = text.to_list()
    return rows, {str(row["id"]): index for index, row in enumerate(rows)}


def select_variant(name: str) -> datasets.Dataset:
    """The rows of the core's variant `name` (`core.documents.VARIANTS`), their images and the data location."""
    docs, location = _loaded()
    rows, index = _text_docs(docs)
    chosen = task.VARIANTS[name](rows)
    columns = [datasets.Dataset.from_list(chosen)]
    if IMAGES in docs.column_names:
        columns.append(docs.select([index[str(doc["id"])] for doc in chosen]).select_columns([IMAGES])
                       .flatten_indices())
    columns.append(datasets.Dataset.from_dict({"media_root": [location.root or ""] * len(chosen)}))
    return datasets.concatenate_datasets(columns, axis=1)


# process_docs of every task: one per domain and coordinate convention, plus the history ablation
@permutable
def docs_web_agents(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("web_agents")


@permutable
def docs_web_agents_norm1000_yx(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("web_agents_norm1000_yx")


@permutable
def docs_web_agents_norm1000_xy(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("web_agents_norm1000_xy")


@permutable
def docs_egocentric_videos(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("egocentric_videos")


@permutable
def docs_egocentric_videos_norm1000_yx(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("egocentric_videos_norm1000_yx")


@permutable
def docs_egocentric_videos_norm1000_xy(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("egocentric_videos_norm1000_xy")


@permutable
def docs_games(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("games")


@permutable
def docs_games_norm1000_yx(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("games_norm1000_yx")


@permutable
def docs_games_norm1000_xy(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("games_norm1000_xy")


@permutable
def docs_spatial_planning(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("spatial_planning")


@permutable
def docs_spatial_planning_norm1000_yx(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("spatial_planning_norm1000_yx")


@permutable
def docs_spatial_planning_norm1000_xy(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("spatial_planning_norm1000_xy")


@permutable
def docs_robotics(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("robotics")


@permutable
def docs_robotics_norm1000_yx(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("robotics_norm1000_yx")


@permutable
def docs_robotics_norm1000_xy(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("robotics_norm1000_xy")


@permutable
def docs_web_agents_nohistory(placeholder: datasets.Dataset) -> datasets.Dataset:
    """The history ablation: trajectory questions without their previous actions."""
    return select_variant("web_agents_nohistory")


# --------------------------------------------------------------------------- visuals and prompt

class Media:
    """The plugin's `MediaReader` for one document: strict image decoding, once per question (rows of one question
    under option permutations share their media), and the video inside the dataset folder, as `n_frames` sampled
    frames or, for `video_mode: native`, its path (a `Path`, so a prompt never mistakes it for text)."""

    def __init__(self, doc: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
        self.doc = doc
        self.settings = settings

    def _decoded(self) -> list[Image.Image]:
        """Every image of the document, decoded the first time any row of its question asks."""
        cells = self.doc.get(IMAGES) or []

        def load() -> list[Image.Image]:
            return [as_rgb(cell, where=f"agentvqa record {self.doc['id']!r}, {IMAGES}[{i}]")
                    for i, cell in enumerate(cells)]

        return decoded_once((BENCHMARK, self.doc.get("group_id") or self.doc["id"], IMAGES), load)

    def image(self, cell: Any) -> Image.Image:
        """One of the document's image cells, decoded (the core passes the document's own cells, in order)."""
        cells = self.doc.get(IMAGES) or []
        position = next((i for i, held in enumerate(cells) if held is cell), None)
        if position is None:
            return as_rgb(cell, where=f"agentvqa record {self.doc['id']!r}, {IMAGES}")
        return self._decoded()[position]

    def video(self, path: str, n_frames: int) -> tuple[Image.Image, ...] | Path:
        located = resolve_media(self.doc["media_root"], path, benchmark=BENCHMARK, record_id=self.doc["id"],
                                field_name="video")
        mode = self.settings["video_mode"]
        if mode == "native":
            return Path(str(located))
        if mode == "frames":
            return frames.sample_frames(located, n_frames).frames
        raise ValueError(f"video_mode must be 'frames' or 'native', got {mode!r}")


def visuals(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> list[prompt.Visual]:
    """Images in dataset order; for a video, `n_frames` uniform frames (task-side) or the video path."""
    shown = prompt.visuals(doc, kwargs, Media(doc, kwargs))
    return [str(item) if isinstance(item, Path) else item for item in shown]


def doc_to_visual(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[prompt.Visual]:
    return visuals(doc, lmms_eval_specific_kwargs)


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> str:
    return prompt.prompt_text(doc, lmms_eval_specific_kwargs)


def doc_to_messages(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One user turn: visuals first (images, frames or the video), then the text; no system prompt."""
    shown = task.prompt(doc, lmms_eval_specific_kwargs, Media(doc, lmms_eval_specific_kwargs))
    (text,) = shown.texts()
    return prompt.Prompt(shown.media(), text).messages()


def doc_to_target(doc: Mapping[str, Any]) -> str:
    return str(doc["answer"])


# --------------------------------------------------------------------------- scoring

def _verdict(extraction: McqExtraction) -> task.ChoiceVerdict:
    return task.ChoiceVerdict(extraction.letter, extraction.reason,
                              extraction.judge.as_dict() if extraction.judge is not None else None)


def mcq_fallback(calls: Sequence[task.ChoiceCall]) -> list[task.ChoiceVerdict]:
    """The core's `ChoiceJudge`: the LLM judge of `judges.mcq_fallback` on each reply the rules could not read."""
    return [_verdict(extract_with_fallback(call.reply, call.options, question=call.question, item_id=call.item_id,
                                           enabled=True)) for call in calls]


def _fallback() -> task.ChoiceJudge | None:
    """The judge the core may call: the MCQ fallback when LMMS_AGENTIC_MCQ_JUDGE=1 (off by default)."""
    return mcq_fallback if mcq_judge_enabled() else None


_BY_DOMAIN = {kind: core_results_function(task, kind, judge=_fallback) for kind in task.TASK_METRICS}


def process_results(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The core's record and metric values for the document's domain task (`adapters.samples`), plus the video
    frames this process sampled in the record."""
    values = _BY_DOMAIN[str(doc["domain"])](doc, results)
    logged = read_record(values)
    if logged is not None:
        logged["video"] = frames.frames_log(_video_path(doc), doc["video"]) if doc.get("video") else None
    return values


def _video_path(doc: Mapping[str, Any]) -> str:
    return str(resolve_media(doc["media_root"], doc["video"], benchmark=BENCHMARK, record_id=doc["id"],
                             field_name="video"))


def record(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The sample record `process_results` logs for `doc`."""
    logged = read_record(process_results(doc, results))
    if logged is None:
        raise ValueError(f"agentvqa record {doc['id']!r}: process_results returned no record")
    return logged
