"""How the plugin reads an AgentVQA release around the core's normaliser: schema overrides and column checks.

`SCHEMA` declares the core's field map and domain label tables (`core/records.py`) as a `ReleaseSchema`, so a
release that renamed a column or spells a domain differently is read with a user's schema override next to the data
(`lmms_agentic_schema.yaml`, see README.md), with no code edit. `adapters.documents.load_canonical` renames the raw
columns onto the canonical fields; `check_columns` validates the table's columns first and names what is missing or
unexpected; `normalise` maps an override's domain spelling onto its canonical label and hands the row to the core,
with the columns to name in errors and the declared answer format.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from lmms_agentic.adapters.core.schema import McqDoc
from lmms_agentic.adapters.documents import ReleaseColumnsError
from lmms_agentic.adapters.release_schema import LabelKind, ReleaseSchema, ResolvedSchema, present
from lmms_agentic.tasks.agentvqa.core import records

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
