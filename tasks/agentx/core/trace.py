"""Agent-X trace reading: one model reply -> steps, final answer, parse path and failure class (`parse_trace`);
``trace_from_object`` reads an executed episode's object the same way.

Owns `ParsedTrace`, the tool-name resolution and the tool-set scores; finding the object in a reply is
`core/trace_search.py`.  The parse order, how the object is read and the failure classes are described in the
benchmark README ("Parsing").  Pure standard library; the tool names and aliases are arguments.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lmms_agentic.adapters.core.text import REQUEST_FAILED_PREFIX, answer_text
from lmms_agentic.tasks.agentx.core.failure_rules import invalid_json_format, unwrap_lists
from lmms_agentic.tasks.agentx.core.trace_search import _plain, find_trace_object

PARSE_FAILURES = ("no_output", "invalid_json")
"""The failures that mean "nothing could be read"."""
TRACE_ISSUES = ("multiple_tools_in_step", "unknown_tool", "missing_final_answer")
"""The issues of a trace that did parse."""
FAILURES = PARSE_FAILURES + TRACE_ISSUES
"""Every failure class, in priority order."""
MAX_TOOL_CHARS = 4_096
MAX_TOOL_PARTS = 32
_STEP_KEYS = ("task", "tool", "tool_used", "tool_output", "output", "thought")
_RENAMED: dict[str, str] = {"tool": "tool_used", "output": "tool_output"}
"""Step keys -> the canonical key that wins when non-blank (the judge's record uses only the canonical ones)."""
_NO_TOOL = frozenset({"", "none", "null", "n/a", "na", "notool", "notools", "notoolused"})
Resolve = Callable[[str], str | None]
"""A tool name -> the canonical tool it refers to (``canonical_tool`` with the tool names and aliases bound)."""
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
        return {**vars(self), "tools_canonical": list(self.tools_canonical)}


@dataclass(frozen=True)
class ParsedTrace:
    """A parsed response.  ``data`` is the parsed object, made JSON-able (None when nothing parsed); it is left out
    of ``as_dict`` (see ``notebook_record``)."""

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
        ``tool_output``; [[...]] unwrapped) and ``final_answer`` as {"value", "justification"}; on a parse
        failure the original's empty record (steps "", empty value and justification)."""
        steps = "" if self.data is None else [_canonical_step(step) for step in _raw_steps(self.data)]
        answer = {"value": self.final_answer, "justification": self.justification}
        return {"reasoning_steps": steps, "final_answer": answer}

    def notebook_record(self, query: str, filename: str) -> dict[str, Any]:
        """The prediction-file record the original notebooks read: {"query", "filename", **model_json} (the
        model's own keys win), or the empty record on a parse failure."""
        body = self.prediction_record() if self.data is None else self.data
        return {"query": query, "filename": filename, **body}

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict for sample logs."""
        return {"steps": [step.as_dict() for step in self.steps], "final_answer": self.final_answer,
                "justification": self.justification, "parse_path": self.parse_path, "failure": self.failure,
                "issues": list(self.issues), "format_ok": self.format_ok, "tools": list(self.tools())}


def _norm_name(name: str) -> str:
    return _NAME_LEAD.sub("", _NAME_DROP.sub("", name.lower()))


@functools.cache
def _tool_index(tool_names: tuple[str, ...], aliases: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    index = [(_norm_name(tool), tool) for tool in tool_names]
    index += [(_norm_name(alias), target) for alias, target in aliases if target in tool_names]
    return tuple((key, target) for key, target in index if key)


def canonical_tool(name: str, tool_names: Sequence[str], aliases: Mapping[str, str]) -> str | None:
    """The tool ``name`` refers to, or None: the longest tool name or alias that ``name`` starts with, compared
    lower-case without whitespace, underscores and leading punctuation (README "Parsing")."""
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
    if not pred or not ref:
        score = 1.0 if pred == ref else 0.0
        return {"precision": score, "recall": score, "f1": score}
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
    """The non-blank parts of ``text`` (its first ``MAX_TOOL_CHARS`` characters) between tool separators."""
    parts = _TOOL_SEPARATOR.split(text.lstrip()[:MAX_TOOL_CHARS], maxsplit=MAX_TOOL_PARTS - 1)
    return [part for part in parts if part.strip()]


def _tools_named(value: object, resolve: Resolve) -> tuple[str, ...]:
    items = value[:MAX_TOOL_PARTS] if isinstance(value, list) else [value]
    found: list[str | None] = []
    for item in items:
        text = _tool_text(item)
        found += [resolve(text), *map(resolve, _tool_parts(text))]
    return tuple(dict.fromkeys(name for name in found if name is not None))


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False)


def _blank(value: object) -> bool:
    return value in (None, [], {}) or (isinstance(value, str) and not value.strip())


def _raw_steps(data: Mapping[str, Any]) -> list[Any]:
    steps = data.get("reasoning_steps")
    if isinstance(steps, dict):
        return [steps] if any(key in steps for key in _STEP_KEYS) else list(steps.values())
    return unwrap_lists(steps)


def _pick(step: Mapping[str, Any], first: str, second: str) -> tuple[str, object]:
    """(key, value): ``first`` if non-blank, else ``second`` if non-blank, else ("", the raw value if any)."""
    for key in (first, second):
        if not _blank(step.get(key)):
            return key, step[key]
    return "", step.get(first, step.get(second))


def _canonical_step(step: object) -> object:
    if not isinstance(step, dict):
        return step
    picked = {new: _pick(step, new, old)[1] for old, new in _RENAMED.items()}
    out: dict[str, Any] = {}
    for key, value in step.items():
        name = _RENAMED[key] if key in _RENAMED else key
        out.setdefault(name, picked.get(name, value))
    return out


def _read_step(index: int, step: object, resolve: Resolve) -> TraceStep:
    if not isinstance(step, dict):
        return TraceStep(index, _text(step), "", None, "", "", "")
    tool_key, tool_value = _pick(step, "tool_used", "tool")
    tools = _tools_named(tool_value, resolve)
    first = tools[0] if tools else None
    task, thought = _text(step.get("task")), _text(step.get("thought"))
    output = _text(_pick(step, "tool_output", "output")[1])
    return TraceStep(index, task, _tool_text(tool_value), first, output, thought, tool_key, tools)


def _read_final(data: Mapping[str, Any]) -> tuple[str, str]:
    answer, justification = data.get("final_answer"), data.get("justification")
    if "final_answer" not in data and isinstance(data.get("final_output"), dict):
        output = data["final_output"]
        answer, justification = output.get("final_answer", output.get("value")), output.get("justification")
    if isinstance(answer, dict):
        value = answer.get("value", answer.get("answer"))
        return _text(value), _text(answer.get("justification", justification))
    return _text(answer), _text(justification)


def _empty(failure: str) -> ParsedTrace:
    return ParsedTrace((), "", "", "none", failure, (failure,), False, None)


def parse_trace(text: object, tool_names: Sequence[str], aliases: Mapping[str, str]) -> ParsedTrace:
    """Parse one model response into a ParsedTrace; never raises, whatever ``text`` is."""
    if not isinstance(text, str) or not text.strip() or text.lstrip().startswith(REQUEST_FAILED_PREFIX):
        return _empty("no_output")
    body = answer_text(text, fallback_to_thinking=True).strip()
    found = find_trace_object(body) if body else None
    if found is None:
        return _empty("invalid_json")
    return _read_object(*found, functools.partial(canonical_tool, tool_names=tool_names, aliases=aliases))


def trace_from_object(data: Mapping[str, Any], tool_names: Sequence[str], aliases: Mapping[str, str],
                      parse_path: str = "object") -> ParsedTrace:
    """The trace of an object that was never text (an executed episode in the record shape), read as ``parse_trace``
    reads the object it finds (after the same JSON-able copy) but with no ``<think>`` handling and no search."""
    try:
        plain = _plain(dict(data))
    except (ValueError, RecursionError):
        return _empty("invalid_json")
    return _read_object(plain, parse_path, functools.partial(canonical_tool, tool_names=tool_names, aliases=aliases))


def _read_object(data: dict[str, Any], parse_path: str, resolve: Resolve) -> ParsedTrace:
    steps = tuple(_read_step(i, step, resolve) for i, step in enumerate(_raw_steps(data), start=1))
    value, justification = _read_final(data)
    several = any(len(step.tools_canonical) > 1 for step in steps)
    unknown = any(not step.tools_canonical and _norm_name(step.tool[:MAX_TOOL_CHARS]) not in _NO_TOOL
                  for step in steps)
    issues = tuple(name for name, found in zip(TRACE_ISSUES, (several, unknown, not value), strict=True) if found)
    format_ok = not invalid_json_format({"query": "", "filename": "", **data})
    failure = issues[0] if issues else None
    return ParsedTrace(steps, value, justification, parse_path, failure, issues, format_ok, data)
