"""lmms-eval hooks for Agent-X: loading (process_docs), the released prompt, visuals, and per-task records.

Glue only: reading and validating `data.json` is `records.py`, the protocol strings `protocol.py`, trace parsing
`trace.py`, the deterministic error taxonomy `errors.py`, judging `judge.py`, metric views and aggregation
`metrics.py`.

Protocol (tasks/agentx/README.md): the closed-source instruction with the GPT format block as the system message
(prepended to the user text for backends without a system role), the user turn = all images in `file_path` order (or
the video's frames, each preceded by `Frame{i}:`), then `"Query: " + query`. One generation per task; the reply is
parsed without executing anything; the judge sees the parsed record (or the empty record when nothing parses).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets
from PIL import Image

from lmms_agentic.adapters import benchmarks, frames
from lmms_agentic.adapters.data import fetch_folder, locate, resolve_media
from lmms_agentic.adapters.docs import select_where
from lmms_agentic.adapters.media import as_pil, decoded_once
from lmms_agentic.adapters.samples import response_text
from lmms_agentic.judges.client import default_client
from lmms_agentic.tasks.agentx import metrics, protocol, records
from lmms_agentic.tasks.agentx.errors import classify
from lmms_agentic.tasks.agentx.judge import judge_item, style_for
from lmms_agentic.tasks.agentx.trace import canonical_tool, parse_trace, toolset_scores

_DOCS: dict[tuple[str, Any], datasets.Dataset] = {}


# --------------------------------------------------------------------------- loading (process_docs)

def all_docs() -> datasets.Dataset:
    """All Agent-X tasks, one row each (loaded and validated once per process and location)."""
    source = benchmarks.get(records.BENCHMARK).source
    key = (source.benchmark, locate(source))
    if key not in _DOCS:
        location = fetch_folder(source)
        root = Path(location.root or location.where)
        rows = records.normalise_all(records.read_data_json(root), protocol.GENERATIVE_IDS)
        for row in rows:
            row["media_root"] = str(root / records.MEDIA_FOLDER)
        _DOCS[key] = datasets.Dataset.from_list(rows)
    return _DOCS[key]


def docs_text_answer(placeholder: datasets.Dataset) -> datasets.Dataset:
    """process_docs of `agentx_text_answer`: the tasks with a text answer (every key not in the generative list)."""
    return select_where(all_docs(), "is_generative", False)


def docs_generative(placeholder: datasets.Dataset) -> datasets.Dataset:
    """process_docs of `agentx_generative`: the 222 generative tasks, by key."""
    return select_where(all_docs(), "is_generative", True)


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
    """Simple backends: the instruction, then the query."""
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


def record(doc: Mapping[str, Any], results: list[Any], judge: bool = True) -> dict[str, Any]:
    """The per-task sample record: parse outcome, deterministic checks, error taxonomy and every judged metric."""
    response = response_text(results)
    trace = parse_trace(response, protocol.TOOL_NAMES, protocol.LEGACY_ALIASES)
    prediction = trace.prediction_record()
    gt_final = json.loads(doc["gt_final_answer_json"])
    gt_steps = json.loads(doc["gt_steps_json"])
    tool_metadata = json.loads(doc["tool_metadata_json"])
    gt = {"query": doc["query"], "GT reasoning steps": gt_steps, "GT final answer": gt_final}
    predicted_tools = [s.tool_canonical for s in trace.steps if s.tool_canonical]
    gold_tools = [t for t in (canonical_tool(name, protocol.TOOL_NAMES, protocol.LEGACY_ALIASES)
                              for name in tool_metadata or doc["gt_tools"]) if t]
    toolset = toolset_scores(predicted_tools, gold_tools)
    video = frames.frames_log(_media(doc, 0), doc["media"][0]) if doc["media_type"] == "video" else None
    judged = judge_item(doc["id"], gt, prediction, query_type=doc["query_type"], is_generative=doc["is_generative"],
                        tool_metadata=tool_metadata) if judge else {}
    return {
        "benchmark": records.BENCHMARK, "id": doc["id"], "is_generative": bool(doc["is_generative"]),
        "query_type": doc["query_type"], "media_type": doc["media_type"], "judge": judged,
        "format_ok": trace.format_ok, "parse_failure": trace.failure, "parse_path": trace.parse_path,
        "n_steps": len(trace.steps), "toolset_f1_prog": toolset["f1"],
        "toolset_precision_prog": toolset["precision"], "toolset_recall_prog": toolset["recall"],
        "exact_match": exact_match(trace.final_answer, str(gt_final.get("value", "")), doc["query_type"]),
        "errors": classify(trace.notebook_record(doc["query"], ", ".join(doc["media"])), gt_final,
                           protocol.TOOL_NAMES, gt_steps=gt_steps),
        "prediction": prediction,
        "video": video,
        "judge_style": style_for(default_client().config) if judge else None,
    }


def process_results(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The record under the task's first metric (`ground_s`), then each other metric's view of it."""
    sample = record(doc, results)
    first, *others = metrics.metric_names(bool(doc["is_generative"]))
    return {first: sample, **{name: metrics.VIEWS[name](sample) for name in others}}
