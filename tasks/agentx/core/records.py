"""Agent-X release record -> canonical document: the normaliser of one `data.json` entry and its field rules.

Owns what one record of the published schema (`data.json` maps keys "0".."827" to a ONE-element list holding
{query, file_path, query_type, tool_metadata, reasoning_steps, final_answer}; media in `files/`, `file_path`
comma-separated) becomes, and the `RecordError` of a record that cannot be used at all.  Reading `data.json`, schema
overrides, bad-record screening and media checks are the plugin's (`tasks/agentx/release.py`).

What the released code does with imperfect records, and what the normaliser does (README "Release quirks"): a
reasoning step that is not an object is skipped for the deterministic checks, as the authors' reader skips it
(`skipped_steps` keeps the 1-based positions); `[[...]]` is unwrapped once, as there; the judges always get the GROUND
TRUTH AS RELEASED (`gt_steps_json`, `gt_final_answer_json`, `tool_metadata_json`, `query`, `query_type` verbatim); an
empty `query_type` is kept and judged with the empty label; a `tool_metadata` that is not an object or a `query_type`
that is not a string (or either missing) makes the released judge scripts raise inside their per-item `try`, so the
item leaves every judged mean: here it is kept, and `judge_blocker` says why no judge call is made (every judged
metric is then unscored, `judging.NOT_JUDGEABLE`); a record that cannot be used at all (not a one-element list
holding an object, an empty or non-string `query` or `file_path`, `reasoning_steps` not a list, a `final_answer`
neither {value, ...} nor a string, a field nesting lists or objects more than `MAX_NESTING` levels deep) raises
`RecordError` naming the record and the field.

Generative tasks are identified by key (`release_data.GENERATIVE_IDS`, passed in), never by row position.
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
PUBLISHED_KEYS: Mapping[str, str] = {name: name for name in FIELDS}
"""Canonical field -> the record key it is read from, as published (a schema override passes its own)."""
MAX_NESTING = 100
"""Levels of lists and objects one field of a record may nest (far beyond any record's shape; deeper values make
Python's json and every recursive reader fail)."""
_ABSENT = object()


def record_error(key: str, field_name: str, problem: str) -> RecordError:
    """The `RecordError` of Agent-X record `key` (its `data.json` key) at `field_name`."""
    return RecordError(BENCHMARK, key, field_name, problem)


def _label(name: str, keys: Mapping[str, str]) -> str:
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
    return f"the string {value[:40]!r}" + (f" ({len(value)} characters)" if len(value) > 40 else "")


def nesting_depth(value: object, limit: int) -> int:
    """Levels of lists and objects in `value` (a scalar has 0), counted without recursion and only up to `limit` + 1
    (past it the value is too deep anyway)."""
    deepest = 0
    stack = [(value, 1)] if isinstance(value, (list, dict)) else []
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (list, dict)))
    return deepest


def too_deep(limit: int = 0) -> str:
    """The problem of a value nesting past `limit` (MAX_NESTING by default) levels."""
    return f"nests lists or objects more than {limit or MAX_NESTING} levels deep; correct the record"


def field_label(raw_key: str, keys: Mapping[str, str] = PUBLISHED_KEYS) -> str:
    """How errors name the field read from record key `raw_key` (its canonical name, with the key when renamed)."""
    canonical = {raw: name for name, raw in keys.items()}.get(raw_key)
    return _label(canonical, keys) if canonical is not None else raw_key


def check_nesting(key: str, value: object, keys: Mapping[str, str] = PUBLISHED_KEYS) -> None:
    """Raise a `RecordError` naming the field of record `key` that nests more than MAX_NESTING levels (readers of
    the record, Python's json and the checks here included, would otherwise fail with a bare RecursionError)."""
    fields: list[tuple[str, object]] = [("<record>", value)]
    if isinstance(value, list) and is_record_shaped(value):
        fields = [(str(raw_key), item) for raw_key, item in value[0].items()]
    for raw_key, item in fields:
        if nesting_depth(item, MAX_NESTING) > MAX_NESTING:
            name = field_label(raw_key, keys) if raw_key != "<record>" else raw_key
            raise record_error(key, name, too_deep())


