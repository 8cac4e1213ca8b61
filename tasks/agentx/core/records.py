"""Agent-X release record -> canonical document: the normaliser of one `data.json` entry and its field rules.

Owns what one record of the published schema becomes (`normalise`), and the `RecordError` of a record that cannot be
used at all; what it does with imperfect records is the benchmark README's "Release quirks".  Reading `data.json`,
schema overrides, bad-record screening and media checks are the plugin's (`tasks/agentx/release.py`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from lmms_agentic.adapters.core.schema import RecordError

BENCHMARK = "agentx"
MEDIA_FOLDER = "files"
"""The release folder of the media `file_path` names (beside `data.json`)."""
VIDEO_EXTENSIONS = (".mp4", ".avi", ".mov", ".mkv", ".webm")
FIELDS = ("query", "file_path", "query_type", "tool_metadata", "reasoning_steps", "final_answer")
"""The published record keys, which are also the canonical field names."""
Keys = Mapping[str, str]
PUBLISHED_KEYS: Keys = {name: name for name in FIELDS}
"""Canonical field -> the record key it is read from, as published (a schema override passes its own)."""
MAX_NESTING = 100
"""Levels of lists and objects one field may nest (deeper values make Python's json and every reader fail)."""
_ABSENT = object()


def record_error(key: str, field_name: str, problem: str) -> RecordError:
    """The `RecordError` of Agent-X record `key` (its `data.json` key) at `field_name`."""
    return RecordError(BENCHMARK, key, field_name, problem)


def _label(name: str, keys: Keys) -> str:
    return name if keys[name] == name else f"{name} (data.json key {keys[name]!r})"


def _describe(value: object) -> str:
    if value is _ABSENT:
        return "missing"
    if value is None:
        return "null"
    if not isinstance(value, str):
        return f"a {type(value).__name__}"
    if not value.strip():
        return "an empty string" if not value else "a blank string"
    length = f" ({len(value)} characters)" if len(value) > 40 else ""
    return f"the string {value[:40]!r}{length}"


def nesting_depth(value: object, limit: int) -> int:
    """Levels of lists and objects in `value` (a scalar has 0), counted without recursion up to `limit` + 1."""
    deepest = 0
    stack = [(value, 1)] if isinstance(value, (list, dict)) else []
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        children = item.values() if isinstance(item, dict) else item
        stack += [(child, depth + 1) for child in children if isinstance(child, (list, dict))]
    return deepest


def too_deep() -> str:
    """The problem of a value nesting past MAX_NESTING levels."""
    return f"nests lists or objects more than {MAX_NESTING} levels deep; correct the record"


def field_label(raw_key: str, keys: Keys = PUBLISHED_KEYS) -> str:
    """How errors name the field read from record key `raw_key` (its canonical name, with the key when renamed)."""
    canonical = {raw: name for name, raw in keys.items()}.get(raw_key)
    return _label(canonical, keys) if canonical is not None else raw_key


def check_nesting(key: str, value: object, keys: Keys = PUBLISHED_KEYS) -> None:
    """Raise a `RecordError` naming the field of record `key` that nests more than MAX_NESTING levels (instead of a
    bare RecursionError in a reader of the record)."""
    fields: list[tuple[str, object]] = [("<record>", value)]
    if isinstance(value, list) and is_record_shaped(value):
        fields = [(str(raw_key), item) for raw_key, item in value[0].items()]
    for raw_key, item in fields:
        if nesting_depth(item, MAX_NESTING) > MAX_NESTING:
            name = field_label(raw_key, keys) if raw_key != "<record>" else raw_key
            raise record_error(key, name, too_deep())


def unwrap_steps(steps: object) -> tuple[list[dict[str, Any]], list[int]] | None:
    """(the step objects, the 1-based positions of the skipped non-object steps), as the authors' reader does:
    a one-element list holding a list is unwrapped once.  None when `steps` is not a list."""
    if not isinstance(steps, list):
        return None
    if len(steps) == 1 and isinstance(steps[0], list):
        steps = steps[0]
    kept = [step for step in steps if isinstance(step, dict)]
    skipped = [i for i, step in enumerate(steps, start=1) if not isinstance(step, dict)]
    return kept, skipped


def final_answer_fields(final_answer: object) -> dict[str, Any] | None:
    """{"value", "justification"} of a released final answer (an object with "value", or a bare string answer);
    None when it is neither."""
    if isinstance(final_answer, str):
        return {"value": final_answer, "justification": ""}
    if isinstance(final_answer, dict) and "value" in final_answer:
        justification = final_answer.get("justification", "")
        return {"value": final_answer["value"], "justification": justification}
    return None


def media_paths(file_path: str) -> list[str]:
    """`"a.jpg, b.jpg"` -> ["a.jpg", "b.jpg"] (relative to files/)."""
    return [part.strip() for part in file_path.split(",") if part.strip()]


def media_type(paths: list[str]) -> str:
    """"video" (one file with a video extension), "multi_image" (several files) or "image"."""
    if len(paths) == 1 and paths[0].lower().endswith(VIDEO_EXTENSIONS):
        return "video"
    return "multi_image" if len(paths) > 1 else "image"


def _json(value: object) -> str:
    return json.dumps(None if value is _ABSENT else value, ensure_ascii=False)


def is_record_shaped(value: object) -> bool:
    """A `data.json` entry of the released shape: a one-element list holding the task record (an object)."""
    return isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict)


