"""Agent-X tool-use trace parsing: one model response -> steps, final answer, parse path, failure class.  The tool
names and legacy aliases are arguments (``protocol.TOOL_NAMES`` and ``protocol.LEGACY_ALIASES``).  Pure standard
library; nothing here depends on lmms-eval.

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
parsed); only the first ``MAX_KEY_POSITIONS`` trace-key occurrences are located.  Of a step's tool field the
first ``MAX_TOOL_CHARS`` characters are read, split into at most ``MAX_TOOL_PARTS`` names.  A reply beyond these
bounds is read as far as they allow; only adversarial replies reach them (a 1,024-token reply is far below every
bound).

PARSE ORDER (the first candidate that parses to a dict wins):
  0. no output: not a str, empty/whitespace, or lmms-eval's "[LMMS_EVAL_REQUEST_FAILED" text -> failure no_output.
  1. ``<think>``: keep the text after the first ``</think>``; if nothing follows, the text before it; stray markers
     are removed.  Then strip whitespace.
  2. candidates, each tried with json.loads then ast.literal_eval (parse_path "json" / "literal"; literal_eval only
     for a candidate starting with "{"): the whole text; the text without an outer code fence when it starts with
     one (tag optional: ```json, ```python, ```); the contents of the fenced blocks anywhere in the text, last block
     first.  The first two may be any dict (they are the whole response); a fenced block counts only with a
     top-level trace key (see 3).
  3. brace-balanced ``{...}`` spans of the text (string-aware, ' and " quotes, a quote never spans a newline: the
     spans of ``adapters.core.text.brace_spans``, found by the bounded scan above), the span that ends LAST first (an
     outer object before its inner ones); only spans that parse to a dict with a top-level trace key
     (reasoning_steps / final_answer / final_output) count, so a truncated trace does not degrade into one of its
     step dicts.  parse_path "balanced_json" / "balanced_literal".
  Nothing parses -> failure invalid_json, parse_path "none".

READING THE OBJECT.  steps: ``reasoning_steps`` as a list (unwrapped once when every item is a list, i.e. [[...]]),
a single step dict, or a dict of step dicts; anything else gives no steps.  A step's tool = ``tool_used`` if
non-blank, else ``tool`` (``tool_key`` says which); output = ``tool_output`` else ``output``; a step that is not a
dict keeps its text as ``task``.  Final answer: ``final_answer`` as {"value", "justification"} (``answer`` is
accepted for a missing ``value``) or a bare value, with a top-level ``justification`` beside it; without
``final_answer``, the format block's ``final_output`` {"final_answer", "justification"}.  Non-string values are
written as JSON text (``True`` -> "true").

FAILURES, in priority order (``failure`` is the first that applies; ``issues`` lists all, same order):
  no_output, invalid_json        nothing to read (``issues`` then holds only that one); ``PARSE_FAILURES``
  multiple_tools_in_step         a step names 2+ different known tools: a list, or a string split at , ; / & + |
                                 "and" "or" "then" whose parts resolve to different tools ("OCR, Calculator")
  unknown_tool                   a step tool that resolves to no tool (blank, "none", "null", "n/a", "no tool" are
                                 no tool at all, not an unknown one)
  missing_final_answer           no final-answer value (a generative task may legitimately have none: the caller
                                 decides what that means)
``format_ok`` is the taxonomy's "invalid JSON format" check (``errors.invalid_json_format``) on the record the
original pipeline would have written; it is False whenever nothing parsed.
"""

from __future__ import annotations

import ast
import bisect
import functools
import itertools
import json
import math
import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lmms_agentic.adapters.core.extract import REQUEST_FAILED_PREFIX
from lmms_agentic.adapters.core.text import answer_text
from lmms_agentic.tasks.agentx.errors import invalid_json_format

