"""Reader and normaliser for Agent-X (`Tajamul21/Agent-X`): `data.json` + `files/` -> one row per task.

Release layout: `data.json` maps keys "0".."827" to a ONE-element list holding the record {query, file_path,
query_type, tool_metadata, reasoning_steps, final_answer}; media live in `files/` and `file_path` names them
relative to it (several images: comma-separated).  The record's keys are read through `SCHEMA`
(`adapters.release_schema`): a release that renamed them loads with a `lmms_agentic_schema.yaml` next to the data (or
a file named by `LMMS_AGENTIC_SCHEMA_AGENTX`), e.g. `fields: {query: question}`; no code edit.

What the released code does with imperfect records, and what this reader does (README "Release quirks"):

* a reasoning step that is not an object: the authors' reader skips it (`if not isinstance(step, dict): continue  #
  skip malformed`, analysis/error_analysis.ipynb).  Same here, for the deterministic checks (GT tools, step
  keywords); the positions are kept per row (`skipped_steps`) and the loader counts and logs them.  Steps wrapped as
  `[[...]]` are unwrapped once, as the authors do (`len(steps) == 1 and isinstance(steps[0], list)`);
* the judges always get the GROUND TRUTH AS RELEASED (`gt_steps_json`, `gt_final_answer_json`, `tool_metadata_json`,
  `query`, `query_type`, all verbatim): the released judge scripts `str()` / `json.dumps` the raw values;
* an empty `query_type` string: the released judge scripts pass it on as is (`"query_type: " + query_type`), so the
  record is kept and judged with the empty label;
* a `tool_metadata` that is not an object, or a `query_type` that is not a string (or either missing): the released
  judge scripts raise on it (`tool_metadata.keys()`, `"query_type: " + query_type`) inside their per-item `try`,
  which leaves ALL twelve scores of that item None, so it drops out of every judged mean.  Here the record is kept
  (the model is run and every deterministic metric computed), no judge call is made, and every judged metric of the
  item is unscored with reason `judge.NOT_JUDGEABLE` (`judge_blocker` says why): the same means as the authors';
* records that cannot be used at all (not a one-element list holding an object, an empty or non-string `query` or
  `file_path`, `reasoning_steps` that are not a list, a `final_answer` that is neither {value, ...} nor a string, a
  key repeated inside one object) and keys repeated at the top level of data.json (Python's json keeps the LAST
  copy silently): ONE error lists every such record (`adapters.bad_records`); with
  `LMMS_AGENTIC_SKIP_BAD_RECORDS=1` they are excluded instead (of a repeated key the FIRST copy is kept), counted
  and written into the results file.

Generative tasks are identified by key (`protocol.GENERATIVE_IDS`), never by row position.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lmms_agentic.adapters import bad_records
from lmms_agentic.adapters.bad_records import BadRecordsError, Exclusion
from lmms_agentic.adapters.core.schema import RecordError
from lmms_agentic.adapters.docs import ReleaseColumnsError
from lmms_agentic.adapters.release_schema import OVERRIDE_FILE, ReleaseSchema, ResolvedSchema, SchemaOverrideError

BENCHMARK = "agentx"
DATA_FILE = "data.json"
MEDIA_FOLDER = "files"
VIDEO_EXTENSIONS = (".mp4", ".avi", ".mov", ".mkv", ".webm")
FIELDS = ("query", "file_path", "query_type", "tool_metadata", "reasoning_steps", "final_answer")
SCHEMA = ReleaseSchema(BENCHMARK, {name: name for name in FIELDS})
"""The record keys of the release (canonical field -> data.json key); a user override may rename them."""
log = logging.getLogger("lmms_agentic")
_ABSENT = object()


def _fail(key: str, field_name: str, problem: str) -> RecordError:
    return RecordError(BENCHMARK, key, field_name, problem)


# ---------------------------------------------------------------- reading data.json
class _JsonObject(dict[str, Any]):
    """A JSON object that remembers the keys it held more than once (the FIRST value of each is kept)."""

    repeated: list[str]


@dataclass(frozen=True)
class RawRelease:
    """`data.json` as read: the first record under each key, and the keys that occurred again."""

    path: Path
    entries: dict[str, Any]
    repeated_keys: tuple[str, ...] = ()
    """Top-level keys seen more than once, once per extra occurrence."""

    @property
    def occurrences(self) -> int:
        """Entries in the file, repeated keys included (the rows read)."""
        return len(self.entries) + len(self.repeated_keys)


def read_data_json(folder: Path) -> RawRelease:
    """The raw `data.json` of a dataset folder, repeated keys detected; a missing or unreadable file names the
    path."""
    path = folder / DATA_FILE
    if not path.is_file():
        raise FileNotFoundError(f"Agent-X expects {path} (the release's data.json next to files/)")
    def pairs_hook(pairs: list[tuple[str, Any]]) -> _JsonObject:
        obj = _JsonObject()
        obj.repeated = []
        for key, value in pairs:
            if key in obj:
                obj.repeated.append(key)
            else:
                obj[key] = value
        return obj

    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{path} is not UTF-8 text: byte {raw[exc.start]:#04x} at offset {exc.start} (line {line}) "
                         "cannot be decoded; re-save the file as UTF-8") from None
    try:
        data = json.loads(text, object_pairs_hook=pairs_hook)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(data, _JsonObject):
        raise ValueError(f"{path} must map task keys to records, got {type(data).__name__}")
    return RawRelease(path, dict(data), tuple(data.repeated))


def _repeated_keys(value: Any, path: str) -> list[str]:
    """Paths of the keys repeated inside `value` ("reasoning_steps[1].tool")."""
    found: list[str] = []
    if isinstance(value, dict):
        found += [f"{path}.{key}" if path else key for key in getattr(value, "repeated", ())]
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                found += _repeated_keys(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, (dict, list)):
                found += _repeated_keys(item, f"{path}[{index}]")
    return found


# ---------------------------------------------------------------- fields
def raw_keys(schema: ResolvedSchema | None) -> dict[str, str]:
    """Canonical field -> the data.json key it is read from (one key each: Agent-X fields are not gathered)."""
    if schema is None:
        return dict(SCHEMA.fields)
    out: dict[str, str] = {}
    for name in FIELDS:
        raw = schema.raw_field(name)
        if not isinstance(raw, str):
            raise SchemaOverrideError(f"{schema.source}: fields.{name} must name one data.json key for Agent-X, "
                                      f"got {list(raw)}")
        out[name] = raw
    return out


def _label(name: str, keys: Mapping[str, str]) -> str:
    return name if keys[name] == name else f"{name} (data.json key {keys[name]!r})"


def _describe(value: object) -> str:
    if value is _ABSENT:
        return "missing"
    if value is None:
        return "null"
    return f"a {type(value).__name__}" if not isinstance(value, str) else "an empty string"


def check_fields_present(entries: Mapping[str, Any], schema: ResolvedSchema | None) -> None:
    """One error naming every field that NO record carries (a renamed key, most likely), with the override that
    maps it."""
    keys = raw_keys(schema)
    records = [value[0] for value in entries.values()
               if isinstance(value, list) and value and isinstance(value[0], dict)]
    if not records:
        return
    missing = [name for name in FIELDS if not any(keys[name] in record for record in records)]
    if not missing:
        return
    seen = sorted({key for record in records for key in record})
    source = schema.source if schema is not None else "defaults"
    raise ReleaseColumnsError(
        f"{BENCHMARK}: no record of data.json has {', '.join(repr(keys[name]) + f' ({name})' for name in missing)}; "
        f"the records' keys are {seen} (schema: {source}). If the release renamed them, map them in a schema "
        f"override ({OVERRIDE_FILE} next to data.json, or LMMS_AGENTIC_SCHEMA_AGENTX=file), e.g.\n"
        "fields:\n" + "\n".join(f"  {name}: <data.json key>" for name in missing))


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
    if len(paths) == 1 and paths[0].lower().endswith(VIDEO_EXTENSIONS):
        return "video"
    return "multi_image" if len(paths) > 1 else "image"


def _json(value: object) -> str:
    return json.dumps(None if value is _ABSENT else value, ensure_ascii=False)


# ---------------------------------------------------------------- one record
def normalise(key: str, value: Any, generative_ids: Collection[str],
              schema: ResolvedSchema | None = None) -> dict[str, Any]:
    """One `data.json` entry -> a flat task row (raises `RecordError` for a record that cannot be used at all)."""
    keys = raw_keys(schema)
    if not isinstance(value, list) or len(value) != 1 or not isinstance(value[0], dict):
        raise _fail(key, "<record>", "expected a one-element list holding the task record")
    record: Mapping[str, Any] = value[0]
    repeated = _repeated_keys(record, "")
    if repeated:
        raise _fail(key, repeated[0].partition(".")[0].partition("[")[0],
                    f"key(s) {', '.join(repeated)} occur more than once in one object (which copy is meant is "
                    "unknown; Python's json would keep the last one silently)")

    def get(name: str) -> Any:
        return record.get(keys[name], _ABSENT)

    for name in ("query", "file_path"):
        text = get(name)
        if not isinstance(text, str) or not text.strip():
            raise _fail(key, _label(name, keys), f"must be a non-empty string, got {_describe(text)}")
    released_steps = get("reasoning_steps")
    unwrapped = unwrap_steps(released_steps)
    if unwrapped is None:
        raise _fail(key, _label("reasoning_steps", keys),
                    f"expected a list of step objects (optionally wrapped as [[...]]), got {_describe(released_steps)}")
    steps, skipped = unwrapped
    released_answer = get("final_answer")
    if final_answer_fields(released_answer) is None:
        raise _fail(key, _label("final_answer", keys),
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


def _order(row: Mapping[str, Any]) -> tuple[int, str]:
    return len(row["id"]), row["id"]


def normalise_all(data: Mapping[str, Any], generative_ids: Collection[str],
                  schema: ResolvedSchema | None = None) -> list[dict[str, Any]]:
    """Every task, in key order ("0", "1", ... numerically); the first bad record raises its `RecordError`."""
    return sorted((normalise(str(key), value, generative_ids, schema) for key, value in data.items()), key=_order)


# ---------------------------------------------------------------- the whole release
@dataclass(frozen=True)
class Loaded:
    """The usable rows of a release and what was set aside (see the module docstring)."""

    rows: list[dict[str, Any]]
    occurrences: int
    """Entries in data.json, repeated keys included."""
    excluded: list[Exclusion] = field(default_factory=list)
    """Records left out (only with LMMS_AGENTIC_SKIP_BAD_RECORDS=1), repeated keys' later copies included."""

    @property
    def skipped_steps(self) -> dict[str, list[int]]:
        """id -> 1-based positions of the GT steps skipped as malformed (not objects)."""
        return {row["id"]: list(row["skipped_steps"]) for row in self.rows if row["skipped_steps"]}

    @property
    def not_judged(self) -> dict[str, str]:
        """id -> why the released judge scripts cannot judge it (every judged metric of the item is unscored)."""
        return {row["id"]: row["judge_blocker"] for row in self.rows if row["judge_blocker"]}


