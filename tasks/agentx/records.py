"""Reader and normaliser for Agent-X (`Tajamul21/Agent-X`): `data.json` + `files/` -> one row per task.

Release layout: `data.json` maps keys "0".."827" to a ONE-element list holding
the record {query, file_path, query_type, tool_metadata, reasoning_steps, final_answer}; media live in `files/`
and `file_path` names them relative to it (several images: comma-separated). Steps are sometimes wrapped as
`[[...]]`. The normaliser validates every record (naming the key and field), classifies the media
(image / multi_image / video by extension), and keeps the ground truth as JSON strings so rows stay flat.
Generative tasks are identified by key (`protocol.GENERATIVE_IDS`), never by row position.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from lmms_agentic.adapters.schema import RecordError

BENCHMARK = "agentx"
DATA_FILE = "data.json"
MEDIA_FOLDER = "files"
VIDEO_EXTENSIONS = (".mp4", ".avi", ".mov", ".mkv", ".webm")


def _fail(key: str, field: str, problem: str) -> RecordError:
    return RecordError(BENCHMARK, key, field, problem)


def read_data_json(folder: Path) -> dict[str, Any]:
    """The raw `data.json` of a dataset folder; a missing or unreadable file names the path."""
    path = folder / DATA_FILE
    if not path.is_file():
        raise FileNotFoundError(f"Agent-X expects {path} (the release's data.json next to files/)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path} must map task keys to records, got {type(data).__name__}")
    return data


def _unwrap_steps(steps: Any, key: str) -> list[dict[str, Any]]:
    while isinstance(steps, list) and len(steps) == 1 and isinstance(steps[0], list):
        steps = steps[0]
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        raise _fail(key, "reasoning_steps", "expected a list of step objects")
    return steps


def media_paths(file_path: str) -> list[str]:
    """`"a.jpg, b.jpg"` -> ["a.jpg", "b.jpg"] (relative to files/)."""
    return [part.strip() for part in file_path.split(",") if part.strip()]


def media_type(paths: list[str]) -> str:
    if len(paths) == 1 and paths[0].lower().endswith(VIDEO_EXTENSIONS):
        return "video"
    return "multi_image" if len(paths) > 1 else "image"


def normalise(key: str, value: Any, generative_ids: Collection[str]) -> dict[str, Any]:
    """One `data.json` entry -> a flat task row."""
    if not isinstance(value, list) or len(value) != 1 or not isinstance(value[0], dict):
        raise _fail(key, "<record>", "expected a one-element list holding the task record")
    record: Mapping[str, Any] = value[0]
    for field in ("query", "file_path", "query_type"):
        if not isinstance(record.get(field), str) or not record[field].strip():
            raise _fail(key, field, "must be a non-empty string")
    tool_metadata = record.get("tool_metadata")
    if not isinstance(tool_metadata, dict):
        raise _fail(key, "tool_metadata", "expected an object mapping tool names to their metadata")
    final_answer = record.get("final_answer")
    if isinstance(final_answer, str):
        final_answer = {"value": final_answer, "justification": ""}
    if not isinstance(final_answer, dict) or "value" not in final_answer:
        raise _fail(key, "final_answer", "expected {value, justification}")
    steps = _unwrap_steps(record.get("reasoning_steps"), key)
    paths = media_paths(record["file_path"])
    kind = media_type(paths)
    if kind == "video" and len(paths) != 1:
        raise _fail(key, "file_path", "a video task must name exactly one file")
    return {
        "id": key,
        "query": record["query"].strip(),
        "query_type": record["query_type"].strip(),
        "is_generative": key in generative_ids,
        "media_type": kind,
        "media": paths,
        "tool_metadata_json": json.dumps(tool_metadata, ensure_ascii=False),
        "gt_steps_json": json.dumps(steps, ensure_ascii=False),
        "gt_final_answer_json": json.dumps(final_answer, ensure_ascii=False),
        "gt_tools": sorted({str(step.get("tool", "")).strip() for step in steps} - {""}),
    }


def normalise_all(data: Mapping[str, Any], generative_ids: Collection[str]) -> list[dict[str, Any]]:
    """Every task, in key order ("0", "1", ... numerically); keys must be unique strings."""
    rows = [normalise(str(key), value, generative_ids) for key, value in data.items()]
    return sorted(rows, key=lambda row: (len(row["id"]), row["id"]))
