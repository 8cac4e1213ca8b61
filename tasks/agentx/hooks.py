"""lmms-eval hooks for Agent-X: loading (process_docs), the released prompt, visuals, and per-task payloads.

Glue only: reading and validating `data.json` is `adapters.records.agentx`, the protocol strings are
`tasks.agentx.protocol`, trace parsing and the deterministic checks are `adapters.traces` /
`adapters.trace_errors`, judging is `judges.agentx`, aggregation is `metrics.py`.

Protocol (spec §4.6): the closed-source instruction with the GPT format block as the system message (prepended
to the user text for backends without a system role), the user turn = all images in `file_path` order (or the
video's frames, each preceded by `Frame{i}:`), then `"Query: " + query`. One generation per task; the reply is
parsed without executing anything; the judge sees the parsed record (or the empty record when nothing parses).
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets
from PIL import Image

from lmms_agentic.adapters import frames
from lmms_agentic.adapters.data import DataSource, fetch_folder, locate, resolve_media
from lmms_agentic.adapters.docs import select_where, source_from_manifest
from lmms_agentic.adapters.media import as_pil, decoded_once
from lmms_agentic.adapters.records import agentx as records
from lmms_agentic.adapters.trace_errors import classify
from lmms_agentic.adapters.traces import canonical_tool, parse_trace, toolset_scores
from lmms_agentic.judges.agentx import judge_item, style_for
from lmms_agentic.judges.client import default_client
from lmms_agentic.tasks.agentx import metrics, protocol

_DOCS: dict[tuple[str, Any], datasets.Dataset] = {}


# --------------------------------------------------------------------------- loading (process_docs)

def _load(source: DataSource) -> datasets.Dataset:
    key = (source.benchmark, locate(source))
    if key not in _DOCS:
        location = fetch_folder(source)
        root = Path(location.root or location.where)
        rows = records.normalise_all(records.read_data_json(root), protocol.GENERATIVE_IDS)
        for row in rows:
            row["media_root"] = str(root / records.MEDIA_FOLDER)
        _DOCS[key] = datasets.Dataset.from_list(rows)
    return _DOCS[key]


def load_docs(manifest: datasets.Dataset) -> datasets.Dataset:
    """All Agent-X tasks, one row each (loaded and validated once per process and location)."""
    return _load(source_from_manifest(manifest))


def _subset(manifest: datasets.Dataset, generative: bool) -> datasets.Dataset:
    return select_where(load_docs(manifest), "is_generative", generative)


docs_text_answer = functools.partial(_subset, generative=False)
docs_generative = functools.partial(_subset, generative=True)


# --------------------------------------------------------------------------- prompt and visuals

def _media(doc: Mapping[str, Any], index: int) -> Path:
    return resolve_media(doc["media_root"], doc["media"][index], benchmark=records.BENCHMARK, record_id=doc["id"],
                         field_name="file_path")


def _images(doc: Mapping[str, Any]) -> list[Image.Image]:
    def load() -> list[Image.Image]:
        return [as_pil(str(_media(doc, i)), where=f"agentx task {doc['id']!r}, file_path[{i}]").convert("RGB")
                for i in range(len(doc["media"]))]

    return decoded_once((records.BENCHMARK, doc["id"]), load)


def segments(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> list[str | Image.Image]:
    """The user turn in order: images (or `Frame{i}:` labels and frames, or the video path), then the query."""
    parts: list[str | Image.Image] = []
    if doc["media_type"] == "video":
        path = _media(doc, 0)
        if kwargs["video_mode"] == "native":
            parts.append(str(path))
        elif kwargs["video_mode"] == "frames":
            sampled = frames.sample_frames(path, int(kwargs["n_frames"]))
            for i, frame in enumerate(sampled.frames):
                parts += [f"Frame{i + 1}:", frame]
        else:
            raise ValueError(f"video_mode must be 'frames' or 'native', got {kwargs['video_mode']!r}")
    else:
        parts += _images(doc)
    parts.append(f"Query: {doc['query']}")
    return parts


def doc_to_messages(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = []
    for part in segments(doc, lmms_eval_specific_kwargs):
        if isinstance(part, Image.Image):
            content.append({"type": "image", "url": part})
        elif part.startswith("Query: ") or part.startswith("Frame"):
            content.append({"type": "text", "text": part})
        else:
            content.append({"type": "video", "url": part})
    if not lmms_eval_specific_kwargs.get("system_role", True):
        content.insert(0, {"type": "text", "text": protocol.instruction() + "\n\n"})
        return [{"role": "user", "content": content}]
    return [{"role": "system", "content": [{"type": "text", "text": protocol.instruction()}]},
            {"role": "user", "content": content}]


def doc_to_visual(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[Image.Image | str]:
    return [p for p in segments(doc, lmms_eval_specific_kwargs)
            if isinstance(p, Image.Image) or not (p.startswith("Query: ") or p.startswith("Frame"))]


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> str:
    """Simple backends: the instruction, then the query (spec §4.6: no system role -> prepend)."""
    return f"{protocol.instruction()}\n\nQuery: {doc['query']}"


def doc_to_target(doc: Mapping[str, Any]) -> str:
    return str(json.loads(doc["gt_final_answer_json"]).get("value", ""))


# --------------------------------------------------------------------------- scoring

def _normalise_answer(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    text = re.sub(r"[^\w\s.]", " ", text).replace(",", "")
    return " ".join(text.split()).rstrip(".")


def exact_match(predicted: str, gold: str, query_type: str) -> bool | None:
    """Deterministic outcome check for factual ("objective") answers; None for interpretive ones."""
    if query_type.strip().lower() != "objective" or not gold.strip():
        return None
    return _normalise_answer(predicted) == _normalise_answer(gold)


def payload(doc: Mapping[str, Any], results: list[str], judge: bool = True) -> dict[str, Any]:
    response = results[0] if results else ""
    trace = parse_trace(response, protocol.TOOL_NAMES, protocol.LEGACY_ALIASES)
    record = trace.prediction_record()
    gt_final = json.loads(doc["gt_final_answer_json"])
    gt_steps = json.loads(doc["gt_steps_json"])
    tool_metadata = json.loads(doc["tool_metadata_json"])
    gt = {"query": doc["query"], "GT reasoning steps": gt_steps, "GT final answer": gt_final}
    predicted_tools = [s.tool_canonical for s in trace.steps if s.tool_canonical]
    gold_tools = [t for t in (canonical_tool(name, protocol.TOOL_NAMES, protocol.LEGACY_ALIASES)
                              for name in tool_metadata or doc["gt_tools"]) if t]
    toolset = toolset_scores(predicted_tools, gold_tools)
    video = frames.frames_log(_media(doc, 0), doc["media"][0]) if doc["media_type"] == "video" else None
    judged = judge_item(doc["id"], gt, record, query_type=doc["query_type"], is_generative=doc["is_generative"],
                        tool_metadata=tool_metadata) if judge else {}
    return {
        "id": doc["id"], "is_generative": bool(doc["is_generative"]), "query_type": doc["query_type"],
        "media_type": doc["media_type"], "judge": judged, "format_ok": trace.format_ok,
        "parse_failure": trace.failure, "parse_path": trace.parse_path, "n_steps": len(trace.steps),
        "toolset_f1_prog": toolset["f1"], "toolset_precision_prog": toolset["precision"],
        "toolset_recall_prog": toolset["recall"],
        "exact_match": exact_match(trace.final_answer, str(gt_final.get("value", "")), doc["query_type"]),
        "errors": classify(trace.notebook_record(doc["query"], ", ".join(doc["media"])), gt_final,
                           protocol.TOOL_NAMES, gt_steps=gt_steps),
        "prediction": record,
        "video": video,
        "judge_style": style_for(default_client().config) if judge else None,
    }


def process_results(doc: Mapping[str, Any], results: list[str]) -> dict[str, Any]:
    record = payload(doc, results)
    return {name: record for name in metrics.metric_names(bool(doc["is_generative"]))}
