"""Raw split -> canonical `datasets.Dataset`, shared by every MCQ benchmark's `process_docs`.

Steps, once per (benchmark, data location) for the life of the process (the subtasks of a group share them):
1. the release schema (`adapters.release_schema`) is resolved: the benchmark's defaults plus a user override found
   next to the data; raw columns are renamed to canonical fields (or gathered into lists);
2. table-level checks: required columns present, every label spelling known (one error listing all unknown ones);
3. every row goes through the benchmark's normaliser; bad records (and duplicate ids) are collected and reported
   together, or excluded and counted with `LMMS_AGENTIC_SKIP_BAD_RECORDS=1` (`adapters.bad_records`);
4. the image column is counted from Arrow metadata and carried over untouched (left encoded:
   `Image(decode=False)`), so images are never decoded or re-encoded while loading, and decoded once per question
   when a prompt is built.
The result has the `McqDoc.to_row()` columns plus the image column.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import datasets
import pyarrow.compute as pc

from lmms_agentic.adapters import bad_records, benchmarks, provenance
from lmms_agentic.adapters.data import DataLoadError, Location, load_split, locate
from lmms_agentic.adapters.release_schema import ReleaseSchema, ResolvedSchema, present, resolve
from lmms_agentic.adapters.schema import McqDoc

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


def canonicalise(raw: datasets.Dataset, normalise: Normaliser, schema: ResolvedSchema, image_column: str,
                 where: str) -> datasets.Dataset:
    """Normalise every row of `raw` (already in canonical field names); ids must be unique. `where` describes the
    data for error messages."""
    benchmark = schema.schema.benchmark
    for kind in schema.schema.labels:
        if kind in raw.column_names:
            schema.resolver(kind).check(raw[kind])
    if image_column in raw.column_names:
        counts = [n or 0 for n in pc.list_value_length(raw.data.column(image_column)).to_pylist()]
        text_columns = [c for c in raw.column_names if c != image_column]
    else:
        counts = [0] * len(raw)
        text_columns = raw.column_names
    rows = list(enumerate(zip(raw.select_columns(text_columns).to_list(), counts, strict=True)))

    def convert(item: tuple[int, tuple[dict[str, Any], int]]) -> tuple[int, McqDoc]:
        index, (row, n_images) = item
        return index, normalise(row, n_images, schema)

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
    images = raw.select_columns([image_column])
    if len(good) != len(raw):
        images = images.select([i for i, _ in good]).flatten_indices()
    feature = images.features[image_column]
    if isinstance(feature, datasets.Sequence | datasets.List) and isinstance(feature.feature, datasets.Image):
        info = images.info.copy()  # same Arrow storage, only the feature's decode flag changes: zero copy
        info.features = datasets.Features({image_column: datasets.List(datasets.Image(decode=False))})
        images = datasets.Dataset(images.data, info=info)
    return datasets.concatenate_datasets([canonical, images], axis=1)


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
        docs = canonicalise(table, normalise, schema, image_column, location.describe())
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
