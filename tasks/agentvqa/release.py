"""How the plugin reads an AgentVQA release around the core's normaliser: schema overrides and column checks.

`SCHEMA` declares the core's field map and domain label tables (`core/records.py`) as a `ReleaseSchema`, so a
release that renamed a column or spells a domain differently is read with a user's schema override next to the data
(`lmms_agentic_schema.yaml`, see README.md), with no code edit. `adapters.documents.load_canonical` renames the raw
columns onto the canonical fields; `check_columns` validates the table's columns first and names what is missing or
unexpected; `normalise` maps an override's domain spelling onto its canonical label and hands the row to the core,
with the columns to name in errors and the declared answer format. `load_documents` is the loader the plugin's
hooks use: the located release in canonical form, the image size of coordinate items read from image headers, and
the data folder (where a row's video lives) in every row.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import Any

import datasets

from lmms_agentic.adapters.core.schema import McqDoc
from lmms_agentic.adapters.documents import ReleaseColumnsError, load_canonical
from lmms_agentic.adapters.media import as_pil
from lmms_agentic.adapters.release_schema import LabelKind, ReleaseSchema, ResolvedSchema, present
from lmms_agentic.tasks.agentvqa.core import documents, records

REQUIRED = ("id", "domain", "source", "question", "options", "answer")
MEDIA = ("images", "video")
log = logging.getLogger("lmms_agentic.agentvqa")

SCHEMA = ReleaseSchema(
    benchmark=records.BENCHMARK,
    fields=records.FIELD_MAP,
    labels={"domain": LabelKind(tuple(records.DOMAINS),
                                {k: (v, *records.LEGACY_DOMAINS[k]) for k, v in records.DOMAINS.items()})},
    answer_formats=records.ANSWER_FORMATS,
    default_answer_format="auto",
)


class SchemaError(ReleaseColumnsError):
    """The table's columns do not match the field map; the message says which and how to fix it."""


def check_columns(raw: Any, schema: ResolvedSchema) -> None:
    """Fail if a required field or both media fields are missing from the raw table (under the columns the schema
    maps them from); warn about columns nothing reads."""
    columns = set(raw.column_names)
    mapped = {column for value in schema.fields.values() for column in ([value] if isinstance(value, str) else value)}
    missing = [f"{canonical} (column {schema.fields[canonical]!r})" for canonical in REQUIRED
               if not present(columns, schema.fields[canonical])]
    if not any(present(columns, schema.fields[m]) for m in MEDIA):
        missing.append(f"images or video (columns {schema.fields['images']!r} / {schema.fields['video']!r})")
    unexpected = sorted(columns - mapped)
    if missing:
        id_column = schema.fields["id"]
        first = raw[0].get(id_column, "?") if len(raw) and isinstance(id_column, str) else "?"
        raise SchemaError(
            f"AgentVQA columns do not match the field map: missing {', '.join(missing)}; "
            f"unexpected {unexpected or 'none'}. First record: id={first!r}. If the release renamed a column, map "
            f"it in a schema override (lmms_agentic_schema.yaml next to the data, or LMMS_AGENTIC_SCHEMA_AGENTVQA="
            f"file), e.g.\nfields:\n  source: <the raw column>   # canonical field: raw column")
    if unexpected:
        log.warning("AgentVQA columns nothing reads (ignored): %s", unexpected)


def normalise(row: Mapping[str, Any], n_images: int, schema: ResolvedSchema) -> McqDoc:
    """One row (canonical field names, as `load_canonical` renamed them) -> `McqDoc`, read with `schema`: a domain
    spelling the override maps (an empty or missing one included, `"": <domain>`) becomes its canonical label before
    the core sees it (a spelling nothing maps is left for the core to reject)."""
    label = row.get("domain")
    domain = schema.resolver("domain").get(label)
    core_row = {**row, "domain": domain} if domain is not None and (label is None or isinstance(label, str)) else row
    return records.normalise(core_row, n_images, columns=schema.fields, answer_format=schema.answer_format or "auto")


def load_documents() -> datasets.Dataset:
    """Every AgentVQA row of the located release in canonical form, with its data folder (`media_root`); loaded,
    checked and normalised once per process and location (`adapters.documents.load_canonical`)."""
    docs, location = load_canonical(records.BENCHMARK, SCHEMA, normalise, documents.IMAGES, check=check_columns,
                                    finish=_with_image_sizes)
    return _with_root(docs, location.root or "")


@functools.lru_cache(maxsize=4)
def _with_root(docs: datasets.Dataset, root: str) -> datasets.Dataset:
    return docs.add_column("media_root", [root] * len(docs))


def _with_image_sizes(docs: datasets.Dataset) -> datasets.Dataset:
    """Coordinate items without a recorded image size get their first image's size (read from its header, no
    decode; the cell may name a file of the data folder), so prompts and scoring render the same options; lmms-eval
    removes images before process_results."""
    metas = docs["metadata_json"]
    changed = list(metas)
    for index, raw in enumerate(metas):
        doc = {"metadata_json": raw}
        if documents.needs_image_size(doc):
            cells = docs[index][documents.IMAGES] or []
            if cells:
                where = f"agentvqa record {docs[index]['id']!r}, {documents.IMAGES}[0]"
                with as_pil(cells[0], where=where) as image:
                    changed[index] = documents.with_image_size(doc, image.size)["metadata_json"]
    if changed == metas:
        return docs
    return docs.remove_columns(["metadata_json"]).add_column("metadata_json", changed)