__all__ = [
    "FAILURES",
    "JSON_BUDGET_FACTOR",
    "JSON_BUDGET_MIN",
    "LITERAL_BUDGET",
    "MAX_BALANCED_ATTEMPTS",
    "MAX_DEPTH",
    "MAX_FENCED_BLOCKS",
    "MAX_KEY_POSITIONS",
    "MAX_LITERAL_CHARS",
    "MAX_SCAN_TOKENS",
    "MAX_TOOL_CHARS",
    "MAX_TOOL_PARTS",
    "PARSE_FAILURES",
    "PARSE_PATHS",
    "ParsedTrace",
    "TraceStep",
    "canonical_tool",
    "parse_trace",
    "toolset_scores",
]

FAILURES = ("no_output", "invalid_json", "multiple_tools_in_step", "unknown_tool", "missing_final_answer")
PARSE_FAILURES = ("no_output", "invalid_json")
"""The failures that mean "nothing could be read" (the others are issues of a trace that did parse)."""
PARSE_PATHS = ("json", "literal", "balanced_json", "balanced_literal", "none")
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
MAX_TOOL_CHARS = 4_096
MAX_TOOL_PARTS = 32
_STEP_KEYS = ("task", "tool", "tool_used", "tool_output", "output", "thought")
_NO_TOOL = frozenset({"", "none", "null", "n/a", "na", "notool", "notools", "notoolused"})
_OUTER_FENCE_OPEN = re.compile(r"```[\w+-]*")
_FENCED = re.compile(r"```[\w+-]*+[ \t]*+\r?\n((?:[^`]++|`(?!``))*+)```")
_TOOL_SEPARATOR = re.compile(r"[,;/&+|]|\b(?:and|or|then)\b", re.IGNORECASE)
_TRACE_KEY_PATTERNS = tuple(re.compile(re.escape(key)) for key in TRACE_KEYS)
# Possessive repeats (Python 3.11+) never give back what they consumed, and both are only used with .match at a
# position the caller chooses, so no character is read twice whatever follows.
_TOP_LEVEL = re.compile(r"""[^{]*+(?:\{[^{}"']*+\}[^{]*+)*+""")
_IN_BRACES = re.compile(r"""[^{}"']*+(\{++|\}++|"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+["\n]?"""
                        r"""|'[^'\\\n]*+(?:\\.[^'\\\n]*+)*+['\n]?)""", re.DOTALL)
_NAME_DROP = re.compile(r"[\s_]+")
_NAME_LEAD = re.compile(r"^[^a-z0-9]+")


