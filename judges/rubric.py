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

Bounds (rules, so that any reply costs a few ms whatever its size; a judge's verdict object is a few hundred
characters and no real reply comes near them; measured in perf/parsers.py):
  MAX_SPANS = 64             a reply with more top-level ``{...}`` spans is a parse failure ("more than 64 {...}
                             spans"), without decoding them;
  MAX_SCAN_TOKENS = 10_000   the object search reads the reply as runs of "{", runs of "}" and quoted strings inside
                             braces; a reply that needs more of them is a parse failure ("too many braces and
                             quotes"), e.g. 1 MB of "{}{}{}..." inside one unclosed "{";
  MAX_OBJECT_CHARS = 200_000 a longer span is not decoded (as before);
  MAX_LITERAL_CHARS = 20_000 ``ast.literal_eval`` (``python_literals=True``) is tried only on spans up to this size
                             (parsing Python is ~100x slower than JSON), and only on spans that can be a dict
                             literal (they hold a ":", or nothing but blanks, comments and line continuations).
Deeply nested JSON (RecursionError in ``json.loads``) counts as undecodable, like every other decoding error.
Ambiguous (``Parsed.ambiguous``, the client's unscored reason ``ambiguous``): an object that names one key twice with
different values (``{"Score": 0.1, "Score": 0.9}``: ``json.loads`` would keep the last, a reader the first), and a
reply with several top-level objects that differ (``{"Score": 0.2} {"Score": 0.9}``).
``find_objects`` (a public helper) keeps no bounds but the span size unless it is given them.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .parsers import Parsed, ambiguous, clean_reply

__all__ = [
    "MAX_LITERAL_CHARS",
    "MAX_OBJECT_CHARS",
    "MAX_SCAN_TOKENS",
    "MAX_SPANS",
    "AmbiguousObject",
    "Choice",
    "JsonObjectParser",
    "Number",
    "Text",
    "find_objects",
]

_NUM_STR = re.compile(r"\s*[+-]?(?:\d+(?:\.\d+)?|\.\d+)\s*")
MAX_SPANS = 64
MAX_SCAN_TOKENS = 10_000
MAX_OBJECT_CHARS = 200_000
MAX_LITERAL_CHARS = 20_000
_MAX_OBJECT_CHARS = MAX_OBJECT_CHARS  # (the name this module used before)


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


class _TooComplex(Exception):
    """The reply needs more than MAX_SPANS spans or MAX_SCAN_TOKENS tokens."""


# Inside braces: the next brace or quote (everything else is skipped in C), and the end of a quoted string
# (a backslash escapes the next character; a quote may span lines, as in adapters.core.text.brace_spans(...,
# quote_ends_at_newline=False), which this scanner reproduces for top-level spans).
_STRUCTURE = re.compile(r"[{}\"']")
_OPEN_RUN = re.compile(r"\{+")
_CLOSE_RUN = re.compile(r"\}+")
_QUOTED = {  # (the body is atomic: without its closing quote it must fail at once, not give back 1 MB step by step)
    q: re.compile(rf"(?=(?P<body>[^{q}\\]*(?:\\.[^{q}\\]*)*))(?P=body){q}", re.DOTALL) for q in "\"'"
}


def _top_level_spans(text: str, max_spans: int | None, max_tokens: int | None) -> list[tuple[int, int]]:
    """(start, end) of every top-level brace-balanced ``{...}`` span, as
    ``adapters.core.text.brace_spans(text, top_level=True, quote_ends_at_newline=False)`` finds them, reading runs of
    braces and whole quoted strings at a time (raises _TooComplex past the bounds)."""
    spans: list[tuple[int, int]] = []
    tokens = 0
    pos = text.find("{")
    while pos >= 0:
        start, depth = pos, 0
        while True:
            m = _STRUCTURE.search(text, pos) if depth else _OPEN_RUN.match(text, pos)
            if m is None:
                return spans  # the span never closes: nothing after its "{" is at the top level
            tokens += 1
            if max_tokens is not None and tokens > max_tokens:
                raise _TooComplex(f"too many braces and quotes (more than {max_tokens})")
            char = text[m.start()]
            if char == "{":
                run = _OPEN_RUN.match(text, m.start())
                assert run is not None
                depth += run.end() - run.start()
                pos = run.end()
            elif char == "}":
                run = _CLOSE_RUN.match(text, m.start())
                assert run is not None
                if run.end() - run.start() >= depth:
                    end = run.start() + depth
                    break
                depth -= run.end() - run.start()
                pos = run.end()
            else:
                quoted = _QUOTED[char].match(text, m.end())
                if quoted is None:
                    return spans  # an unterminated quote runs to the end of the text
                pos = quoted.end()
        spans.append((start, end))
        if max_spans is not None and len(spans) > max_spans:
            raise _TooComplex(f"more than {max_spans} {{...}} spans")
        pos = text.find("{", end)
    return spans


_DICT_LITERAL_FILLER = re.compile(r"[\s\\]*")


def _may_be_dict_literal(chunk: str) -> bool:
    """Can ``ast.literal_eval(chunk)`` give a dict?  Only a dict display does: "{k: v, ...}" holds a ":", and "{}"
    holds nothing but blanks, comments and line continuations."""
    return ":" in chunk or "#" in chunk or _DICT_LITERAL_FILLER.fullmatch(chunk, 1, len(chunk) - 1) is not None


class AmbiguousObject(ValueError):
    """A decoded object names the same key twice with different values."""


def _unique_pairs(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    found: dict[Any, Any] = {}
    for key, value in pairs:
        if key in found and found[key] != value:
            raise AmbiguousObject(f"key {str(key)[:40]!r} given twice with different values")
        found[key] = value
    return found


def _literal(chunk: str) -> Any:
    """``ast.literal_eval`` of ``chunk``, refusing dict displays that repeat a key with different values."""
    tree = ast.parse(chunk.strip(), mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            _unique_pairs([(ast.literal_eval(k), ast.dump(v)) for k, v in zip(node.keys, node.values, strict=True)
                           if k is not None])
    return ast.literal_eval(tree.body)


def _decode(chunk: str, python_literals: bool, max_literal_chars: int | None) -> Any:
    try:
        return json.loads(chunk, object_pairs_hook=_unique_pairs)
    except AmbiguousObject:
        raise
    except (ValueError, RecursionError, MemoryError):
        pass
    if not python_literals or (max_literal_chars is not None and len(chunk) > max_literal_chars):
        return None
    if not _may_be_dict_literal(chunk):
        return None
    try:
        return _literal(chunk)
    except AmbiguousObject:
        raise
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def find_objects(
    text: str,
    python_literals: bool = False,
    *,
    max_spans: int | None = None,
    max_tokens: int | None = None,
    max_literal_chars: int | None = None,
) -> list[dict[str, Any]]:
    """Every top-level ``{...}`` in ``text`` that decodes to a dict (JSON; optionally a Python literal).  Spans over
    MAX_OBJECT_CHARS are not decoded; the keyword bounds (see the module docstring) raise ValueError when passed;
    an object repeating a key with different values raises ``AmbiguousObject``."""
    try:
        spans = _top_level_spans(text, max_spans, max_tokens)
    except _TooComplex as exc:
        raise ValueError(str(exc)) from None
    found: list[dict[str, Any]] = []
    for start, end in spans:
        if end - start > MAX_OBJECT_CHARS:
            continue
        value = _decode(text[start:end], python_literals, max_literal_chars)
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
        try:
            objects = find_objects(
                clean_reply(reply), self.python_literals,
                max_spans=MAX_SPANS, max_tokens=MAX_SCAN_TOKENS, max_literal_chars=MAX_LITERAL_CHARS,
            )
        except AmbiguousObject as exc:
            return ambiguous(str(exc))
        except ValueError as exc:
            return Parsed(error=str(exc))
        if len(objects) > 1 and any(o != objects[0] for o in objects[1:]):
            return ambiguous(f"{len(objects)} different JSON objects (need exactly 1)")
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
