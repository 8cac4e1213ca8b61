"""A loaded split (`datasets.Dataset`) as the documents of one task variant of a benchmark core.

The release rows go through `core.documents` once per loaded split (its fingerprint), then through the variant's
pure function (`core.VARIANTS[name]`); image columns are read undecoded, so the documents keep each image cell as
`{"bytes": ..., "path": ...}` and decode only what a prompt shows. `extra` adds the same value to every document
(lm-eval: the task's prompt settings).

A keyed JSON release (`data.json`: one object, key -> a one-element list holding the record) is read from the file
itself (`keyed_rows`): a harness's table of such a file is one wide row whose columns unify the records' shapes, so
the glue is given the file (`release_file`) and ignores the loaded split; its rows are `{"id": key, **record}`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import datasets

from lmms_agentic.adapters.core.task import CoreTask

_DOCUMENTS: dict[tuple[str, str], list[dict[str, Any]]] = {}


def _undecoded(feature: Any) -> Any:
    if isinstance(feature, datasets.Image):
        return datasets.Image(decode=False)
    if isinstance(feature, (datasets.Sequence, getattr(datasets, "List", datasets.Sequence))):
        return type(feature)(_undecoded(feature.feature), length=feature.length)
    if isinstance(feature, list):
        return [_undecoded(item) for item in feature]
    if isinstance(feature, dict):
        return {key: _undecoded(value) for key, value in feature.items()}
    return feature


def release_rows(dataset: Any) -> list[dict[str, Any]]:
    """The split's rows as plain dicts, image cells undecoded (a list of dicts passes through)."""
    if isinstance(dataset, list):
        return [dict(row) for row in dataset]
    features = getattr(dataset, "features", None)
    if features is not None:
        dataset = dataset.cast(datasets.Features({k: _undecoded(v) for k, v in features.items()}))
    return [dict(row) for row in dataset.to_list()]


def keyed_rows(path: str) -> list[dict[str, Any]]:
    """The rows of a keyed JSON release (key -> a one-element list holding the record), in file order."""
    with open(path, encoding="utf-8") as handle:
        entries = json.load(handle)
    if not isinstance(entries, dict):
        raise ValueError(f"{path}: a keyed release is one JSON object (key -> [record])")
    rows = []
    for key, value in entries.items():
        record = value[0] if isinstance(value, list) and len(value) == 1 else None
        if not isinstance(record, dict):
            raise ValueError(f"{path}: entry {key!r} is not a one-element list holding a record")
        rows.append({"id": str(key), **record})
    return rows


def documents(core: CoreTask, dataset: Any) -> list[dict[str, Any]]:
    """`core.documents` of the split (computed once per loaded split; rows given as a list, every time)."""
    fingerprint = getattr(dataset, "_fingerprint", None)
    if not fingerprint:
        return core.documents(release_rows(dataset))
    key = (core.BENCHMARK, str(fingerprint))
    if key not in _DOCUMENTS:
        _DOCUMENTS[key] = core.documents(release_rows(dataset))
    return [dict(doc) for doc in _DOCUMENTS[key]]


def variant_docs(core: CoreTask, variant: str, dataset: Any,
                 extra: Callable[[dict[str, Any]], Mapping[str, Any]] | None = None) -> datasets.Dataset:
    """The documents of `variant` as a `datasets.Dataset` (`extra(doc)`: fields added to each document)."""
    if variant not in core.VARIANTS:
        raise KeyError(f"{core.BENCHMARK} has no variant {variant!r} (it has {', '.join(core.VARIANTS)})")
    docs = core.VARIANTS[variant](documents(core, dataset))
    if extra is not None:
        docs = [{**doc, **extra(doc)} for doc in docs]
    return datasets.Dataset.from_list(docs)
