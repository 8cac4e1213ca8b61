"""lmms-eval hooks for AgentVQA: loading and variants (process_docs), prompt, visuals, per-sample payloads.

Glue only. Task-variant settings that change what the model sees — domain, coordinate convention,
action history on/off — are chosen by the `process_docs` reference in the task YAML and written into
every row, so prompts read them from the document and every sample log records them. The prompt
wording and the video mode (task-side frames or the video path for backends with native video) are
configuration in `lmms_eval_specific_kwargs`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

import datasets
from PIL import Image

from lmms_agentic.adapters import frames
from lmms_agentic.adapters.data import resolve_media
from lmms_agentic.adapters.docs import load_canonical, select_where
from lmms_agentic.adapters.extract import REQUEST_FAILED_PREFIX
from lmms_agentic.adapters.media import as_pil, decoded_once
from lmms_agentic.adapters.records import agentvqa as records
from lmms_agentic.adapters.records.agentvqa_sources import RenderedOptions, adapter_for
from lmms_agentic.adapters.schema import LETTERS
from lmms_agentic.judges.mcq_fallback import extract_with_fallback
from lmms_agentic.tasks.agentvqa import metrics

IMAGES = "images"
DEFAULT_CONVENTION = "pixel_xy"
CONVENTION_VARIANTS = ("norm1000_yx", "norm1000_xy")


# --------------------------------------------------------------------------- loading (process_docs)

def _check_columns(raw: datasets.Dataset, _location: Any) -> None:
    records.check_columns(raw.column_names, raw[0] if len(raw) else None)


def load_docs(manifest: datasets.Dataset) -> datasets.Dataset:
    """All AgentVQA rows in canonical form (loaded and validated once per process and location)."""
    return load_canonical(manifest, records.normalise, IMAGES, check=_check_columns)[0]


def select_variant(manifest: datasets.Dataset, domain: str, convention: str = DEFAULT_CONVENTION,
                   history: bool = True) -> datasets.Dataset:
    """One domain's rows with the variant's settings written into every row."""
    docs, location = load_canonical(manifest, records.normalise, IMAGES, check=_check_columns)
    subset = select_where(docs, "domain", domain)
    root = location.root or ""
    settings = {"coord_convention": [convention] * len(subset), "with_history": [history] * len(subset),
                "media_root": [root] * len(subset)}
    return datasets.concatenate_datasets([subset.flatten_indices(), datasets.Dataset.from_dict(settings)], axis=1)


PROCESS_DOCS: dict[str, Callable[[datasets.Dataset], datasets.Dataset]] = {}
for _domain in records.DOMAINS:
    PROCESS_DOCS[f"docs_{_domain}"] = functools.partial(select_variant, domain=_domain)
    for _convention in CONVENTION_VARIANTS:
        PROCESS_DOCS[f"docs_{_domain}_{_convention}"] = functools.partial(
            select_variant, domain=_domain, convention=_convention)
PROCESS_DOCS["docs_web_agents_nohistory"] = functools.partial(select_variant, domain="web_agents", history=False)


def __getattr__(name: str) -> Callable[[datasets.Dataset], datasets.Dataset]:
    """Resolves the `process_docs: !function lmms_agentic.tasks.agentvqa.hooks.docs_<variant>` references."""
    try:
        return PROCESS_DOCS[name]
    except KeyError:
        raise AttributeError(f"{__name__} has no attribute {name!r}; variants: {sorted(PROCESS_DOCS)}") from None


# --------------------------------------------------------------------------- visuals and prompt

def _images(doc: Mapping[str, Any]) -> list[Image.Image]:
    cells = doc.get(IMAGES) or []

    def load() -> list[Image.Image]:
        return [as_pil(cell, where=f"agentvqa record {doc['id']!r}, {IMAGES}[{i}]").convert("RGB")
                for i, cell in enumerate(cells)]

    # rows of one question under option permutations share their media: decode once (keyed by question)
    return decoded_once((records.BENCHMARK, doc.get("group_id") or doc["id"], IMAGES), load) if cells else []


def _video_path(doc: Mapping[str, Any]) -> str:
    return str(resolve_media(doc["media_root"], doc["video"], benchmark=records.BENCHMARK, record_id=doc["id"],
                             field_name=records.FIELD_MAP["video"]))


def visuals(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> list[Image.Image | str]:
    """Images in dataset order; for a video, `n_frames` uniform frames (task-side) or the video path."""
    items: list[Image.Image | str] = list(_images(doc))
    if doc.get("video"):
        path = _video_path(doc)
        if kwargs["video_mode"] == "native":
            items.append(path)
        elif kwargs["video_mode"] == "frames":
            items.extend(frames.sample_frames(path, int(kwargs["n_frames"])).frames)
        else:
            raise ValueError(f"video_mode must be 'frames' or 'native', got {kwargs['video_mode']!r}")
    return items


def rendered_options(doc: Mapping[str, Any]) -> RenderedOptions:
    """Options in the row's coordinate convention; the frame is the record's image size or its first image."""
    meta = json.loads(doc["metadata_json"])
    size = None
    if not meta.get("image_width") and doc.get(IMAGES):
        size = _images(doc)[0].size
    return adapter_for(doc["source"]).render(doc["options"], meta, doc["coord_convention"], size)


def prompt_text(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> str:
    """The paper's template [ASSUMPTION, spec §4.2]: question, previous actions (trajectories), options, instruction."""
    options = rendered_options(doc).texts
    lines = [doc["question"]]
    if doc["with_history"] and doc["context"]:
        lines += [kwargs["history_header"], doc["context"]]
    lines.append("Options:")
    lines += [f"{LETTERS[i]}. {text}" for i, text in enumerate(options)]
    lines.append(kwargs["post_prompt"])
    return "\n".join(lines)


