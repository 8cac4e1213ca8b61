"""Hostile model replies and failing tools: every reply ends as a round (an invalid step or an error observation),
never as an exception, and the episode state stays UTF-8 JSON (what lmms-eval logs and `process_results` reads)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from PIL import Image

from lmms_agentic.adapters.agentic import tool_runtime
from lmms_agentic.adapters.agentic.tool_runtime import ToolRuntime
from lmms_agentic.tasks.agentx.tools import hooks, protocol
from lmms_agentic.tasks.agentx.tools import toolset as toolset_module
from lmms_agentic.tasks.agentx.tools.local import ToolError, ToolOutput, ToolUnavailable

DOC = {"gt_steps_flat_json": "[]"}
DEEP = 100_000


def _deep(levels: int, opener: str, closer: str) -> str:
    return '{"tool": "Calculator", "arguments": ' + opener * levels + closer * levels + "}"


# (name, reply, kind, status, a phrase the observation must hold)
REPLIES: list[tuple[str, str, str, str | None, str]] = [
    ("nested 100k lists", _deep(DEEP, "[", "]"), "invalid", None, "Invalid reply"),
    ("nested 100k objects", _deep(DEEP, '{"a": ', "}"), "invalid", None, "Invalid reply"),
    ("nested 20k lists (read in full)", _deep(20_000, "[", "]"), "invalid", None, "nested more than"),
    ("nested 500 lists (JSON reads it)", _deep(500, "[", "]"), "invalid", None, "nested more than"),
    ("5000-digit integer", '{"tool": "Calculator", "arguments": {"expression": ' + "9" * 5000 + "}}",
     "invalid", None, "5,000 digits"),
    ("5000-digit integer, Python literal", "{'final_answer': " + "9" * 5000 + "}", "invalid", None,
     "could not be read"),
    ("5000-digit integer string for an int argument",
     '{"tool": "WebSearch", "arguments": {"query": "x", "k": "' + "9" * 5000 + '"}}', "call", "invalid_arguments",
     "could not be read"),
    ("set", "{'tool': 'Calculator', 'arguments': {'expression': {1, 2}}}", "invalid", None, "set"),
    ("bytes", "{'tool': 'Calculator', 'arguments': {'expression': b'1+1'}}", "invalid", None, "bytes"),
    ("bytes answer", "{'final_answer': {'value': b'x'}}", "invalid", None, "bytes"),
    ("complex", "{'tool': 'Calculator', 'arguments': {'expression': 1j}}", "invalid", None, "complex"),
    ("Ellipsis thought", "{'thought': ..., 'final_answer': 'x'}", "invalid", None, "ellipsis"),
    ("integer keys", "{'tool': 'Calculator', 'arguments': {1: '1+1'}}", "invalid", None, "not a string"),
    ("escaped lone surrogate", '{"final_answer": "\\ud800 and \\udfff"}', "final", None, "final answer"),
    ("raw lone surrogate", '{"thought": "a\ud800", "final_answer": "b\udcff"} \ud83d', "final", None,
     "final answer"),
    ("surrogate in an argument", '{"tool": "Calculator", "arguments": {"expression": "1+\\ud800"}}', "call",
     "error", "Calculator"),
    ("10 MB reply, call first", '{"tool": "Calculator", "arguments": {"expression": "1+1"}}' + " x" * 5_000_000,
     "call", "ok", "2"),
    ("10 MB reply, call after the read limit", "x" * 10_000_000 + '{"final_answer": "late"}', "invalid", None,
     "first 100,000 characters"),
    ("10 MB of braces", "{" * 10_000_000, "invalid", None, "Invalid reply"),
]


def _utf8_json(state: dict[str, Any]) -> None:
    json.dumps(state, ensure_ascii=False).encode("utf-8")
    json.loads(protocol.episode_payload(state).encode("utf-8"))


def _step(reply: str, runtime: ToolRuntime) -> tuple[dict[str, Any], dict[str, Any]]:
    state = protocol.new_state(1)
    entry, _ = protocol.round_step(DOC, reply, state, [Image.new("RGB", (16, 16), "white")], runtime, 8)
    return entry, state


@pytest.mark.parametrize(("reply", "kind", "status", "phrase"), [case[1:] for case in REPLIES],
                         ids=[case[0] for case in REPLIES])
def test_every_hostile_reply_is_a_round(reply: str, kind: str, status: str | None, phrase: str,
                                        runtime: ToolRuntime) -> None:
    entry, state = _step(reply, runtime)
    assert entry["kind"] == kind and entry["status"] == status, entry["observation"]
    assert phrase in entry["observation"] or phrase in json.dumps(state["final_answer"])
    assert state["rounds"] == [entry]
    _utf8_json(state)
    assert len(entry["reply"]) <= protocol.MAX_REPLY_CHARS + 100  # the rest is noted, not kept
    assert isinstance(protocol.parse_reply(reply), protocol.Action)


def test_surrogates_become_replacement_characters(runtime: ToolRuntime) -> None:
    _, state = _step('{"final_answer": {"value": "\\ud800x", "justification": "\\ud83d\\ude00"}}', runtime)
    assert state["final_answer"] == {"value": "\ufffdx", "justification": "\U0001f600"}


class _Boom(BaseException):
    """Neither an Exception nor a stop request: a tool's own bug."""


