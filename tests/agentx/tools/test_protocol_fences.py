"""Markdown fences in replies: a fence inside an action's strings is part of a value, not a fence of the reply.

Agent-X's catalogue describes Solver's and CodePlotter's `command` as "Python code in markdown", so a model may write
`{"tool": "Solver", "arguments": {"command": "```python\\n...\\n```"}}`.  The parser looked for fences before
objects, found the one inside the string and read no action (an invalid step); rows marked "invalid before" are the
replies that changed.  A reply that wraps its action in a ```json fence is read as before, and odd replies stay
invalid steps."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from PIL import Image

from lmms_agentic.adapters.agentic.tool_runtime import ToolRuntime
from lmms_agentic.tasks.agentx.tools import isolation, protocol

F = "```"
OCR = '{"tool": "OCR", "arguments": {"image": "image_1"}}'
SOLVER_FENCED = '{"tool": "Solver", "arguments": {"command": "' + F + 'python\\nprint(1)\\n' + F + '"}}'
FENCED_CODE = F + "python\nprint(1)\n" + F

# (name, reply, kind, tool, arguments / final value, or a phrase of the invalid step's error)
CASES: list[tuple[str, str, str, str | None, Any]] = [
    # invalid before: the fence inside the JSON string hid the object
    ("Solver command fenced (JSON)", SOLVER_FENCED, "call", "Solver", {"command": FENCED_CODE}),
    ("Solver command fenced (Python literal)",
     "{'tool': 'Solver', 'arguments': {'command': '" + F + "python\\nprint(1)\\n" + F + "'}}",
     "call", "Solver", {"command": FENCED_CODE}),
    ("Solver command fenced, with thought and prose",
     'I will solve it.\n{"thought": "solve", "tool": "Solver", "arguments": {"command": "' + F
     + 'python\\nx = symbols(\'x\')\\nprint(solve(x - 2, x))\\n' + F + '"}}\nDone.',
     "call", "Solver", {"command": F + "python\nx = symbols('x')\nprint(solve(x - 2, x))\n" + F}),
    ("CodePlotter command fenced",
     '{"tool": "CodePlotter", "arguments": {"command": "' + F + 'python\\nplt.plot([1, 2])\\n' + F + '"}}',
     "call", "CodePlotter", {"command": F + "python\nplt.plot([1, 2])\n" + F}),
    ("code in the command holds an action-like dict",
     '{"tool": "Solver", "arguments": {"command": "' + F + "python\\nd = {'tool': 'x'}\\nprint(d)\\n" + F + '"}}',
     "call", "Solver", {"command": F + "python\nd = {'tool': 'x'}\nprint(d)\n" + F}),
    ("``` in another argument",
     '{"tool": "OverlayText", "arguments": {"image": "image_1", "text": "' + F + '", "position": "mt"}}',
     "call", "OverlayText", {"image": "image_1", "text": F, "position": "mt"}),
    ("``` in the thought", '{"thought": "use ' + F + 'json fences' + F + '", ' + OCR[1:], "call", "OCR",
     {"image": "image_1"}),
    ("``` in the final answer", '{"final_answer": {"value": "' + F + 'x' + F + '", "justification": "j"}}', "final",
     None, F + "x" + F),
    ("an unclosed fence in the command",
     '{"tool": "Solver", "arguments": {"command": "' + F + 'python\\nprint(1)"}}', "call", "Solver",
     {"command": F + "python\nprint(1)"}),
    ("nested: fenced JSON whose command is fenced", F + "json\n" + SOLVER_FENCED + "\n" + F, "call", "Solver",
     {"command": FENCED_CODE}),
    ("nested, with an example object in the prose",
     'The format is {"tool": "<name>"}.\n' + F + "json\n" + SOLVER_FENCED + "\n" + F, "call", "Solver",
     {"command": FENCED_CODE}),
    ("an action, then a code block", OCR + "\n" + FENCED_CODE, "call", "OCR", {"image": "image_1"}),
    # read as before
    ("plain JSON action", OCR, "call", "OCR", {"image": "image_1"}),
    ("fenced JSON action", F + "json\n" + OCR + "\n" + F, "call", "OCR", {"image": "image_1"}),
    ("fenced, no tag, no newline", F + OCR + F, "call", "OCR", {"image": "image_1"}),
    ("fenced Python literal", F + "python\n{'tool': 'OCR', 'arguments': {'image': 'image_1'}}\n" + F, "call", "OCR",
     {"image": "image_1"}),
    ("fenced action wins over an example in the prose",
     'The format is {"tool": "<name>"}.\n' + F + "json\n" + OCR + "\n" + F, "call", "OCR", {"image": "image_1"}),
    ("fenced action after prose with a stray quote mark",
     'A 5" ruler is shown.\n' + F + "json\n" + OCR + "\n" + F, "call", "OCR", {"image": "image_1"}),
    ("Solver command unfenced", '{"tool": "Solver", "arguments": {"command": "print(1)"}}', "call", "Solver",
     {"command": "print(1)"}),
    ("a fence with no JSON", FENCED_CODE, "invalid", None, "no JSON object"),
    ("a fence with prose and no JSON", "Let me compute:\n" + FENCED_CODE + "\nthen answer.", "invalid", None,
     "no JSON object"),
    ("two fenced actions", F + "json\n" + OCR + "\n" + F + "\n" + F + "json\n" + OCR + "\n" + F, "invalid", None,
     "several actions"),
    ("two actions, one of them fenced inside the other's string",
     SOLVER_FENCED + " " + SOLVER_FENCED, "invalid", None, "several actions"),
    ("fenced unreadable object", F + "python\n{'tool': 'Calculator', 'arguments': {'expression': {1, 2}}}\n" + F,
     "invalid", None, "set"),
    ("unclosed object around a fenced command",
     '{"tool": "Solver", "arguments": {"command": "' + F + "python\\nd = {'a': 1}\\n" + F + '"}', "invalid", None,
     "no JSON object"),
    ("only backticks", F * 5, "invalid", None, "no JSON object"),
]


def _outcome(action: protocol.Action) -> tuple[str, str | None, Any]:
    if action.kind == "call":
        return action.kind, action.tool, action.arguments
    if action.kind == "final":
        return action.kind, None, action.value
    return action.kind, None, action.error


@pytest.mark.parametrize(("reply", "kind", "tool", "expected"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_fences_in_replies(reply: str, kind: str, tool: str | None, expected: Any) -> None:
    got_kind, got_tool, got = _outcome(protocol.parse_reply(reply))
    assert (got_kind, got_tool) == (kind, tool), got
    if kind == "invalid":
        assert expected in got
    else:
        assert got == expected


@pytest.mark.parametrize("reply", [
    F * 33_000,                                        # nothing but fences
    (F + "{") * 25_000,                                # fences and unclosed objects
    ('{"a": "' + F + '"} ') * 8_000,                   # many objects with fences in their strings
    (F + 'json\n{"a": 1}\n' + F + "\n") * 5_000,       # many fenced objects, none an action
    '{"tool": "Solver", "arguments": {"command": "' + F * 30_000 + '"}}',  # one long fenced-looking string
    '"' + (F + OCR) * 1_500,                           # a stray quote mark before many fenced actions
])
def test_hostile_fences_are_invalid_steps_or_actions_quickly(reply: str) -> None:
    started = time.perf_counter()
    action = protocol.parse_reply(reply)
    assert time.perf_counter() - started < 5.0
    assert isinstance(action, protocol.Action) and action.kind in ("invalid", "call")


def _round(reply: str, runtime: ToolRuntime) -> dict[str, Any]:
    state = protocol.new_state(1)
    entry, _ = protocol.round_step({"gt_steps_flat_json": "[]"}, reply, state, [Image.new("RGB", (16, 16), "white")],
                                   runtime, 8)
    json.dumps(state, ensure_ascii=False).encode("utf-8")
    return entry


def _call(tool: str, command: str) -> str:
    return json.dumps({"thought": "t", "tool": tool, "arguments": {"command": command}})


@pytest.mark.parametrize(("tool", "code"), [
    ("Solver", "x = symbols('x')\nprint(solve(x**2 - 5*x + 6, x))"),
    ("Solver", "def solution():\n    return sympy.integrate(sympy.Symbol('t'), (sympy.Symbol('t'), 0, 2))"),
    ("CodePlotter", "import matplotlib.pyplot as plt\nplt.figure(figsize=(3, 2))\nplt.bar([1, 2], [3, 1])"),
])
def test_a_fenced_command_runs_like_the_unfenced_one(tool: str, code: str, runtime: ToolRuntime) -> None:
    """Parsed and executed end to end: the tool strips the fence (as GTA's Solver and Plot do), so the observation
    and the returned image are the unfenced command's."""
    reason = isolation.probe()
    if reason is not None:
        pytest.skip(f"no sandbox here: {reason}")
    runtime.clear_memo()
    plain = _round(_call(tool, code), runtime)
    fenced = _round(_call(tool, F + "python\n" + code + "\n" + F), runtime)
    assert plain["kind"] == fenced["kind"] == "call" and plain["status"] == fenced["status"] == "ok", \
        (plain["observation"], fenced["observation"])
    assert fenced["observation"] == plain["observation"]
    assert (fenced["returned_image"] is None) == (tool == "Solver")
    assert fenced["returned_image"] == plain["returned_image"]
