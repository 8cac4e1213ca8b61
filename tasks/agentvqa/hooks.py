"""lmms-eval hooks for AgentVQA: the core (`core/`) plus the plugin's extras around it.

Glue only: the core reads rows, renders options, builds the prompt and names the per-item fields; here are loading
(`adapters.documents.load_canonical` with the release schema of `release.py`) and variants (process_docs), strict image
decoding and the decoded-media cache (`adapters.media`), video location and frame decoding (`adapters.frames`), the
MCQ judge fallback, the sample-record contract (`adapters.samples`) with the metric views of `views.py`, and option
permutations. Task-variant settings that change what the model sees — domain, coordinate convention, action
history on/off — are chosen by the `process_docs` reference in the task YAML and written into every row, so prompts
read them from the document and every sample record logs them. The prompt wording and the video mode (task-side
frames, or the video path for backends with native video) are configuration in `lmms_eval_specific_kwargs`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import datasets
from PIL import Image

from lmms_agentic.adapters import frames
from lmms_agentic.adapters.data import Location, resolve_media
from lmms_agentic.adapters.documents import load_canonical, select_where
from lmms_agentic.adapters.media import as_pil, as_rgb, decoded_once
from lmms_agentic.adapters.permutation import permutable
from lmms_agentic.adapters.samples import mcq_record, response_text, results_function
from lmms_agentic.judges.mcq_fallback import extract_with_fallback
from lmms_agentic.tasks.agentvqa import release, views
from lmms_agentic.tasks.agentvqa.core import prompt, scoring
from lmms_agentic.tasks.agentvqa.core.records import BENCHMARK

IMAGES = "images"
DEFAULT_CONVENTION = "pixel_xy"


# --------------------------------------------------------------------------- loading (process_docs)

def _loaded() -> tuple[datasets.Dataset, Location]:
    return load_canonical(BENCHMARK, release.SCHEMA, release.normalise, IMAGES, check=release.check_columns,
                          finish=_with_image_sizes)


def _with_image_sizes(docs: datasets.Dataset) -> datasets.Dataset:
    """Coordinate items without a recorded image size get their first image's size (read from its header, no
    decode), so prompts and scoring render the same options; lmms-eval removes images before process_results."""
    metas = docs["metadata_json"]
    changed = list(metas)
    for index, raw in enumerate(metas):
        meta = json.loads(raw)
        if meta.get("option_coordinates") and not (meta.get("image_width") and meta.get("image_height")):
            cells = docs[index][IMAGES] or []
            if cells:
                with as_pil(cells[0], where=f"agentvqa record {docs[index]['id']!r}, {IMAGES}[0]") as image:
                    meta["image_width"], meta["image_height"] = image.size
                changed[index] = json.dumps(meta, sort_keys=True, ensure_ascii=False)
    if changed == metas:
        return docs
    return docs.remove_columns(["metadata_json"]).add_column("metadata_json", changed)


def all_docs() -> datasets.Dataset:
    """All AgentVQA rows in canonical form (loaded and validated once per process and location)."""
    return _loaded()[0]


def select_variant(domain: str, convention: str = DEFAULT_CONVENTION, history: bool = True) -> datasets.Dataset:
    """One domain's rows with the variant's settings written into every row."""
    docs, location = _loaded()
    subset = select_where(docs, "domain", domain)
    root = location.root or ""
    settings = {"coord_convention": [convention] * len(subset), "with_history": [history] * len(subset),
                "media_root": [root] * len(subset)}
    return datasets.concatenate_datasets([subset.flatten_indices(), datasets.Dataset.from_dict(settings)], axis=1)


# process_docs of every task: one per domain and coordinate convention, plus the history ablation
@permutable
def docs_web_agents(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("web_agents")


@permutable
def docs_web_agents_norm1000_yx(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("web_agents", convention="norm1000_yx")


@permutable
def docs_web_agents_norm1000_xy(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("web_agents", convention="norm1000_xy")


@permutable
def docs_egocentric_videos(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("egocentric_videos")


@permutable
def docs_egocentric_videos_norm1000_yx(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("egocentric_videos", convention="norm1000_yx")


@permutable
def docs_egocentric_videos_norm1000_xy(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("egocentric_videos", convention="norm1000_xy")


@permutable
def docs_games(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("games")


@permutable
def docs_games_norm1000_yx(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("games", convention="norm1000_yx")


@permutable
def docs_games_norm1000_xy(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("games", convention="norm1000_xy")


@permutable
def docs_spatial_planning(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("spatial_planning")


@permutable
def docs_spatial_planning_norm1000_yx(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("spatial_planning", convention="norm1000_yx")


@permutable
def docs_spatial_planning_norm1000_xy(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("spatial_planning", convention="norm1000_xy")


@permutable
def docs_robotics(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("robotics")


@permutable
def docs_robotics_norm1000_yx(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("robotics", convention="norm1000_yx")


@permutable
def docs_robotics_norm1000_xy(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("robotics", convention="norm1000_xy")


@permutable
def docs_web_agents_nohistory(placeholder: datasets.Dataset) -> datasets.Dataset:
    """The history ablation: trajectory questions without their previous actions."""
    return select_variant("web_agents", history=False)


# --------------------------------------------------------------------------- visuals and prompt

def _images(doc: Mapping[str, Any]) -> list[Image.Image]:
    cells = doc.get(IMAGES) or []

    def load() -> list[Image.Image]:
        return [as_rgb(cell, where=f"agentvqa record {doc['id']!r}, {IMAGES}[{i}]") for i, cell in enumerate(cells)]

    # rows of one question under option permutations share their media: decode once (keyed by question)
    return decoded_once((BENCHMARK, doc.get("group_id") or doc["id"], IMAGES), load) if cells else []


def _video_path(doc: Mapping[str, Any]) -> str:
    return str(resolve_media(doc["media_root"], doc["video"], benchmark=BENCHMARK, record_id=doc["id"],
                             field_name="video"))


def visuals(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> list[prompt.Visual]:
    """Images in dataset order; for a video, `n_frames` uniform frames (task-side) or the video path."""
    images = _images(doc)
    video: Sequence[Image.Image] | str | None = None
    if doc.get("video"):
        path = _video_path(doc)
        if kwargs["video_mode"] == "native":
            video = path
        elif kwargs["video_mode"] == "frames":
            video = frames.sample_frames(path, int(kwargs["n_frames"])).frames
        else:
            raise ValueError(f"video_mode must be 'frames' or 'native', got {kwargs['video_mode']!r}")
    return prompt.ordered_visuals(images, video)


def doc_to_visual(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[prompt.Visual]:
    return visuals(doc, lmms_eval_specific_kwargs)


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> str:
    return prompt.prompt_text(doc, lmms_eval_specific_kwargs)


def doc_to_messages(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One user turn: visuals first (images, frames or the video), then the text; no system prompt."""
    shown = visuals(doc, lmms_eval_specific_kwargs)
    return prompt.Prompt(shown, prompt.prompt_text(doc, lmms_eval_specific_kwargs)).messages()


def doc_to_target(doc: Mapping[str, Any]) -> str:
    return str(doc["answer"])


# --------------------------------------------------------------------------- scoring

def record(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The per-sample record (see `adapters.samples`) plus the core's per-item fields and the video frames this
    process sampled."""
    response = response_text(results)
    rendered = prompt.rendered_options(doc)  # the option texts as the model saw them, for the echoed-option rule
    # strict rules, then the LLM-judge fallback when LMMS_AGENTIC_MCQ_JUDGE=1 (off by default)
    extraction = extract_with_fallback(response, rendered.texts, question=doc["question"], item_id=doc["id"])
    out = mcq_record(BENCHMARK, doc, response, extraction)
    out.update(scoring.item_fields(doc, rendered))
    out["video"] = frames.frames_log(_video_path(doc), doc["video"]) if doc.get("video") else None
    return out


process_results = results_function(record, record_metric="accuracy", score_field="correct",
                                   views=views.views_for)
