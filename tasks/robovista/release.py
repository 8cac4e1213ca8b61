"""Plugin extra around `core.records`: RoboVista's release schema (renamed fields, other label spellings, user
overrides; `adapters.release_schema`) and the loader's normaliser, which maps a row onto the published labels before
the core normalises it.

Domain and ability labels accept the paper's display names and the runner README's words out of the box ("driving",
"surgical", "industrial", "open datasets", "Home", ...); anything else is a schema override (README.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import datasets

from lmms_agentic.adapters.core.schema import McqDoc
from lmms_agentic.adapters.documents import load_canonical
from lmms_agentic.adapters.release_schema import LabelKind, ReleaseSchema, ResolvedSchema
from lmms_agentic.tasks.robovista.core import records
from lmms_agentic.tasks.robovista.core.records import ABILITY_SPLIT, BENCHMARK, DOMAINS, UNKNOWN

#: accepted out of the box beyond the slug and the paper's display name (runner README and third-party loaders)
DOMAIN_ALIASES = {
    "agriculture": ("agricultural",),
    "autonomous_driving": ("driving", "autonomous driving", "self-driving"),
    "domestic": ("home", "household"),
    "industrial_manufacturing": ("industrial", "industry", "manufacturing", "industrial manufacturing"),
    "surgical_robotics": ("surgical", "surgery", "surgical robotics"),
    "open_datasets": ("open datasets", "open-datasets", "open dataset"),
}

SCHEMA = ReleaseSchema(
    benchmark=BENCHMARK,
    fields={name: name for name in records.PUBLISHED_FIELDS},
    labels={
        "domain": LabelKind(tuple(DOMAINS), {k: (DOMAINS[k], *DOMAIN_ALIASES[k]) for k in DOMAINS},
                            allow_empty=UNKNOWN),
        "ability_type": LabelKind(tuple(ABILITY_SPLIT), allow_empty=UNKNOWN),
    },
)


def check_table(table: Any, schema: ResolvedSchema) -> None:
    """The columns every row needs are there (one error naming all that are missing)."""
    from lmms_agentic.adapters.documents import check_columns

    check_columns(table, schema, (*records.REQUIRED_FIELDS, "images"))


def published_labels(row: Mapping[str, Any], schema: ResolvedSchema) -> dict[str, Any]:
    """The row with every label spelling the schema maps replaced by its published value; empty, unmapped and
    non-string labels are left as they are, for the core to accept or refuse."""
    out = dict(row)
    for kind in schema.schema.labels:
        label = row.get(kind)
        if isinstance(label, str) and label.strip():
            published = schema.resolver(kind).get(label.strip())
            if published is not None:
                out[kind] = published
    return out


def normalise(row: Mapping[str, Any], n_images: int, schema: ResolvedSchema) -> McqDoc:
    """The loader's normaliser (`adapters.documents.load_canonical`): one row with canonical field names -> `McqDoc`."""
    return records.normalise(published_labels(row, schema), n_images)


def load_documents() -> datasets.Dataset:
    """Every RoboVista row of the located release in canonical form (image cells undecoded); loaded, checked and
    normalised once per process and location (`adapters.documents.load_canonical`)."""
    docs, _ = load_canonical(BENCHMARK, SCHEMA, normalise, "images", check=check_table)
    return docs
