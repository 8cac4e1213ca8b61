"""RoboVista's documents and the selections of its tasks: release rows -> canonical documents -> one task's rows.

Owns `documents` (each release row through `records.normalise`, as the flat `McqDoc.to_row()` columns plus the
row's image cells under `images`, passed through untouched) and `VARIANTS`, the pure selection behind each task's
`process_docs`: one per domain slug, the rows without a domain label (`unlabeled`, overall score only), every row
(`all`), and the in-context protocol's five seeded example draws (`icl_seed0`..`icl_seed4`, every row). An
`icl_seed<k>` document adds its example (paper App. B: one of the same (task, domain), never the item itself, drawn
by `prompt.choose_incontext_examples`) as `icl_*` fields, and `icl_images`, the example row's `images` cell (the same
object) when the documents carry image cells. A row with no such example has empty example fields and is asked
zero-shot; its `icl_images` is its own `images` cell (never shown), one kind of value for columnar stores.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.core.task import Variant
from lmms_agentic.tasks.robovista.core import prompt, records
from lmms_agentic.tasks.robovista.core.records import DOMAINS, UNKNOWN

IMAGES = "images"
ICL_IMAGES = "icl_images"
ICL_SEEDS = range(5)
"""The paper averages five in-context queries; seed k is the task `robovista_icl_seed<k>`."""

Documents = list[dict[str, Any]]


def documents(rows: Sequence[Mapping[str, Any]]) -> Documents:
    """Release rows of the published schema -> canonical documents (a malformed row raises `RecordError` naming
    the record and the field). The image cells are counted, never decoded."""
    out = []
    for row in rows:
        cells = row.get(IMAGES)
        doc = records.normalise(row, len(cells) if cells else 0).to_row()
        doc[IMAGES] = cells
        out.append(doc)
    return out


def where_domain(domain: str) -> Callable[[Documents], Documents]:
    """The selection of the documents labelled `domain` (`records.UNKNOWN`: those without a domain label)."""
    def select(docs: Documents) -> Documents:
        return [dict(doc) for doc in docs if doc["domain"] == domain]

    select.__name__ = f"documents_of_{domain}"
    return select


def every_document(docs: Documents) -> Documents:
    return [dict(doc) for doc in docs]


def with_incontext_examples(docs: Documents, seed: int) -> Documents:
    """Every document with its in-context example of draw `seed` (see the module docstring)."""
    ids, domains = [str(doc["id"]) for doc in docs], [doc["domain"] for doc in docs]
    chosen = prompt.choose_incontext_examples(ids, [doc["metadata_json"] for doc in docs], domains, seed)
    out = []
    for doc, example_index in zip(docs, chosen, strict=True):
        example = None if example_index is None else docs[example_index]
        fields: dict[str, Any] = {
            "icl_seed": seed,
            "icl_example_id": "" if example is None else str(example["id"]),
            "icl_question": "" if example is None else example["question"],
            "icl_options": [] if example is None else list(example["options"]),
            "icl_answer": "" if example is None else example["answer"],
            "icl_reasoning": "" if example is None else json.loads(example["metadata_json"])["reasoning"],
        }
        if IMAGES in doc:
            fields[ICL_IMAGES] = (doc if example is None else example)[IMAGES]
        out.append({**doc, **fields})
    return out


def _icl_variant(seed: int) -> Callable[[Documents], Documents]:
    def select(docs: Documents) -> Documents:
        return with_incontext_examples(docs, seed)

    select.__name__ = f"icl_seed{seed}"
    return select


VARIANTS: Mapping[str, Variant] = {
    **{domain: where_domain(domain) for domain in DOMAINS},
    "unlabeled": where_domain(UNKNOWN),
    "all": every_document,
    **{f"icl_seed{seed}": _icl_variant(seed) for seed in ICL_SEEDS},
}
"""The selection of every task, by the name its `process_docs` carries (`docs_<name>`; `load_docs` is `all`)."""
