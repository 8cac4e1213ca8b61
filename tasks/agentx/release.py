"""Agent-X release loading (plugin): `data.json` + `files/` of a located release -> the checked document rows.

Owns reading `data.json` (UTF-8 and JSON errors naming the file; keys repeated at the top level or inside one
record are detected: Python's json would keep the LAST copy silently; an entry nesting deeper than Python's json
reads is set aside and reported as a bad record, a file nesting that deep outside every record is named), the
release schema (`SCHEMA`, `adapters.release_schema`: a release that renamed the record keys loads with a
`lmms_agentic_schema.yaml` next to the data, or a file named by `LMMS_AGENTIC_SCHEMA_AGENTX`, e.g.
`fields: {query: question}`; no code edit), bad-record screening (`adapters.bad_records`: ONE error lists every
unusable record and every repeated key; with `LMMS_AGENTIC_SKIP_BAD_RECORDS=1` they are excluded instead, of a
repeated key the FIRST copy is kept) and the media integrity checks.  Each record is normalised by the core
(`core/records.py`), which reads it through the schema's keys.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets

from lmms_agentic.adapters import bad_records, benchmarks, provenance
from lmms_agentic.adapters.bad_records import BadRecordsError, Exclusion
from lmms_agentic.adapters.data import DataLoadError, Location, fetch_folder, locate, record_provenance
from lmms_agentic.adapters.documents import ReleaseColumnsError
from lmms_agentic.adapters.release_schema import (
    OVERRIDE_FILE,
    ReleaseSchema,
    ResolvedSchema,
    SchemaOverrideError,
    resolve,
)
from lmms_agentic.tasks.agentx.core.records import (
    BENCHMARK,
    FIELDS,
    MAX_NESTING,
    MEDIA_FOLDER,
    PUBLISHED_KEYS,
    check_nesting,
    field_label,
    is_record_shaped,
    normalise,
    record_error,
    row_order,
    too_deep,
)
from lmms_agentic.tasks.agentx.core.release_data import GENERATIVE_IDS

DATA_FILE = "data.json"
SCHEMA = ReleaseSchema(BENCHMARK, dict(PUBLISHED_KEYS))
"""The record keys of the release (canonical field -> data.json key); a user override may rename them."""
log = logging.getLogger("lmms_agentic")


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
    too_deep: Mapping[str, str] = field(default_factory=dict)
    """Keys of the entries set aside (read as null) because they nest too deep for Python's json -> the field."""

    @property
    def occurrences(self) -> int:
        """Entries in the file, repeated keys included (the rows read)."""
        return len(self.entries) + len(self.repeated_keys)


class DataJsonError(DataLoadError, ValueError):
    """data.json cannot be read as a release (not UTF-8, not JSON, nested too deep, not a mapping): deterministic, so
    lmms-eval's dataset-loading retry gives up at once (``DataLoadError``); still a ``ValueError`` for callers."""


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
        raise DataJsonError(f"{path} is not UTF-8 text: byte {raw[exc.start]:#04x} at offset {exc.start} (line {line}) "
                         "cannot be decoded; re-save the file as UTF-8") from None
    deep: dict[str, str] = {}
    try:
        try:
            data = json.loads(text, object_pairs_hook=pairs_hook)
        except RecursionError:  # some entry nests deeper than Python's json reads: set it aside, read the rest
            text, deep = _without_deep_entries(text, path)
            data = json.loads(text, object_pairs_hook=pairs_hook)
    except json.JSONDecodeError as exc:
        raise DataJsonError(f"{path} is not valid JSON: {exc}") from exc
    except RecursionError:
        raise _file_too_deep(path) from None
    if not isinstance(data, _JsonObject):
        raise DataJsonError(f"{path} must map task keys to records, got {type(data).__name__}")
    return RawRelease(path, dict(data), tuple(data.repeated), deep)


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},]')
_TEXT_NESTING = MAX_NESTING + 3
"""Levels in data.json text past which an entry is set aside: the file's object, the entry's list and the record's
object come before a record field's own MAX_NESTING levels."""


def _file_too_deep(path: Path) -> DataJsonError:
    return DataJsonError(f"{path} nests lists or objects more than {_TEXT_NESTING} levels deep outside any record; it "
                      "is not a release's data.json (download the release's file again)")