def normalise(key: str, value: Any, generative_ids: Collection[str], keys: Keys = PUBLISHED_KEYS) -> dict[str, Any]:
    """One `data.json` entry -> a flat task row (raises `RecordError` for a record that cannot be used at all).

    `keys` maps each canonical field to the record key it is read from (a renamed release's, from the plugin's
    schema override); errors name the field and, when renamed, the key."""
    if not is_record_shaped(value):
        raise record_error(key, "<record>", "expected a one-element list holding the task record")
    record: Mapping[str, Any] = value[0]

    def get(name: str) -> Any:
        return record.get(keys[name], _ABSENT)

    def error(name: str, problem: str) -> RecordError:
        return record_error(key, _label(name, keys), problem)

    for name in ("query", "file_path"):
        text = get(name)
        if not isinstance(text, str) or not text.strip():
            raise error(name, f"must be a non-empty string, got {_describe(text)}")
    released_steps = get("reasoning_steps")
    unwrapped = unwrap_steps(released_steps)
    if unwrapped is None:
        expected = "expected a list of step objects (optionally wrapped as [[...]])"
        raise error("reasoning_steps", f"{expected}, got {_describe(released_steps)}")
    steps, skipped = unwrapped
    released_answer = get("final_answer")
    if final_answer_fields(released_answer) is None:
        expected = "expected {value, justification} or a string"
        raise error("final_answer", f"{expected}, got {_describe(released_answer)}")
    query_type, tool_metadata = get("query_type"), get("tool_metadata")
    blockers = []
    if not isinstance(query_type, str):
        blockers.append(f"{_label('query_type', keys)} is {_describe(query_type)}, not a string")
    if not isinstance(tool_metadata, dict):
        blockers.append(f"{_label('tool_metadata', keys)} is {_describe(tool_metadata)}, not an object")
    paths = media_paths(get("file_path"))
    tools = {str(step.get("tool", "")).strip() for step in steps} - {""}
    return {
        "id": key,
        "query": get("query"),
        "query_type": query_type if isinstance(query_type, str) else "",
        "is_generative": key in generative_ids,
        "media_type": media_type(paths),
        "media": paths,
        "tool_metadata_json": _json(tool_metadata),
        "gt_steps_json": _json(released_steps),
        "gt_steps_flat_json": json.dumps(steps, ensure_ascii=False),
        "gt_final_answer_json": _json(released_answer),
        "gt_tools": sorted(tools),
        "skipped_steps": skipped,
        "judge_blocker": "; ".join(blockers),
    }


def row_order(row: Mapping[str, Any]) -> tuple[int, str]:
    """Sort key of rows: key order "0", "1", ... numerically."""
    return len(row["id"]), row["id"]
