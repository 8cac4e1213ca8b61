"""The canonical multiple-choice document every benchmark is normalised into, and `RecordError`.

Each benchmark's reader (`tasks/<benchmark>/core/records.py`) turns release rows into `McqDoc`;
prompts, extraction and scoring only ever see `McqDoc`. A document travels through
`datasets.Dataset` as a flat row (`to_row` / `from_row`): plain columns plus a JSON string for the
free-form metadata, and the image column left exactly as the source stored it (never re-encoded).

Conventions: `options` are in display order and letters are positional (index 0 -> "A"); an empty
string marks an option slot that the source left empty (its letter keeps its position but is not
shown). `gold_index` indexes `options`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MIN_OPTIONS = 2
MAX_OPTIONS = 10
LETTERS = "ABCDEFGHIJ"


class RecordError(ValueError):
    """A raw record cannot be normalised. The message names the benchmark, record id and field."""

    def __init__(self, benchmark: str, record_id: str, field_name: str, problem: str) -> None:
        self.benchmark = benchmark
        self.record_id = record_id
        self.field_name = field_name
        self.problem = problem
        super().__init__(f"{benchmark} record {record_id!r}, field {field_name!r}: {problem}")


@dataclass(frozen=True)
class Visuals:
    """What the model is shown: how many images the row carries (kept by the row, not here) and/or a video path."""

    n_images: int = 0
    video: str | None = None


@dataclass(frozen=True)
class McqDoc:
    """One multiple-choice question in canonical form."""

    id: str
    benchmark: str
    domain: str
    source: str
    question: str
    options: tuple[str, ...]
    gold_index: int
    visuals: Visuals = Visuals()
    context: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        def fail(field_name: str, problem: str) -> RecordError:
            return RecordError(self.benchmark, self.id, field_name, problem)

        if not self.id:
            raise fail("id", "is empty")
        if not self.question.strip():
            raise fail("question", "is empty")
        if not MIN_OPTIONS <= len(self.options) <= MAX_OPTIONS:
            raise fail("options", f"has {len(self.options)} entries; {MIN_OPTIONS}-{MAX_OPTIONS} are supported")
        if not any(self.options):
            raise fail("options", "are all empty")
        if not 0 <= self.gold_index < len(self.options):
            raise fail("gold_index", f"{self.gold_index} is outside the {len(self.options)} options")
        if not self.options[self.gold_index]:
            raise fail("gold_index", f"points at the empty option {LETTERS[self.gold_index]}")

    @property
    def letters(self) -> str:
        return LETTERS[: len(self.options)]

    @property
    def gold_letter(self) -> str:
        return LETTERS[self.gold_index]

    def shown_options(self) -> list[tuple[str, str]]:
        """(letter, text) for every non-empty option, letters keeping their original positions."""
        return [(LETTERS[i], text) for i, text in enumerate(self.options) if text]

    def to_row(self) -> dict[str, Any]:
        """Flat, Arrow-friendly columns (the image column is added by the loader, untouched)."""
        return {
            "id": self.id,
            "benchmark": self.benchmark,
            "domain": self.domain,
            "source": self.source,
            "question": self.question,
            "options": list(self.options),
            "gold_index": self.gold_index,
            "answer": self.gold_letter,
            "n_images": self.visuals.n_images,
            "video": self.visuals.video or "",
            "context": self.context,
            "metadata_json": json.dumps(dict(self.metadata), sort_keys=True, ensure_ascii=False),
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> McqDoc:
        return cls(
            id=str(row["id"]),
            benchmark=str(row["benchmark"]),
            domain=str(row["domain"]),
            source=str(row["source"]),
            question=str(row["question"]),
            options=tuple(str(o) for o in row["options"]),
            gold_index=int(row["gold_index"]),
            visuals=Visuals(
                n_images=int(row.get("n_images", 0)),
                video=str(row["video"]) if row.get("video") else None,
            ),
            context=str(row.get("context", "")),
            metadata=json.loads(row.get("metadata_json") or "{}"),
        )


def require(row: Mapping[str, Any], key: str, kind: type | tuple[type, ...], *, benchmark: str,
            record_id: str) -> Any:
    """`row[key]` checked against `kind`, or a `RecordError` naming the record and the field."""
    if key not in row:
        raise RecordError(benchmark, record_id, key, "is missing")
    value = row[key]
    if not isinstance(value, kind):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise RecordError(benchmark, record_id, key, f"expected {expected}, got {type(value).__name__}")
    return value


def require_str_list(row: Mapping[str, Any], key: str, *, benchmark: str, record_id: str) -> list[str]:
    """A list of strings (None entries become empty strings), or a `RecordError`."""
    value = require(row, key, (list, tuple), benchmark=benchmark, record_id=record_id)
    items: Sequence[Any] = value
    out: list[str] = []
    for position, item in enumerate(items):
        if item is None:
            out.append("")
        elif isinstance(item, str):
            out.append(item)
        else:
            raise RecordError(benchmark, record_id, f"{key}[{position}]",
                              f"expected a string, got {type(item).__name__}")
    return out