def _without_deep_entries(text: str, path: Path) -> tuple[str, dict[str, str]]:
    """`text` with every top-level entry that nests more than _TEXT_NESTING levels replaced by null, and those
    entries' keys -> the record field where the nesting went too deep ("<record>" outside any field).  Scans the
    text's strings and brackets without recursion; deep nesting outside every entry (the whole file a list of lists)
    is a `ValueError` naming the file."""
    depth, key, field_name, top_is_object = 0, "", "<record>", False
    expect_key = expect_field = entry_deep = False
    start, deep_field, spans = 0, "", []
    deep: dict[str, str] = {}
    for token in _TOKENS.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth == 1:
                top_is_object, expect_key = mark == "{", mark == "{"
            elif depth == 2:
                start, field_name, entry_deep = token.start(), "<record>", False
            elif depth == 3 and mark == "{":
                expect_field = True
            if depth > _TEXT_NESTING:
                if not top_is_object or depth <= 2:
                    raise _file_too_deep(path)
                if not entry_deep:
                    entry_deep, deep_field = True, field_name
        elif mark in "]}":
            if depth == 2 and entry_deep:
                spans.append((start, token.end()))
                deep.setdefault(key, deep_field)
            depth -= 1
        elif mark == ",":
            expect_key, expect_field = expect_key or depth == 1, expect_field or depth == 3
        elif depth == 1 and expect_key:
            key, expect_key = json.loads(mark), False
        elif depth == 3 and expect_field:
            field_name, expect_field = json.loads(mark), False
    for begin, end in reversed(spans):
        text = text[:begin] + "null" + text[end:]
    return text, deep


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


def check_no_repeated_keys(key: str, value: Any) -> None:
    """Raise a `RecordError` when a key occurs more than once inside one record (which copy is meant is unknown)."""
    repeated = _repeated_keys(value[0], "") if is_record_shaped(value) else []
    if repeated:
        raise record_error(key, repeated[0].partition(".")[0].partition("[")[0],
                           f"key(s) {', '.join(repeated)} occur more than once in one object (which copy is meant is "
                           "unknown; Python's json would keep the last one silently)")


# ---------------------------------------------------------------- the release schema
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
            raise record_error(row["id"], name, f"media file {media_root / relative} does not exist") from None
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
    keys = raw_keys(schema)

    def convert(item: tuple[str, Any]) -> dict[str, Any]:
        key = str(item[0])
        if key in raw.too_deep:
            raise record_error(key, field_label(raw.too_deep[key], keys), too_deep())
        check_nesting(key, item[1], keys)
        check_no_repeated_keys(key, item[1])
        row = normalise(key, item[1], generative_ids, keys)
        if media_root is not None:
            check_media(row, media_root, keys["file_path"])
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
        raise DataJsonError(f"{raw.path} holds no usable Agent-X records")
    return Loaded(sorted(rows, key=row_order), raw.occurrences, excluded + repeated)


_DOCS: dict[tuple[str, Any], datasets.Dataset] = {}


def load_documents() -> datasets.Dataset:
    """All Agent-X tasks of the located release, one row each, every row naming its media folder (`media_root`);
    loaded, checked and reported (provenance, set-aside data) once per process and location."""
    source = benchmarks.get(BENCHMARK).source
    key = (source.benchmark, locate(source))
    if key not in _DOCS:
        location = fetch_folder(source)
        root = Path(location.root or location.where)
        schema = resolve(SCHEMA, root)
        loaded = load(root, GENERATIVE_IDS, schema, media_root=root / MEDIA_FOLDER)
        for row in loaded.rows:
            row["media_root"] = str(root / MEDIA_FOLDER)
        record_provenance(source, location, loaded.occurrences)
        _report(loaded, schema, location)
        _DOCS[key] = datasets.Dataset.from_list(loaded.rows)
    return _DOCS[key]


def _report(loaded: Loaded, schema: ResolvedSchema, location: Location) -> None:
    """Provenance for the results file, and one log line per kind of set-aside data."""
    expected = benchmarks.get(BENCHMARK).expected_rows
    provenance.record(BENCHMARK, schema=schema.describe(), usable_rows=len(loaded.rows), expected_rows=expected)
    if loaded.excluded:
        provenance.record(BENCHMARK, excluded={"count": len(loaded.excluded),
                                               "records": [e.as_dict() for e in loaded.excluded]})
    shown = bad_records.SHOWN
    skipped = loaded.skipped_steps
    if skipped:
        count = sum(len(positions) for positions in skipped.values())
        provenance.record(BENCHMARK, skipped_steps={
            "count": count, "records": [{"id": k, "positions": v} for k, v in skipped.items()]})
        log.warning("%s: skipped %d malformed ground-truth reasoning step(s) (not objects), as the authors' reader "
                    "does, in %d record(s): %s", BENCHMARK, count, len(skipped), ", ".join(list(skipped)[:shown]))
    not_judged = loaded.not_judged
    if not_judged:
        provenance.record(BENCHMARK, not_judged={
            "count": len(not_judged), "records": [{"id": k, "problem": v} for k, v in not_judged.items()]})
        log.warning("%s: %d record(s) are not judged (the released judge scripts fail on them and leave all their "
                    "scores empty); their judged metrics are unscored: %s", BENCHMARK, len(not_judged),
                    "; ".join(f"{k}: {v}" for k, v in list(not_judged.items())[:shown]))
    if location.kind != "mini" and expected is not None and len(loaded.rows) != expected:
        log.warning("%s has %d usable rows at %s; the paper has %d: scores are not comparable with it.",
                    BENCHMARK, len(loaded.rows), location.describe(), expected)
