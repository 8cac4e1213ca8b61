"""AgentVQA's documents: release rows -> canonical documents, the image size of coordinate items, and the variants
(one domain, in one coordinate convention, with or without the action history) each task evaluates.

`documents(rows)` reads release rows (the release's column names, `records.FIELD_MAP`) through `records.normalise`
into `McqDoc.to_row()` dicts; the image cells are carried untouched under `images`. A coordinate item whose record
gives no image size gets its first image's size (`with_image_size`), so the prompt and the scorer render the same
options: read here from the image's header when the cell holds the image itself (a Pillow image, its bytes, or a
`{"bytes": ...}` cell; nothing is decoded), never from a file (a cell that only names a path is left for the caller,
who knows where the data lives, to size with `with_image_size`).

`VARIANTS[name]` selects one domain's documents and writes the variant's settings into each (`coord_convention`,
`with_history`), so prompts read them from the document and every record logs them. Names: `<domain>` (absolute
pixels, history shown), `<domain>_norm1000_xy` / `<domain>_norm1000_yx` (0-1000 normalised coordinates) and
`web_agents_nohistory` (the history ablation, paper Fig. 5).
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from PIL import Image

from lmms_agentic.adapters.core.task import Variant
from lmms_agentic.tasks.agentvqa.core.records import DOMAINS, FIELD_MAP, normalise

IMAGES = "images"
DEFAULT_CONVENTION = "pixel_xy"
NORMALISED_CONVENTIONS = ("norm1000_xy", "norm1000_yx")


def needs_image_size(doc: Mapping[str, Any]) -> bool:
    """A coordinate item whose record gives no image size (its options render against its first image's size)."""
    meta = json.loads(doc["metadata_json"])
    return bool(meta.get("option_coordinates")) and not (meta.get("image_width") and meta.get("image_height"))


def with_image_size(doc: dict[str, Any], size: tuple[int, int]) -> dict[str, Any]:
    """`doc` with `size` (width, height) recorded as its image size when it needs one (see `needs_image_size`)."""
    if not needs_image_size(doc):
        return doc
    meta = json.loads(doc["metadata_json"])
    meta["image_width"], meta["image_height"] = size
    return {**doc, "metadata_json": json.dumps(meta, sort_keys=True, ensure_ascii=False)}


def header_size(cell: Any) -> tuple[int, int] | None:
    """The (width, height) of an image cell that holds the image itself, read from its header; None for a cell
    that only names a file."""
    if isinstance(cell, Image.Image):
        return cell.size
    data = cell.get("bytes") if isinstance(cell, Mapping) else cell
    if not isinstance(data, bytes | bytearray) or not data:
        return None
    with Image.open(io.BytesIO(data)) as image:
        width, height = image.size
    return width, height


def documents(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Release rows -> canonical documents (see the module docstring); a row that is not a valid record raises the
    `RecordError` naming it."""
    out = []
    for row in rows:
        canonical = {field: row[column] for field, column in FIELD_MAP.items() if column in row}
        cells = list(canonical.get(IMAGES) or [])
        doc = {**normalise(canonical, len(cells)).to_row(), IMAGES: cells}
        size = header_size(cells[0]) if cells and needs_image_size(doc) else None
        out.append(with_image_size(doc, size) if size is not None else doc)
    return out


def select(docs: list[dict[str, Any]], domain: str, convention: str, history: bool) -> list[dict[str, Any]]:
    """One domain's documents, each with the variant's settings."""
    return [{**doc, "coord_convention": convention, "with_history": history} for doc in docs
            if doc["domain"] == domain]


def _variants() -> dict[str, Variant]:
    table: dict[str, Variant] = {}
    for domain in DOMAINS:
        table[domain] = partial(select, domain=domain, convention=DEFAULT_CONVENTION, history=True)
        for convention in NORMALISED_CONVENTIONS:
            table[f"{domain}_{convention}"] = partial(select, domain=domain, convention=convention, history=True)
    table["web_agents_nohistory"] = partial(select, domain="web_agents", convention=DEFAULT_CONVENTION,
                                            history=False)
    return table


VARIANTS: Mapping[str, Variant] = _variants()
"""Every task's document selection, by name (see the module docstring)."""
