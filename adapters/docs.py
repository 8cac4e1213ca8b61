"""Raw split -> canonical `datasets.Dataset`, shared by every MCQ benchmark's `process_docs`.

Text columns go through the benchmark's normaliser row by row (validation names the record and
field); the image column is counted from Arrow metadata and carried over untouched (and left encoded:
`Image(decode=False)`), so images are never decoded or re-encoded while loading, and decoded once per
question when a prompt is built. The result has the `McqDoc.to_row()` columns plus the
original image column, and is cached per (benchmark, location) for the life of the process, so the
several subtasks of a group load and validate the data once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import datasets
import pyarrow.compute as pc

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.data import DataLoadError, Location, load_split, locate
from lmms_agentic.adapters.schema import McqDoc, RecordError

Normaliser = Callable[[Mapping[str, Any], int], McqDoc]
_CACHE: dict[tuple[str, Location], tuple[datasets.Dataset, Location]] = {}


def canonicalise(raw: datasets.Dataset, normalise: Normaliser, benchmark: str, image_column: str,
                 where: str) -> datasets.Dataset:
    """Normalise every row of `raw`; ids must be unique. `where` describes the data for error messages."""
    if image_column in raw.column_names:
        counts = [n or 0 for n in pc.list_value_length(raw.data.column(image_column)).to_pylist()]
        text_columns = [c for c in raw.column_names if c != image_column]
    else:
        counts = [0] * len(raw)
        text_columns = raw.column_names
    docs = [normalise(row, n) for row, n in zip(raw.select_columns(text_columns).to_list(), counts, strict=True)]
    seen: set[str] = set()
    for doc in docs:
        if doc.id in seen:
            raise RecordError(benchmark, doc.id, "id", "occurs more than once")
        seen.add(doc.id)
    if not docs:
        raise DataLoadError(f"{where} holds no {benchmark} rows")
    canonical = datasets.Dataset.from_list([doc.to_row() for doc in docs])
    if image_column not in raw.column_names:
        return canonical
    # keep images encoded: rows then hand out {"bytes", "path"} cells and the tasks decode each question's images
    # once (adapters.media.decoded_once), instead of datasets decoding them on every row access
    images = raw.select_columns([image_column])
    feature = images.features[image_column]
    if isinstance(feature, datasets.Sequence | datasets.List) and isinstance(feature.feature, datasets.Image):
        info = images.info.copy()  # same Arrow storage, only the feature's decode flag changes: zero copy
        info.features = datasets.Features({image_column: datasets.List(datasets.Image(decode=False))})
        images = datasets.Dataset(images.data, info=info)
    return datasets.concatenate_datasets([canonical, images], axis=1)


def load_canonical(benchmark: str, normalise: Normaliser, image_column: str = "images",
                   check: Callable[[datasets.Dataset, Location], None] | None = None,
                   ) -> tuple[datasets.Dataset, Location]:
    """Locate, load, check and normalise a benchmark (by name, as its `benchmark.json` declares it) once per
    process and location."""
    source = benchmarks.get(benchmark).source
    key = (source.benchmark, locate(source))
    if key not in _CACHE:
        raw, location = load_split(source)
        if check is not None:
            check(raw, location)
        _CACHE[key] = canonicalise(raw, normalise, source.benchmark, image_column, location.describe()), location
    return _CACHE[key]


def select_where(docs: datasets.Dataset, column: str, value: Any) -> datasets.Dataset:
    """The rows whose `column` equals `value` (a benchmark's domain or kind subtask), without copying media."""
    return docs.select([i for i, cell in enumerate(docs[column]) if cell == value])
