"""Agent-X tool-use trace parsing: one model response -> steps, final answer, parse path, failure class.
``trace_from_object`` reads an object that was never text (an executed episode) the same way, without step 1.

Owns reading the trace object (`ParsedTrace`), the tool-name resolution and the tool-set scores.  Finding the object
in the reply, safely and in bounded time, is `core/trace_search.py` (SAFETY, COST and the search order are described
there).  The tool names and legacy aliases are arguments (``release_data.TOOL_NAMES`` and
``release_data.LEGACY_ALIASES``). Pure standard library; nothing here depends on a harness.

PARSE ORDER:
  0. no output: not a str, empty/whitespace, or lmms-eval's "[LMMS_EVAL_REQUEST_FAILED" text -> failure no_output.
  1. ``<think>``: keep the text after the first ``</think>``; if nothing follows, the text before it; stray markers
     are removed.  Then strip whitespace.
  2. ``trace_search.find_trace_object``: the first candidate that parses to a dict (parse_path "json", "literal",
     "balanced_json" or "balanced_literal").  Nothing parses -> failure invalid_json, parse_path "none".

READING THE OBJECT.  steps: ``reasoning_steps`` as a list (unwrapped once when every item is a list, i.e. [[...]]),
a single step dict, or a dict of step dicts; anything else gives no steps.  A step's tool = ``tool_used`` if
non-blank, else ``tool`` (``tool_key`` says which); output = ``tool_output`` else ``output``; a step that is not a
dict keeps its text as ``task``.  Final answer: ``final_answer`` as {"value", "justification"} (``answer`` is
accepted for a missing ``value``) or a bare value, with a top-level ``justification`` beside it; without
``final_answer``, the format block's ``final_output`` {"final_answer", "justification"}.  Non-string values are
written as JSON text (``True`` -> "true").  Of a step's tool field the first ``MAX_TOOL_CHARS`` characters are
read, split into at most ``MAX_TOOL_PARTS`` names.

FAILURES, in priority order (``failure`` is the first that applies; ``issues`` lists all, same order):
  no_output, invalid_json        nothing to read (``issues`` then holds only that one); ``PARSE_FAILURES``
  multiple_tools_in_step         a step names 2+ different known tools: a list, or a string split at , ; / & + |
                                 "and" "or" "then" whose parts resolve to different tools ("OCR, Calculator")
  unknown_tool                   a step tool that resolves to no tool (blank, "none", "null", "n/a", "no tool" are
                                 no tool at all, not an unknown one)
  missing_final_answer           no final-answer value (a generative task may legitimately have none: the caller
                                 decides what that means)
``format_ok`` is the failure rules' "invalid JSON format" check (``failure_rules.invalid_json_format``) on the record
the original pipeline would have written; it is False whenever nothing parsed.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lmms_agentic.adapters.core.text import REQUEST_FAILED_PREFIX, answer_text
from lmms_agentic.tasks.agentx.core.failure_rules import invalid_json_format
from lmms_agentic.tasks.agentx.core.trace_search import _plain, find_trace_object

FAILURES = ("no_output", "invalid_json", "multiple_tools_in_step", "unknown_tool", "missing_final_answer")
PARSE_FAILURES = ("no_output", "invalid_json")
"""The failures that mean "nothing could be read" (the others are issues of a trace that did parse)."""
MAX_TOOL_CHARS = 4_096
MAX_TOOL_PARTS = 32
_STEP_KEYS = ("task", "tool", "tool_used", "tool_output", "output", "thought")
_NO_TOOL = frozenset({"", "none", "null", "n/a", "na", "notool", "notools", "notoolused"})
_TOOL_SEPARATOR = re.compile(r"[,;/&+|]|\b(?:and|or|then)\b", re.IGNORECASE)
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


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False)


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value == [] or value == {}


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
    found = find_trace_object(body) if body else None
    if found is None:
        return _empty("none", "invalid_json")
    data, parse_path = found
    return _read_object(data, parse_path, tool_names, aliases)


def trace_from_object(data: Mapping[str, Any], tool_names: Sequence[str], aliases: Mapping[str, str],
                      parse_path: str = "object") -> ParsedTrace:
    """The trace of an object that was never text (an executed episode in the record shape): read exactly as
    ``parse_trace`` reads the object it finds, after the same JSON-able copy (non-finite floats as text, at most
    ``trace_search.MAX_DEPTH`` levels, else failure invalid_json), but with no ``<think>`` handling and no search:
    every string reaches the steps, the final answer and the judge's record as it is."""
    try:
        plain = _plain(dict(data))
    except (ValueError, RecursionError):
        return _empty("none", "invalid_json")
    return _read_object(plain, parse_path, tool_names, aliases)


def _read_object(data: dict[str, Any], parse_path: str, tool_names: Sequence[str],
                 aliases: Mapping[str, str]) -> ParsedTrace:
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
