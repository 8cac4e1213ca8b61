"""lmms-eval hooks for Agent-X: loading (process_docs), the released prompt, visuals, and per-task records.

Glue only: reading and validating `data.json` is `records.py`, the protocol strings `protocol.py`, trace parsing
`trace.py`, the deterministic error taxonomy `errors.py`, judging `judge.py`, metric views and aggregation
`metrics.py`.

Protocol (tasks/agentx/README.md): the system message is byte for byte the released GPT script's
(`instruction_prompt + '\n\n'`, `protocol.system_message()`); backends without a system role get that text as the
first part of the user turn, simple backends get it followed by the query; the user turn = all images in `file_path`
order (or the video's frames, each preceded by `Frame{i}:`), then `"Query: " + query`. One generation per task; the
reply is parsed without executing anything; the judge sees the parsed record (or the empty record when nothing
parses) and the ground truth as released.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets
from PIL import Image

from lmms_agentic.adapters import bad_records, benchmarks, frames, provenance
from lmms_agentic.adapters.data import Location, fetch_folder, locate, record_provenance, resolve_media
from lmms_agentic.adapters.docs import select_where
from lmms_agentic.adapters.media import as_rgb, decoded_once
from lmms_agentic.adapters.release_schema import ResolvedSchema, resolve
from lmms_agentic.adapters.samples import loop_check, response_text
from lmms_agentic.judges.client import default_client
from lmms_agentic.tasks.agentx import metrics, protocol, records
from lmms_agentic.tasks.agentx.errors import classify
from lmms_agentic.tasks.agentx.judge import judge_item, not_judgeable_item, style_for
from lmms_agentic.tasks.agentx.trace import PARSE_FAILURES, canonical_tool, parse_trace, toolset_scores

_DOCS: dict[tuple[str, Any], datasets.Dataset] = {}
log = logging.getLogger("lmms_agentic")
SHOWN = bad_records.SHOWN


# --------------------------------------------------------------------------- loading (process_docs)

def all_docs() -> datasets.Dataset:
    """All Agent-X tasks, one row each (loaded and validated once per process and location)."""
    source = benchmarks.get(records.BENCHMARK).source
    key = (source.benchmark, locate(source))
    if key not in _DOCS:
        location = fetch_folder(source)
        root = Path(location.root or location.where)
        schema = resolve(records.SCHEMA, root)
        loaded = records.load(root, protocol.GENERATIVE_IDS, schema, media_root=root / records.MEDIA_FOLDER)
        for row in loaded.rows:
            row["media_root"] = str(root / records.MEDIA_FOLDER)
        record_provenance(source, location, loaded.occurrences)
        _report(loaded, schema, location)
        _DOCS[key] = datasets.Dataset.from_list(loaded.rows)
    return _DOCS[key]


def _report(loaded: records.Loaded, schema: ResolvedSchema, location: Location) -> None:
    """Provenance for the results file, and one log line per kind of set-aside data."""
    expected = benchmarks.get(records.BENCHMARK).expected_rows
    provenance.record(records.BENCHMARK, schema=schema.describe(), usable_rows=len(loaded.rows),
                      expected_rows=expected)
    if loaded.excluded:
        provenance.record(records.BENCHMARK, excluded={"count": len(loaded.excluded),
                                                       "records": [e.as_dict() for e in loaded.excluded]})
    skipped = loaded.skipped_steps
    if skipped:
        count = sum(len(positions) for positions in skipped.values())
        provenance.record(records.BENCHMARK, skipped_steps={
            "count": count, "records": [{"id": k, "positions": v} for k, v in skipped.items()]})
        log.warning("%s: skipped %d malformed ground-truth reasoning step(s) (not objects), as the authors' reader "
                    "does, in %d record(s): %s", records.BENCHMARK, count, len(skipped),
                    ", ".join(list(skipped)[:SHOWN]))
    not_judged = loaded.not_judged
    if not_judged:
        provenance.record(records.BENCHMARK, not_judged={
            "count": len(not_judged), "records": [{"id": k, "problem": v} for k, v in not_judged.items()]})
        log.warning("%s: %d record(s) are not judged (the released judge scripts fail on them and leave all their "
                    "scores empty); their judged metrics are unscored: %s", records.BENCHMARK, len(not_judged),
                    "; ".join(f"{k}: {v}" for k, v in list(not_judged.items())[:SHOWN]))
    if location.kind != "mini" and expected is not None and len(loaded.rows) != expected:
        log.warning("%s has %d usable rows at %s; the paper has %d: scores are not comparable with it.",
                    records.BENCHMARK, len(loaded.rows), location.describe(), expected)


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
        return [as_rgb(str(_media(doc, i)), where=f"agentx task {doc['id']!r}, file_path[{i}]")
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
        content.insert(0, {"type": "text", "text": protocol.system_message()})
        return [{"role": "user", "content": content}]
    return [{"role": "system", "content": [{"type": "text", "text": protocol.system_message()}]},
            {"role": "user", "content": content}]


def doc_to_visual(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[Image.Image | str]:
    return [p for p in segments(doc, lmms_eval_specific_kwargs)
            if isinstance(p, Image.Image) or not (p.startswith("Query: ") or p.startswith("Frame"))]


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> str:
    """Simple backends: the system message (the instruction and a blank line), then the query."""
    return f"{protocol.system_message()}Query: {doc['query']}"


def _gt_answer(doc: Mapping[str, Any]) -> dict[str, Any]:
    """{"value", "justification"} of the released final answer (validated when loading)."""
    return records.final_answer_fields(json.loads(doc["gt_final_answer_json"])) or {"value": "", "justification": ""}


def doc_to_target(doc: Mapping[str, Any]) -> str:
    return str(_gt_answer(doc).get("value", ""))


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
    """The per-task sample record: parse outcome, deterministic checks, error taxonomy and every judged metric.

    The judge gets the ground truth as released (`[[...]]`-wrapped steps stay wrapped, malformed steps stay in);
    the deterministic checks use the unwrapped steps without the malformed ones (`gt_steps_flat_json`).
    `parse_failure` is set only when nothing could be read from the reply (`trace.PARSE_FAILURES`); the issues of a
    reply that did parse (several tools in a step, an unknown tool, no final answer -- which a generative task
    legitimately has) are in `trace_issues`."""
    response = response_text(results)
    trace = parse_trace(response, protocol.TOOL_NAMES, protocol.LEGACY_ALIASES)
    prediction = trace.prediction_record()
    gt_final = _gt_answer(doc)
    gt_steps = json.loads(doc["gt_steps_flat_json"])
    tool_metadata = json.loads(doc["tool_metadata_json"])
    gt = {"query": doc["query"], "GT reasoning steps": json.loads(doc["gt_steps_json"]),
          "GT final answer": json.loads(doc["gt_final_answer_json"])}
    predicted_tools = [s.tool_canonical for s in trace.steps if s.tool_canonical]
    gold_names = list(tool_metadata) if isinstance(tool_metadata, dict) and tool_metadata else doc["gt_tools"]
    gold_tools = [t for t in (canonical_tool(name, protocol.TOOL_NAMES, protocol.LEGACY_ALIASES)
                              for name in gold_names) if t]
    toolset = toolset_scores(predicted_tools, gold_tools)
    video = frames.frames_log(_media(doc, 0), doc["media"][0]) if doc["media_type"] == "video" else None
    blocker = doc.get("judge_blocker") or ""
    judged: dict[str, Any] = {}
    if judge and blocker:
        judged = not_judgeable_item(doc["id"], blocker, is_generative=bool(doc["is_generative"]))
    elif judge:
        judged = judge_item(doc["id"], gt, prediction, query_type=doc["query_type"],
                            is_generative=doc["is_generative"], tool_metadata=tool_metadata)
    return {
        "benchmark": records.BENCHMARK, "id": doc["id"], "is_generative": bool(doc["is_generative"]),
        "query_type": doc["query_type"], "media_type": doc["media_type"], "judge": judged,
        "format_ok": trace.format_ok,
        "parse_failure": trace.failure if trace.failure in PARSE_FAILURES else None,
        "trace_issues": list(trace.issues), "parse_path": trace.parse_path,
        "n_steps": len(trace.steps), "toolset_f1_prog": toolset["f1"],
        "toolset_precision_prog": toolset["precision"], "toolset_recall_prog": toolset["recall"],
        "exact_match": exact_match(trace.final_answer, str(gt_final.get("value", "")), doc["query_type"]),
        "errors": classify(trace.notebook_record(doc["query"], ", ".join(doc["media"])), gt_final,
                           protocol.TOOL_NAMES, gt_steps=gt_steps),
        "prediction": prediction,
        "video": video,
        "gt_skipped_steps": list(doc.get("skipped_steps") or []),
        "loop": loop_check(response, answered=trace.failure not in PARSE_FAILURES),
        "not_judged": blocker or None,
        "judge_style": style_for(default_client().config) if judge and not blocker else None,
    }


def process_results(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The record under the task's first metric (`ground_s`), then each other metric's view of it."""
    sample = record(doc, results)
    first, *others = metrics.metric_names(bool(doc["is_generative"]))
    return {first: sample, **{name: metrics.VIEWS[name](sample) for name in others}}


def example_replies(doc: Mapping[str, Any]) -> list[str]:
    """Replies that exercise the scorer on ``doc`` (the golden test of an exported task folder): the ground-truth
    trace as a fenced JSON reply, an empty reply and free text with no trace."""
    steps = json.loads(doc.get("gt_steps_json") or "[]")
    trace = {"query": doc.get("query", ""), "reasoning_steps": [
        {"step": s.get("step"), "task": s.get("task"), "tool_used": s.get("tool"), "tool_output": s.get("output"),
         "thought": s.get("thought")} for s in steps if isinstance(s, dict)],
        "final_answer": json.loads(doc.get("gt_final_answer_json") or "{}")}
    return ["```json\n" + json.dumps(trace) + "\n```", "", "I think it is a cat."]