@pytest.mark.parametrize("error", [RecursionError("deep"), MemoryError(), ValueError("bad"), SystemError("sys"),
                                   SystemExit(3), _Boom("custom"), ToolError("lone \udc80 surrogate"),
                                   KeyError("missing")],
                         ids=lambda error: type(error).__name__)
def test_a_tool_raising_anything_is_an_error_observation(error: BaseException, runtime: ToolRuntime,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def raising(*args: Any, **kwargs: Any) -> ToolOutput:
        raise error

    monkeypatch.setattr(toolset_module, "run_local", raising)
    runtime.clear_memo()
    entry, state = _step('{"tool": "Calculator", "arguments": {"expression": "6*7"}}', runtime)
    assert entry["kind"] == "call" and entry["status"] == "error", entry["observation"]
    assert entry["observation"].startswith("Error: Calculator")
    _utf8_json(state)


def test_an_exception_whose_message_fails_is_still_an_observation(runtime: ToolRuntime,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no message")

    def raising(*args: Any, **kwargs: Any) -> ToolOutput:
        raise Unprintable

    monkeypatch.setattr(toolset_module, "run_local", raising)
    runtime.clear_memo()
    entry, _ = _step('{"tool": "Calculator", "arguments": {"expression": "6*8"}}', runtime)
    assert entry["status"] == "error" and "Unprintable" in entry["observation"]


def test_a_keyboard_interrupt_inside_a_tool_stops_the_run(runtime: ToolRuntime,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> ToolOutput:
        raise KeyboardInterrupt

    monkeypatch.setattr(toolset_module, "run_local", interrupted)
    runtime.clear_memo()
    with pytest.raises(KeyboardInterrupt):
        _step('{"tool": "Calculator", "arguments": {"expression": "6*9"}}', runtime)


def test_tool_output_text_is_utf8_and_capped(runtime: ToolRuntime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolset_module, "run_local", lambda *a, **k: ToolOutput("\ud800" * 50_000))
    runtime.clear_memo()
    entry, state = _step('{"tool": "Calculator", "arguments": {"expression": "1"}}', runtime)
    assert entry["status"] == "ok" and len(entry["observation"]) <= tool_runtime.MAX_OBSERVATION + 20
    _utf8_json(state)


def test_a_hostile_episode_is_scored_by_process_results(runtime: ToolRuntime) -> None:
    """The whole lmms-eval path without lmms-eval: doc_to_text round by round, the payload, then `record`."""
    os.environ.setdefault("LMMS_AGENTIC_DATA", "mini")
    from lmms_agentic.tasks.agentx import hooks as agentx_hooks

    doc = dict(next(iter(agentx_hooks.all_docs())))
    replies = [*[case[1] for case in REPLIES if case[2] != "final"][:7], '{"final_answer": "done \\ud800"}']
    kwargs = {"max_steps": len(replies), "video_mode": "frames", "n_frames": 8}
    outputs: list[str] = []
    info = None
    for round_idx, reply in enumerate(replies, start=1):
        outputs.append(reply)
        _, _, terminal, updated, info = hooks.doc_to_text(doc, kwargs, previous_output=outputs, round_idx=round_idx,
                                                          previous_round_info=info, runtime=runtime)
        if terminal:
            break
    assert terminal
    payload = next(iter(updated))
    payload.encode("utf-8")
    sample = hooks.record(doc, [payload], judge=False, kwargs=kwargs)
    assert sample["execution"]["steps"] == len(replies) and sample["execution"]["invalid_replies"] >= 5
    assert sample["episode_error"] is None and sample["rounds"][-1]["kind"] == "final"
    json.dumps(sample, ensure_ascii=False, default=str).encode("utf-8")


def test_an_unavailable_tool_is_unavailable_and_not_memoised(runtime: ToolRuntime,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def unavailable(tool: str, *args: Any, **kwargs: Any) -> ToolOutput:
        calls.append(tool)
        raise ToolUnavailable("no sandbox here")

    monkeypatch.setattr(toolset_module, "run_local", unavailable)
    runtime.clear_memo()
    for _ in range(2):
        entry, _ = _step('{"tool": "Calculator", "arguments": {"expression": "2+3"}}', runtime)
        assert entry["status"] == "unavailable" and not entry["cached"] and "no sandbox here" in entry["observation"]
    assert calls == ["Calculator", "Calculator"] and runtime.memo_size() == (0, 0)