def check_media(row: Mapping[str, Any], media_root: Path, field_name: str = "file_path") -> None:
    """Raise a `RecordError` naming the record and `file_path[i]` when one of the row's media files escapes
    `media_root` (``..``, an absolute path, a link out), is missing, empty, truncated or unreadable (no decoding)."""
    from lmms_agentic.adapters import frames, media
    from lmms_agentic.adapters.data import resolve_media

    for position, relative in enumerate(row["media"]):
        name = f"{field_name}[{position}]"
        try:
            path = resolve_media(media_root, relative, benchmark=BENCHMARK, record_id=row["id"], field_name=name)
        except FileNotFoundError:
            raise _fail(row["id"], name, f"media file {media_root / relative} does not exist") from None
        where = f"{BENCHMARK} record {row['id']!r}, {name}"
        if row["media_type"] == "video":
            frames.check_video(path, where)
        else:
            media.check_image_cell(str(path), where)


def load(folder: Path, generative_ids: Collection[str], schema: ResolvedSchema | None = None,
         environ: Mapping[str, str] | None = None, media_root: Path | None = None) -> Loaded:
    """Read, check and normalise a release folder.  Raises ONE `BadRecordsError` listing every unusable record and
    every repeated key, unless `LMMS_AGENTIC_SKIP_BAD_RECORDS=1` (then they are excluded and listed in `excluded`).
    With `media_root`, every record's media files are checked too (`check_media`)."""
    raw = read_data_json(folder)
    check_fields_present(raw.entries, schema)
    repeated = bad_records.duplicates(BENCHMARK, [*raw.entries, *raw.repeated_keys])
    file_path = raw_keys(schema)["file_path"]

    def convert(item: tuple[str, Any]) -> dict[str, Any]:
        row = normalise(str(item[0]), item[1], generative_ids, schema)
        if media_root is not None:
            check_media(row, media_root, file_path)
        return row

    try:
        rows, excluded = bad_records.screen(BENCHMARK, list(raw.entries.items()), convert, environ)
    except BadRecordsError as exc:
        raise BadRecordsError(BENCHMARK, exc.exclusions + repeated) from None
    if repeated:
        if not bad_records.skip_enabled(environ):
            raise BadRecordsError(BENCHMARK, repeated)
        log.warning("%s: %d repeated key(s) in data.json (%s=1): the first copy of each is kept, the later ones are "
                    "excluded: %s", BENCHMARK, len(repeated), bad_records.SKIP_ENV,
                    ", ".join(e.record_id for e in repeated[: bad_records.SHOWN]))
    if not rows:
        raise ValueError(f"{raw.path} holds no usable Agent-X records")
    return Loaded(sorted(rows, key=_order), raw.occurrences, excluded + repeated)
