"""Raw split -> canonical `datasets.Dataset`, shared by every MCQ benchmark's `process_docs`.

Steps, once per (benchmark, data location) for the life of the process (the subtasks of a group share them):
1. the release schema (`adapters.release_schema`) is resolved: the benchmark's defaults plus a user override found
   next to the data; raw columns are renamed to canonical fields (or gathered into lists);
2. table-level checks: required columns present, every label spelling known (one error listing the unknown ones of
   every label kind);
3. every row goes through the benchmark's normaliser, and its media are checked (every image, without decoding:
   empty, truncated, corrupt; a video: inside the dataset folder, present, not truncated, its first frame decodable;
   `media.check_image_cell`, `frames.check_video`), so bad media stop the run before any model is called; an image
   cell that gives only a path is resolved inside the data folder (`resolve_media`'s rules, never against the
   working folder) and kept as that absolute path; text that is not valid UTF-8 names its record and field; bad
   records (and duplicate ids) are collected and reported together, or excluded and counted with
   `LMMS_AGENTIC_SKIP_BAD_RECORDS=1` (`adapters.bad_records`);
4. the image column is counted from Arrow metadata and carried over untouched (left encoded:
   `Image(decode=False)`; only cells given by path get their checked absolute path), so images are never decoded
   or re-encoded while loading, and decoded once per question when a prompt is built.
The result has the `McqDoc.to_row()` columns plus the image column.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import datasets
import pyarrow.compute as pc

from lmms_agentic.adapters import bad_records, benchmarks, frames, media, provenance
from lmms_agentic.adapters.core.schema import McqDoc, RecordError
from lmms_agentic.adapters.data import DataLoadError, Location, load_split, locate, resolve_media
from lmms_agentic.adapters.release_schema import ReleaseSchema, ResolvedSchema, check_labels, present, resolve

Normaliser = Callable[[Mapping[str, Any], int, ResolvedSchema], McqDoc]
_CACHE: dict[tuple[str, Location], tuple[datasets.Dataset, Location]] = {}
log = logging.getLogger("lmms_agentic")


class ReleaseColumnsError(ValueError):
    """The table lacks columns the benchmark needs; the message says which, what is there, and the fix."""


def apply_field_map(raw: datasets.Dataset, schema: ResolvedSchema) -> datasets.Dataset:
    """The raw table with each canonical field under its canonical name (renamed, or gathered from several columns);
    columns the schema does not mention are kept as they are."""
    table = raw
    for canonical, columns in schema.fields.items():
        if isinstance(columns, str):
            if columns != canonical and columns in table.column_names:
                if canonical in table.column_names:  # the mapping is authoritative: that column is not the field
                    table = table.remove_columns([canonical])
                table = table.rename_column(columns, canonical)
        elif present(table.column_names, columns):
            gathered = [list(values) for values in zip(*(table[c] for c in columns), strict=True)]
            table = table.remove_columns(list(columns)).add_column(canonical, gathered)
    return table


def check_columns(raw: datasets.Dataset, schema: ResolvedSchema, required: tuple[str, ...]) -> None:
    """One error naming every required field the raw table lacks (under the column the schema maps it from), the
    columns it has, and the override that would fix it."""
    missing = [f"{name} (column {schema.fields[name]!r})" for name in required
               if not present(raw.column_names, schema.fields[name])]
    if missing:
        benchmark = schema.schema.benchmark
        raise ReleaseColumnsError(
            f"{benchmark}: the data lacks {', '.join(missing)}; its columns are {sorted(raw.column_names)} "
            f"(schema: {schema.source}). If the release renamed them, map them in a schema override "
            f"(lmms_agentic_schema.yaml next to the data, or LMMS_AGENTIC_SCHEMA_{benchmark.upper()}=file), e.g.\n"
            f"fields:\n" + "\n".join(f"  {name}: <raw column>" for name in required
                                     if not present(raw.column_names, schema.fields[name])))


def _text_rows(table: datasets.Dataset, benchmark: str, where: str) -> list[dict[str, Any] | RecordError]:
    """The rows of `table` as dicts; a row holding text that is not valid UTF-8 becomes the `RecordError` naming its
    record and field (Arrow does not validate strings read from parquet; Python's decoding then fails)."""
    try:
        return list(table.to_list())
    except UnicodeDecodeError:
        pass
    arrow = table.data.table
    out: list[dict[str, Any] | RecordError] = []
    for index in range(len(table)):
        try:
            out.append(arrow.slice(index, 1).to_pylist()[0])
            continue
        except UnicodeDecodeError:
            pass
        try:
            record_id = str(arrow.column("id")[index].as_py()) if "id" in arrow.column_names else f"<row {index}>"
        except UnicodeDecodeError:
            record_id = f"<row {index}>"
        for name in arrow.column_names:
            try:
                arrow.column(name)[index].as_py()
            except UnicodeDecodeError as err:
                out.append(RecordError(benchmark, record_id, name,
                                       f"is not valid UTF-8 text (byte {err.object[err.start]:#04x} at offset "
                                       f"{err.start}) in {where}"))
                break
    return out


def _field(schema: ResolvedSchema, canonical: str) -> str:
    raw = schema.fields.get(canonical, canonical)
    return raw if isinstance(raw, str) else canonical


def canonicalise(raw: datasets.Dataset, normalise: Normaliser, schema: ResolvedSchema, image_column: str,
                 where: str, media_root: str | None = None) -> datasets.Dataset:
    """Normalise every row of `raw` (already in canonical field names) and check its media; ids must be unique.
    `where` describes the data for error messages; `media_root` is the folder relative video paths live in (None:
    videos are not checked, e.g. a table read from the datasets cache)."""
    benchmark = schema.schema.benchmark
    check_labels(schema, {kind: raw[kind] for kind in schema.schema.labels if kind in raw.column_names})
    if image_column in raw.column_names:
        counts = [n or 0 for n in pc.list_value_length(raw.data.column(image_column)).to_pylist()]
        text_columns = [c for c in raw.column_names if c != image_column]
    else:
        counts = [0] * len(raw)
        text_columns = raw.column_names
    rows = list(enumerate(zip(_text_rows(raw.select_columns(text_columns), benchmark, where), counts, strict=True)))
    image_cells = raw.data.column(image_column) if image_column in raw.column_names else None
    image_field, video_field = _field(schema, image_column), _field(schema, "video")
    in_folder: dict[tuple[int, int], str] = {}  # (row, position) -> the absolute path of an image given by path

    def check_media(index: int, doc: McqDoc) -> None:
        for position, cell in enumerate((image_cells[index].as_py() or []) if image_cells is not None else []):
            where = f"{benchmark} record {doc.id!r}, {image_field}[{position}]"
            written = image_path(cell)
            if written is None:
                media.check_image_cell(cell, where)
                continue
            image = _image_in_folder(written, media_root, benchmark, doc.id, f"{image_field}[{position}]")
            media.check_image_cell(image, where)
            in_folder[index, position] = image
        if doc.visuals.video and media_root is not None:
            try:
                path = resolve_media(media_root, doc.visuals.video, benchmark=benchmark, record_id=doc.id,
                                     field_name=video_field)
            except FileNotFoundError:
                missing = Path(media_root) / doc.visuals.video
                raise RecordError(benchmark, doc.id, video_field, f"video file {missing} does not exist") from None
            frames.check_video(path, f"{benchmark} record {doc.id!r}, {video_field}")

    def convert(item: tuple[int, tuple[dict[str, Any] | RecordError, int]]) -> tuple[int, McqDoc]:
        index, (row, n_images) = item
        if isinstance(row, RecordError):
            raise row
        doc = normalise(row, n_images, schema)
        check_media(index, doc)
        return index, doc

    good, excluded = bad_records.screen(benchmark, rows, convert)
    repeated = bad_records.duplicates(benchmark, [doc.id for _, doc in good])
    if repeated:
        if not bad_records.skip_enabled():
            raise bad_records.BadRecordsError(benchmark, repeated)
        kept: list[tuple[int, McqDoc]] = []
        seen: set[str] = set()
        for index, doc in good:
            if doc.id not in seen:
                kept.append((index, doc))
                seen.add(doc.id)
        good, excluded = kept, excluded + repeated
    if excluded:
        provenance.record(benchmark, excluded={"count": len(excluded), "records": [e.as_dict() for e in excluded]})
    if not good:
        raise DataLoadError(f"{where} holds no usable {benchmark} rows")
    canonical = datasets.Dataset.from_list([doc.to_row() for _, doc in good])
    if image_column not in raw.column_names:
        return canonical
    # keep images encoded: rows then hand out {"bytes", "path"} cells and the tasks decode each question's images
    # once (adapters.media.decoded_once), instead of datasets decoding them on every row access
    if in_folder:
        return datasets.concatenate_datasets([canonical, _with_paths_in_folder(raw, image_column, good, in_folder)],
                                             axis=1)
    images = raw.select_columns([image_column])
    if len(good) != len(raw):
        images = images.select([i for i, _ in good]).flatten_indices()
    feature = images.features[image_column]
    if isinstance(feature, datasets.Sequence | datasets.List) and isinstance(feature.feature, datasets.Image):
        info = images.info.copy()  # same Arrow storage, only the feature's decode flag changes: zero copy
        info.features = datasets.Features({image_column: datasets.List(datasets.Image(decode=False))})
        images = datasets.Dataset(images.data, info=info)
    return datasets.concatenate_datasets([canonical, images], axis=1)


def image_path(cell: Any) -> str | None:
    """The path an image cell gives instead of its bytes (a `{"bytes": None, "path": ...}` cell, or a bare path), or
    None when the cell holds the bytes (or nothing)."""
    if isinstance(cell, str):
        return cell or None
    if isinstance(cell, Mapping) and not cell.get("bytes") and cell.get("path"):
        return str(cell["path"])
    return None


def _image_in_folder(written: str, media_root: str | None, benchmark: str, record_id: str, field_name: str) -> str:
    """The absolute path of an image a cell names by path, inside the data folder (`resolve_media`'s rules: no
    absolute path, no `..`, no link out, no loop, regular files only), never resolved against the working folder."""
    if media_root is None:
        raise RecordError(benchmark, record_id, field_name,
                          f"the image cell gives only a path ({written!r}) and this data has no folder to find it "
                          "in; use a local copy of the dataset folder, or a table that holds the image bytes")
    try:
        path = resolve_media(media_root, written, benchmark=benchmark, record_id=record_id, field_name=field_name)
    except FileNotFoundError:
        raise RecordError(benchmark, record_id, field_name,
                          f"image file {Path(media_root) / written} does not exist") from None
    return os.path.abspath(path)


def _with_paths_in_folder(raw: datasets.Dataset, image_column: str, good: list[tuple[int, McqDoc]],
                          in_folder: Mapping[tuple[int, int], str]) -> datasets.Dataset:
    """The image column of the `good` rows with every image given by path pointing at its checked file inside the
    data folder (so reading it later does not depend on the working folder); cells holding bytes are kept."""
    cells = raw.data.column(image_column)
    column = []
    for index, _ in good:
        row = []
        for position, cell in enumerate(cells[index].as_py() or []):
            path = in_folder.get((index, position))
            row.append({"bytes": None, "path": path} if path is not None else cell)
        column.append(row)
    features = datasets.Features({image_column: datasets.List(datasets.Image(decode=False))})
    return datasets.Dataset.from_dict({image_column: column}, features=features)


def load_canonical(benchmark: str, release: ReleaseSchema, normalise: Normaliser, image_column: str = "images",
                   check: Callable[[datasets.Dataset, ResolvedSchema], None] | None = None,
                   finish: Callable[[datasets.Dataset], datasets.Dataset] | None = None,
                   ) -> tuple[datasets.Dataset, Location]:
    """Locate, load, check and normalise a benchmark (by name, as its `benchmark.json` declares it) once per
    process and location. `check` runs table-level checks on the raw table (e.g. required columns); `finish` a
    last pass over the canonical documents (e.g. facts read from media headers)."""
    source = benchmarks.get(benchmark).source
    key = (source.benchmark, locate(source))
    if key not in _CACHE:
        raw, location = load_split(source)
        schema = resolve(release, location.root)
        if check is not None:
            check(raw, schema)
        table = apply_field_map(raw, schema)
        docs = canonicalise(table, normalise, schema, image_column, location.describe(), media_root=location.root)
        if finish is not None:
            docs = finish(docs)
        expected = benchmarks.get(benchmark).expected_rows
        provenance.record(benchmark, schema=schema.describe(), usable_rows=len(docs), expected_rows=expected)
        if location.kind != "mini" and expected is not None and len(docs) != expected:
            log.warning("%s has %d usable rows at %s; the paper has %d: scores are not comparable with it.",
                        benchmark, len(docs), location.describe(), expected)
        _CACHE[key] = docs, location
    return _CACHE[key]


def select_where(docs: datasets.Dataset, column: str, value: Any) -> datasets.Dataset:
    """The rows whose `column` equals `value` (a benchmark's domain or kind subtask), without copying media."""
    return docs.select([i for i, cell in enumerate(docs[column]) if cell == value])