@dataclass(frozen=True)
class TraceStep:
    """One step as read from the model's trace; ``index`` is the 1-based position (the model's own "step" numbers
    are not trusted).  ``tools_canonical``: every distinct known tool the step names, in order."""

    index: int
    task: str
    tool: str
    tool_canonical: str | None
    output: str
    thought: str
    tool_key: str
    tools_canonical: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Plain dict for sample logs."""
        return {"index": self.index, "task": self.task, "tool": self.tool, "tool_canonical": self.tool_canonical,
                "output": self.output, "thought": self.thought, "tool_key": self.tool_key,
                "tools_canonical": list(self.tools_canonical)}


@dataclass(frozen=True)
class ParsedTrace:
    """A parsed response (see the module docstring).  ``data`` is the parsed object, made JSON-able (None when
    nothing parsed); it is left out of ``as_dict`` (see ``notebook_record``)."""

    steps: tuple[TraceStep, ...]
    final_answer: str
    justification: str
    parse_path: str
    failure: str | None
    issues: tuple[str, ...]
    format_ok: bool
    data: dict[str, Any] | None = field(default=None, hash=False, repr=False)

    def tools(self) -> tuple[str, ...]:
        """Distinct canonical tools named by the steps, in order of first use (the predicted tool set)."""
        return tuple(dict.fromkeys(name for step in self.steps for name in step.tools_canonical))

    def prediction_record(self) -> dict[str, Any]:
        """What a judge sees: the steps as the model wrote them with canonical keys (``tool_used``,
        ``tool_output``; [[...]] unwrapped) and ``final_answer`` as {"value", "justification"}.  On a parse
        failure the original's empty record: {"reasoning_steps": "", "final_answer": {"value": "",
        "justification": ""}}."""
        if self.data is None:
            return {"reasoning_steps": "", "final_answer": {"value": "", "justification": ""}}
        steps = [_canonical_step(step) for step in _raw_steps(self.data)]
        return {"reasoning_steps": steps, "final_answer": {"value": self.final_answer,
                                                          "justification": self.justification}}

    def notebook_record(self, query: str, filename: str) -> dict[str, Any]:
        """The prediction-file record the original notebooks read: {"query", "filename", **model_json}
        (the model's own keys win, as in the original), or the empty record on a parse failure."""
        if self.data is None:
            return {"query": query, "filename": filename, **self.prediction_record()}
        return {"query": query, "filename": filename, **self.data}

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict for sample logs."""
        return {"steps": [step.as_dict() for step in self.steps], "final_answer": self.final_answer,
                "justification": self.justification, "parse_path": self.parse_path, "failure": self.failure,
                "issues": list(self.issues), "format_ok": self.format_ok, "tools": list(self.tools())}


# ---------------------------------------------------------------- tool names
def _norm_name(name: str) -> str:
    return _NAME_LEAD.sub("", _NAME_DROP.sub("", name.lower()))


@functools.cache
def _tool_index(tool_names: tuple[str, ...], aliases: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    index = [(_norm_name(tool), tool) for tool in tool_names]
    index += [(_norm_name(alias), target) for alias, target in aliases if target in tool_names]
    return tuple((key, target) for key, target in index if key)


def canonical_tool(name: str, tool_names: Sequence[str], aliases: Mapping[str, str]) -> str | None:
    """The tool ``name`` refers to, or None.  Lower-case, drop whitespace (and underscores), drop leading
    punctuation (backticks, asterisks, quotes), then the longest tool name or alias that the result STARTS with
    ("SceneDescriber – to confirm…" -> SceneDescriber, "Image Generator" -> ImageGenerator, "DrawBox" ->
    DrawBoundingBox).  Only the first ``MAX_TOOL_CHARS`` characters after leading whitespace are read."""
    text = _norm_name(name.lstrip()[:MAX_TOOL_CHARS]) if isinstance(name, str) else ""
    if not text:
        return None
    best, best_len = None, 0
    for key, target in _tool_index(tuple(tool_names), tuple(aliases.items())):
        if len(key) > best_len and text.startswith(key):
            best, best_len = target, len(key)
    return best


def toolset_scores(predicted: Iterable[str], gold: Iterable[str]) -> dict[str, float]:
    """Precision, recall and F1 of two SETS of canonical tool names; both empty -> 1.0, exactly one empty -> 0.0."""
    pred, ref = set(predicted), set(gold)
    if not pred and not ref:
        return {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    if not pred or not ref:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    hits = len(pred & ref)
    precision, recall = hits / len(pred), hits / len(ref)
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def _tool_text(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(_tool_text(item) for item in value)
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return str(value["name"]).strip()
    return _text(value)


def _tool_parts(text: str) -> list[str]:
    """The first ``MAX_TOOL_CHARS`` characters of ``text`` split at the tool separators (at most ``MAX_TOOL_PARTS``
    parts; the last one keeps the rest), blank parts dropped."""
    text = text.lstrip()[:MAX_TOOL_CHARS]
    parts: list[str] = []
    start = 0
    for match in _TOOL_SEPARATOR.finditer(text):
        if len(parts) == MAX_TOOL_PARTS - 1:
            break
        parts.append(text[start:match.start()])
        start = match.end()
    parts.append(text[start:])
    return [part for part in parts if part.strip()]


def _tools_named(value: object, tool_names: Sequence[str], aliases: Mapping[str, str]) -> tuple[str, ...]:
    items = value[:MAX_TOOL_PARTS] if isinstance(value, list) else [value]
    found: list[str | None] = []
    for item in items:
        text = _tool_text(item)
        found.append(canonical_tool(text, tool_names, aliases))
        found += [canonical_tool(part, tool_names, aliases) for part in _tool_parts(text)]
    return tuple(dict.fromkeys(name for name in found if name is not None))


# ---------------------------------------------------------------- values
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


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False)


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value == [] or value == {}


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


def _find_object(text: str) -> tuple[dict[str, Any], str] | None:
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


# ---------------------------------------------------------------- reading the object
def _raw_steps(data: Mapping[str, Any]) -> list[Any]:
    steps = data.get("reasoning_steps")
    if isinstance(steps, dict):
        return [steps] if any(key in steps for key in _STEP_KEYS) else list(steps.values())
    if not isinstance(steps, list):
        return []
    if steps and all(isinstance(item, list) for item in steps):
        return [step for item in steps for step in item]
    return list(steps)


def _pick(step: Mapping[str, Any], first: str, second: str) -> tuple[str, object]:
    """(key, value): ``first`` if non-blank, else ``second`` if non-blank, else ("", the raw value if any)."""
    for key in (first, second):
        if not _blank(step.get(key)):
            return key, step[key]
    return "", step.get(first, step.get(second))


def _canonical_step(step: object) -> object:
    if not isinstance(step, dict):
        return step
    tool_value, output_value = _pick(step, "tool_used", "tool")[1], _pick(step, "tool_output", "output")[1]
    out: dict[str, Any] = {}
    for key, value in step.items():
        if key in ("tool", "tool_used"):
            out.setdefault("tool_used", tool_value)
        elif key in ("output", "tool_output"):
            out.setdefault("tool_output", output_value)
        else:
            out[key] = value
    return out


def _read_step(index: int, step: object, tool_names: Sequence[str], aliases: Mapping[str, str]) -> TraceStep:
    if not isinstance(step, dict):
        return TraceStep(index, _text(step), "", None, "", "", "")
    tool_key, tool_value = _pick(step, "tool_used", "tool")
    tools = _tools_named(tool_value, tool_names, aliases)
    return TraceStep(index=index, task=_text(step.get("task")), tool=_tool_text(tool_value),
                     tool_canonical=tools[0] if tools else None, output=_text(_pick(step, "tool_output", "output")[1]),
                     thought=_text(step.get("thought")), tool_key=tool_key, tools_canonical=tools)


def _read_final(data: Mapping[str, Any]) -> tuple[str, str]:
    answer, justification = data.get("final_answer"), data.get("justification")
    if "final_answer" not in data and isinstance(data.get("final_output"), dict):
        output = data["final_output"]
        answer, justification = output.get("final_answer", output.get("value")), output.get("justification")
    if isinstance(answer, dict):
        value = answer.get("value", answer.get("answer"))
        return _text(value), _text(answer.get("justification", justification))
    return _text(answer), _text(justification)


def _empty(parse_path: str, failure: str) -> ParsedTrace:
    return ParsedTrace((), "", "", parse_path, failure, (failure,), False, None)


def parse_trace(text: object, tool_names: Sequence[str], aliases: Mapping[str, str]) -> ParsedTrace:
    """Parse one model response into a ParsedTrace; never raises for any ``text`` (see the module docstring)."""
    if not isinstance(text, str) or not text.strip() or text.lstrip().startswith(REQUEST_FAILED_PREFIX):
        return _empty("none", "no_output")
    body = answer_text(text, fallback_to_thinking=True).strip()
    found = _find_object(body) if body else None
    if found is None:
        return _empty("none", "invalid_json")
    data, parse_path = found
    steps = tuple(_read_step(i, step, tool_names, aliases) for i, step in enumerate(_raw_steps(data), start=1))
    value, justification = _read_final(data)
    flags = {
        "multiple_tools_in_step": any(len(step.tools_canonical) > 1 for step in steps),
        "unknown_tool": any(not step.tools_canonical and _norm_name(step.tool[:MAX_TOOL_CHARS]) not in _NO_TOOL
                            for step in steps),
        "missing_final_answer": not value,
    }
    issues = tuple(name for name in FAILURES if flags.get(name))
    format_ok = not invalid_json_format({"query": "", "filename": "", **data})
    return ParsedTrace(steps, value, justification, parse_path, issues[0] if issues else None, issues, format_ok,
                       data)