def unwrap_steps(steps: object) -> tuple[list[dict[str, Any]], list[int]] | None:
    """(the step objects, the 1-based positions of the skipped non-object steps), as the authors' reader does:
    unwrapped once from `[[...]]` (a one-element list holding a list), then every item that is not an object
    skipped.  None when `steps` is not a list."""
    if not isinstance(steps, list):
        return None
    if len(steps) == 1 and isinstance(steps[0], list):
        steps = steps[0]
    kept = [step for step in steps if isinstance(step, dict)]
    skipped = [position for position, step in enumerate(steps, start=1) if not isinstance(step, dict)]
    return kept, skipped


def final_answer_fields(final_answer: object) -> dict[str, Any] | None:
    """{"value", "justification"} of a released final answer (an object with "value", or a bare string answer);
    None when it is neither."""
    if isinstance(final_answer, str):
        return {"value": final_answer, "justification": ""}
    if isinstance(final_answer, dict) and "value" in final_answer:
        return {"value": final_answer["value"], "justification": final_answer.get("justification", "")}
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


def normalise(key: str, value: Any, generative_ids: Collection[str],
              keys: Mapping[str, str] = PUBLISHED_KEYS) -> dict[str, Any]:
    """One `data.json` entry -> a flat task row (raises `RecordError` for a record that cannot be used at all).

    `keys` maps each canonical field to the record key it is read from (a renamed release's, from the plugin's
    schema override); errors name the field and, when renamed, the key."""
    if not is_record_shaped(value):
        raise record_error(key, "<record>", "expected a one-element list holding the task record")
    record: Mapping[str, Any] = value[0]

    def get(name: str) -> Any:
        return record.get(keys[name], _ABSENT)

    for name in ("query", "file_path"):
        text = get(name)
        if not isinstance(text, str) or not text.strip():
            raise record_error(key, _label(name, keys), f"must be a non-empty string, got {_describe(text)}")
    released_steps = get("reasoning_steps")
    unwrapped = unwrap_steps(released_steps)
    if unwrapped is None:
        raise record_error(key, _label("reasoning_steps", keys), "expected a list of step objects (optionally "
                           f"wrapped as [[...]]), got {_describe(released_steps)}")
    steps, skipped = unwrapped
    released_answer = get("final_answer")
    if final_answer_fields(released_answer) is None:
        raise record_error(key, _label("final_answer", keys),
                           f"expected {{value, justification}} or a string, got {_describe(released_answer)}")
    query_type, tool_metadata = get("query_type"), get("tool_metadata")
    blockers = []
    if not isinstance(query_type, str):
        blockers.append(f"{_label('query_type', keys)} is {_describe(query_type)}, not a string")
    if not isinstance(tool_metadata, dict):
        blockers.append(f"{_label('tool_metadata', keys)} is {_describe(tool_metadata)}, not an object")
    paths = media_paths(get("file_path"))
    kind = media_type(paths)
    return {
        "id": key,
        "query": get("query"),
        "query_type": query_type if isinstance(query_type, str) else "",
        "is_generative": key in generative_ids,
        "media_type": kind,
        "media": paths,
        "tool_metadata_json": _json(tool_metadata),
        "gt_steps_json": _json(released_steps),
        "gt_steps_flat_json": json.dumps(steps, ensure_ascii=False),
        "gt_final_answer_json": _json(released_answer),
        "gt_tools": sorted({str(step.get("tool", "")).strip() for step in steps} - {""}),
        "skipped_steps": skipped,
        "judge_blocker": "; ".join(blockers),
    }


def row_order(row: Mapping[str, Any]) -> tuple[int, str]:
    """Sort key of rows: key order "0", "1", ... numerically."""
    return len(row["id"]), row["id"]
