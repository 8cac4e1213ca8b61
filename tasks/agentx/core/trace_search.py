"""Agent-X trace search: where in one model reply the trace object is, found safely and in bounded time.

Owns the candidate texts, the two parsers and their budgets, and the brace scan; `find_trace_object` returns the
first candidate that parses to a dict (and its parse path).  Reading the object is `core/trace.py`.  Pure standard
library.

SAFETY.  Model output is never executed.  The only parsers are ``json.loads`` and ``ast.literal_eval`` (literals
only: a call, a name or an attribute is rejected, so ``__import__('os').system(...)`` is a ValueError, not a run);
any exception from either means "does not parse".  Parsed values are made JSON-able (tuples/sets -> lists,
bytes/complex/... -> str); a parsed object nested deeper than ``MAX_DEPTH`` is rejected.

COST.  Every step is linear in the reply and bounded, whatever the reply (whitespace runs, ``"{" * 100000``, deep
nesting, megabytes of prose).  No regular expression can backtrack over a run: none puts a whitespace repeat before
a separator or an anchor, and a closing fence is stripped with ``str.rstrip``.  ``json.loads`` reads at most
``JSON_BUDGET_FACTOR`` times the reply plus ``JSON_BUDGET_MIN`` characters in total; ``ast.literal_eval`` (about a
microsecond per character) only reads candidates of at most ``MAX_LITERAL_CHARS``, ``LITERAL_BUDGET`` characters in
total.  At most the last ``MAX_FENCED_BLOCKS`` fenced blocks are tried.  The brace scan of the balanced fallback
jumps between braces and quotes with regular expressions, takes a run of braces as one token, reads at most
``MAX_SCAN_TOKENS`` tokens and yields at most ``MAX_BALANCED_ATTEMPTS`` spans (a span without a trace key is never
parsed); only the first ``MAX_KEY_POSITIONS`` trace-key occurrences are located.  A reply beyond these bounds is
read as far as they allow; only adversarial replies reach them (a 1,024-token reply is far below every bound).

SEARCH ORDER (the first candidate that parses to a dict wins; the text is the reply after ``<think>`` handling):
  1. candidates, each tried with json.loads then ast.literal_eval (parse_path "json" / "literal"; literal_eval only
     for a candidate starting with "{"): the whole text; the text without an outer code fence when it starts with
     one (tag optional: ```json, ```python, ```); the contents of the fenced blocks anywhere in the text, last block
     first.  The first two may be any dict (they are the whole response); a fenced block counts only with a
     top-level trace key (``TRACE_KEYS``).
  2. brace-balanced ``{...}`` spans of the text (string-aware, ' and " quotes, a quote never spans a newline: the
     spans of ``adapters.core.text.brace_spans``, found by the bounded scan above), the span that ends LAST first (an
     outer object before its inner ones); only spans that parse to a dict with a top-level trace key
     (reasoning_steps / final_answer / final_output) count, so a truncated trace does not degrade into one of its
     step dicts.  parse_path "balanced_json" / "balanced_literal".
  Nothing parses -> None.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import json
import math
import re
from collections import deque
from collections.abc import Sequence
from typing import Any

TRACE_KEYS = ("reasoning_steps", "final_answer", "final_output")
MAX_DEPTH = 64
MAX_LITERAL_CHARS = 32_768
LITERAL_BUDGET = 65_536
JSON_BUDGET_FACTOR = 4
JSON_BUDGET_MIN = 65_536
MAX_FENCED_BLOCKS = 16
MAX_BALANCED_ATTEMPTS = 64
MAX_SCAN_TOKENS = 10_000
MAX_KEY_POSITIONS = 4_096
_OUTER_FENCE_OPEN = re.compile(r"```[\w+-]*")
_FENCED = re.compile(r"```[\w+-]*+[ \t]*+\r?\n((?:[^`]++|`(?!``))*+)```")
_TRACE_KEY_PATTERNS = tuple(re.compile(re.escape(key)) for key in TRACE_KEYS)
# Possessive repeats (Python 3.11+) never give back what they consumed, and both are only used with .match at a
# position the caller chooses, so no character is read twice whatever follows.
_TOP_LEVEL = re.compile(r"""[^{]*+(?:\{[^{}"']*+\}[^{]*+)*+""")
_IN_BRACES = re.compile(r"""[^{}"']*+(\{++|\}++|"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+["\n]?"""
                        r"""|'[^'\\\n]*+(?:\\.[^'\\\n]*+)*+['\n]?)""", re.DOTALL)


def _plain(value: object, depth: int = 0) -> Any:
    """A JSON-able copy of a parsed value; raises ValueError past MAX_DEPTH."""
    if depth > MAX_DEPTH:
        raise ValueError("nested too deeply")
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {key if isinstance(key, str) else str(key): _plain(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item, depth + 1) for item in value]
    if isinstance(value, (set, frozenset)):
        return [_plain(item, depth + 1) for item in sorted(value, key=repr)]
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


# ---------------------------------------------------------------- parsing
class _Budget:
    """What is left of the characters the parsers may still read for one reply (see COST)."""

    def __init__(self, reply_chars: int) -> None:
        self.json = JSON_BUDGET_FACTOR * reply_chars + JSON_BUDGET_MIN
        self.literal = LITERAL_BUDGET

    def parse(self, text: str) -> tuple[dict[str, Any], str] | None:
        """(object, "json" | "literal") when ``text`` is a dict literal, else None (also when over budget)."""
        for name in ("json", "literal"):
            if name == "json":
                if len(text) > self.json:
                    continue
                self.json -= len(text)
            else:
                if len(text) > MAX_LITERAL_CHARS or len(text) > self.literal or not text.startswith("{"):
                    continue
                self.literal -= len(text)
            try:
                value = json.loads(text) if name == "json" else ast.literal_eval(text)
                if isinstance(value, dict):
                    return _plain(value), name
            except Exception:  # any parser error (incl. RecursionError, MemoryError) means "does not parse"
                continue
        return None


def _strip_outer_fence(text: str) -> str:
    """``text`` (which starts with a fence) without the opening fence and its tag, and a closing fence at the end."""
    opening = _OUTER_FENCE_OPEN.match(text)
    body = text[opening.end() if opening else 0:].rstrip()
    if body.endswith("```"):
        body = body[:-3]
    return body.strip()


def _candidates(text: str) -> dict[str, bool]:
    """Candidate texts in order -> whether the object must carry a trace key (only the whole response need not)."""
    out = {text: False}
    if text.startswith("```"):
        out.setdefault(_strip_outer_fence(text), False)
    for block in reversed(_FENCED.findall(text)[-MAX_FENCED_BLOCKS:]):
        out.setdefault(block.strip(), True)
    return out


def _has_trace_key(found: tuple[dict[str, Any], str] | None) -> bool:
    return found is not None and any(key in found[0] for key in TRACE_KEYS)


def _key_spans(text: str, keys: Sequence[int]) -> list[tuple[int, int]]:
    """The balanced ``{...}`` spans of ``text`` that contain one of the sorted positions ``keys``, the span that closes
    last first, at most ``MAX_BALANCED_ATTEMPTS`` of them.  The spans are those of ``adapters.core.text.brace_spans``
    (quotes tracked only inside braces, a quote ends at its closing quote or a newline, backslash escapes).  Outside
    braces one match skips prose and flat ``{...}`` pairs (no brace or quote inside); inside braces one match skips
    to and takes the next run of braces or the next whole quoted string.  Each match is a token; at most
    ``MAX_SCAN_TOKENS`` are read."""
    found: deque[tuple[int, int]] = deque(maxlen=MAX_BALANCED_ATTEMPTS)
    stack: list[list[int]] = []  # runs of unclosed "{": [position of the first, how many are still open]
    position, length = 0, len(text)
    for _ in range(MAX_SCAN_TOKENS):
        if not stack:  # outside braces: quotes do not count
            skipped = _TOP_LEVEL.match(text, position)
            end = skipped.end() if skipped else position
            _flat_pairs(text, position, end, keys, found)
            position = end
            if position >= length:
                break
        token = _IN_BRACES.match(text, position)
        if token is None:
            break  # the text ends inside braces
        start, position = token.span(1)
        char = text[start]
        if char == "{":
            stack.append([start, position - start])
        elif char == "}":
            _close(stack, start, position - start, keys, found)
    return list(reversed(found))


def _flat_pairs(text: str, start: int, end: int, keys: Sequence[int], found: deque[tuple[int, int]]) -> None:
    """Keep the flat ``{...}`` pairs of ``text[start:end]`` (prose and flat pairs only) that contain a key.  Every
    "{" there opens a flat pair that closes at the next "}"; each character is looked at a bounded number of times."""
    previous, pair = start, (-1, -1)
    for index in range(bisect.bisect_left(keys, start), bisect.bisect_left(keys, end)):
        key = keys[index]
        opened = text.rfind("{", previous, key)
        if opened >= 0:  # the pair (if any) opened after the previous key
            pair = (opened, text.find("}", opened, end) + 1)
        if pair[0] <= key < pair[1] and (not found or found[-1] != pair):
            found.append(pair)
        previous = key


def _close(stack: list[list[int]], closing: int, count: int, keys: Sequence[int],
           found: deque[tuple[int, int]]) -> None:
    """Close ``count`` braces at ``closing``..: pop them from ``stack`` (innermost first) and keep the spans that
    contain a key (only the last ``MAX_BALANCED_ATTEMPTS`` of a run can matter); unmatched "}" are ignored."""
    while count and stack:
        run = stack[-1]
        taken = min(count, run[1])
        innermost = run[0] + run[1] - 1  # opened last, closed first
        for i in range(max(0, taken - MAX_BALANCED_ATTEMPTS), taken):
            opened, closed = innermost - i, closing + i + 1
            first_key = bisect.bisect_left(keys, opened)
            if first_key < len(keys) and keys[first_key] < closed:
                found.append((opened, closed))
        run[1] -= taken
        closing += taken
        count -= taken
        if not run[1]:
            stack.pop()


def find_trace_object(text: str) -> tuple[dict[str, Any], str] | None:
    """(the trace object, its parse path) of a reply text, in the module docstring's search order; None when
    nothing parses."""
    budget = _Budget(len(text))
    for candidate, need_key in _candidates(text).items():
        found = budget.parse(candidate) if candidate else None
        if found is not None and (not need_key or _has_trace_key(found)):
            return found
    keys = sorted(match.start() for pattern in _TRACE_KEY_PATTERNS
                  for match in itertools.islice(pattern.finditer(text), MAX_KEY_POSITIONS))[:MAX_KEY_POSITIONS]
    if not keys:
        return None
    for start, end in _key_spans(text, keys):
        found = budget.parse(text[start:end])
        if found is not None and _has_trace_key(found):
            return found[0], "balanced_" + found[1]
    return None
