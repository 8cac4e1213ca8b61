"""Strict JSON-object parser for rubric judges (several named score dimensions in one JSON reply).

Owns: finding exactly one top-level object in a reply, validating its keys and value ranges, and
turning numeric fields into named ``dimensions``.  Built for Agent-X-style judges
(``{"Score": 0.75, "Justification": "..."}``) and multi-dimension rubrics
(``{"grounding": 0.5, "tool_choice": 1, "justification": "..."}``).

Rules: the reply (after ``clean_reply``) may wrap the object in a ```json fence and surrounding prose, but
exactly one top-level ``{...}`` must decode (``json.loads``; with ``python_literals=True`` also
``ast.literal_eval``, which only builds literals and never evaluates code), else parse failure.  Every
required key must be present; numbers must be finite and within their declared range (booleans are not
numbers; numeric strings such as "0.75" only with ``numeric_strings=True``).  ``score`` names the key
that gives ``Parsed.score``; without it the score is the mean of the numeric dimensions.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lmms_agentic.adapters.text import brace_spans

from .parsers import Parsed, clean_reply

__all__ = ["Choice", "JsonObjectParser", "Number", "Text", "find_objects"]

_NUM_STR = re.compile(r"\s*[+-]?(?:\d+(?:\.\d+)?|\.\d+)\s*")
_MAX_OBJECT_CHARS = 200_000


@dataclass(frozen=True)
class Number:
    """A numeric field in [low, high]; ``integer`` rejects fractions.  Becomes a named dimension."""

    low: float = 0.0
    high: float = 1.0
    integer: bool = False

    @property
    def spec(self) -> str:
        return f"num[{self.low},{self.high}{',int' if self.integer else ''}]"


@dataclass(frozen=True)
class Text:
    """A string field (e.g. a justification); ``nonempty`` rejects blank strings."""

    nonempty: bool = False

    @property
    def spec(self) -> str:
        return "text+" if self.nonempty else "text"


@dataclass(frozen=True)
class Choice:
    """A string field that must equal one of ``values`` (case-insensitive); the value is kept as listed."""

    values: tuple[str, ...]

    @property
    def spec(self) -> str:
        return "choice[" + "|".join(self.values) + "]"


FieldSpec = Number | Text | Choice


def find_objects(text: str, python_literals: bool = False) -> list[dict[str, Any]]:
    """Every top-level ``{...}`` in ``text`` that decodes to a dict (JSON; optionally a Python literal)."""
    found: list[dict[str, Any]] = []
    for start, end in brace_spans(text, top_level=True, quote_ends_at_newline=False):
        chunk = text[start:end]
        if len(chunk) > _MAX_OBJECT_CHARS:
            continue
        value: Any = None
        try:
            value = json.loads(chunk)
        except ValueError:
            if python_literals:
                try:
                    value = ast.literal_eval(chunk)
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    value = None
        if isinstance(value, dict):
            found.append(value)
    return found


@dataclass(frozen=True)
class JsonObjectParser:
    """Parse a reply holding exactly one JSON object with ``required`` (and ``optional``) typed keys."""

    required: Mapping[str, FieldSpec]
    optional: Mapping[str, FieldSpec] = field(default_factory=dict)
    score: str | None = None
    numeric_strings: bool = False
    python_literals: bool = False

    def __post_init__(self) -> None:
        if not self.required:
            raise ValueError("a JSON parser needs at least one required key")
        overlap = set(self.required) & set(self.optional)
        if overlap:
            raise ValueError(f"keys both required and optional: {sorted(overlap)}")
        specs = {**self.required, **self.optional}
        if self.score is not None and not isinstance(self.required.get(self.score), Number):
            raise ValueError(f"score key {self.score!r} must be a required Number field")
        for spec in specs.values():
            if isinstance(spec, Number) and not spec.low <= spec.high:
                raise ValueError(f"empty range in {spec}")

    @property
    def spec(self) -> str:
        req = ",".join(f"{k}:{v.spec}" for k, v in sorted(self.required.items()))
        opt = ",".join(f"{k}:{v.spec}" for k, v in sorted(self.optional.items()))
        flags = f"numstr={int(self.numeric_strings)},pylit={int(self.python_literals)}"
        return f"json{{{req}}}opt{{{opt}}}score={self.score}:{flags}"

    def _number(self, key: str, value: Any, spec: Number) -> float | str:
        if isinstance(value, str) and self.numeric_strings and _NUM_STR.fullmatch(value):
            value = float(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{key!r} is not a number: {str(value)[:40]!r}"
        number = float(value)
        if not math.isfinite(number) or not spec.low <= number <= spec.high:
            return f"{key!r}={number} outside [{spec.low}, {spec.high}]"
        if spec.integer and not number.is_integer():
            return f"{key!r}={number} is not an integer"
        return number

    def __call__(self, reply: str) -> Parsed:
        objects = find_objects(clean_reply(reply), self.python_literals)
        if len(objects) != 1:
            return Parsed(error="no JSON object" if not objects else f"{len(objects)} JSON objects (need exactly 1)")
        obj = objects[0]
        missing = [k for k in self.required if k not in obj]
        if missing:
            return Parsed(error=f"missing keys {missing}")
        dimensions: dict[str, float] = {}
        fields: dict[str, Any] = {}
        specs = {**self.required, **self.optional}
        for key, value in obj.items():
            spec = specs.get(key)
            if isinstance(spec, Number):
                number = self._number(key, value, spec)
                if isinstance(number, str):
                    return Parsed(error=number)
                dimensions[key] = number
            elif isinstance(spec, Text):
                if not isinstance(value, str) or (spec.nonempty and not value.strip()):
                    return Parsed(error=f"{key!r} must be a {'non-empty ' if spec.nonempty else ''}string")
                fields[key] = value
            elif isinstance(spec, Choice):
                match = [v for v in spec.values if isinstance(value, str) and v.casefold() == value.strip().casefold()]
                if not match:
                    return Parsed(error=f"{key!r}={str(value)[:40]!r} not among {list(spec.values)}")
                fields[key] = match[0]
            else:
                fields[key] = value  # undeclared keys are kept for the audit trail
        if self.score is not None:
            score: float | None = dimensions[self.score]
        else:
            score = sum(dimensions.values()) / len(dimensions) if dimensions else None
        return Parsed(score=score, dimensions=dimensions, fields=fields)