def doc_to_visual(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[Image.Image | str]:
    return visuals(doc, lmms_eval_specific_kwargs)


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> str:
    return prompt_text(doc, lmms_eval_specific_kwargs)


def doc_to_messages(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One user turn: visuals first (images, frames or the video), then the text; no system prompt."""
    content: list[dict[str, Any]] = []
    for item in visuals(doc, lmms_eval_specific_kwargs):
        kind = "video" if isinstance(item, str) else "image"
        content.append({"type": kind, "url": item})
    content.append({"type": "text", "text": prompt_text(doc, lmms_eval_specific_kwargs)})
    return [{"role": "user", "content": content}]


def doc_to_target(doc: Mapping[str, Any]) -> str:
    return str(doc["answer"])


# --------------------------------------------------------------------------- scoring

def payload(doc: Mapping[str, Any], results: list[str]) -> dict[str, Any]:
    """The per-document record every AgentVQA metric aggregates (plain data, logged per sample)."""
    response = results[0] if results else ""
    try:  # option texts as the model saw them, for the extractor's echoed-option rule
        shown: Any = rendered_options(doc).texts
    except ValueError:  # coordinates without a recorded image size: images are not kept for scoring
        shown = doc["options"]
    # strict rules, then the LLM-judge fallback when LMMS_AGENTIC_MCQ_JUDGE=1 (off by default)
    extraction = extract_with_fallback(response, shown, question=doc["question"], item_id=doc["id"])
    video_log = frames.frames_log(_video_path(doc), doc["video"]) if doc.get("video") else None
    meta = json.loads(doc["metadata_json"])
    return {
        "id": doc["id"],
        "domain": doc["domain"],
        "source": doc["source"],
        "input_type": meta["input_type"],
        "answer": doc["answer"],
        "pred": extraction.letter,
        "rule": extraction.rule,
        "no_answer_reason": extraction.reason,
        "extraction_path": extraction.path,
        "judge": extraction.judge.as_dict() if extraction.judge is not None else None,
        "correct": extraction.letter == doc["answer"],
        "request_failed": isinstance(response, str) and response.startswith(REQUEST_FAILED_PREFIX),
        "coord_convention": doc["coord_convention"],
        "with_history": bool(doc["with_history"] and doc["context"]),
        "video": video_log,
    }


def process_results(doc: Mapping[str, Any], results: list[str]) -> dict[str, Any]:
    record = payload(doc, results)
    return {name: record for name in metrics.metric_names(doc["domain"])}
