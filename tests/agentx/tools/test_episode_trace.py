"""The executed episode is scored as an object (`trace.trace_from_object`), never through JSON text: a `<think>`
marker in a thought, an observation or the answer reaches the steps, the metrics and the judge as text (the old
`parse_trace(json.dumps(...))` route removed `<think>` and lost the whole trace at a `</think>`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lmms_agentic.tasks.agentx.core.release_data import LEGACY_ALIASES, TOOL_NAMES
from lmms_agentic.tasks.agentx.core.trace import parse_trace, trace_from_object
from lmms_agentic.tasks.agentx.tools import hooks, protocol

GOLD_ANSWER = "The blue line"


def _round(number: int, tool: str, thought: str, observation: str) -> dict[str, Any]:
    return {"round": number, "reply": "{}", "kind": "call", "thought": thought, "tool": tool,
            "arguments": {"image": "image_1"}, "valid": True, "status": "ok", "backend": "replay", "seconds": 0.0,
            "image": None, "returned_image": None, "gold_step": None, "cached": False, "observation": observation}


def _episode(output: str = "A line chart.", thought: str = "Look.", answer: str = GOLD_ANSWER,
             justification: str = "It ends highest.") -> str:
    """Task "0"'s gold tools (SceneDescriber, OCR) as an executed episode, stored as lmms-eval stores it."""
    state = protocol.new_state(1, 4)
    state["rounds"] = [_round(1, "SceneDescriber", thought, output), _round(2, "OCR", "Read the title.", "Growth")]
    state["rounds"].append({**_round(3, "", "done", "(final answer received)"), "kind": "final", "tool": None})
    state.update(finished=True, final_answer={"value": answer, "justification": justification})
    return protocol.episode_payload(state)


def _judged(docs: dict[str, Any], monkeypatch: pytest.MonkeyPatch, payload: str) -> tuple[dict[str, Any], Any]:
    seen: list[Any] = []
    monkeypatch.setattr(hooks, "judge_doc", lambda doc, prediction: seen.append(prediction) or {})
    monkeypatch.setattr(hooks, "style_for", lambda config: "scripted")
    sample = hooks.record(docs["0"], [payload], judge=True)
    assert len(seen) == 1
    return sample, seen[0]


@pytest.mark.parametrize("marker", ["<think>", "</think>", "<think>hidden</think> shown", "x <THINK > y"])
def test_a_think_marker_in_a_tool_output_reaches_the_judge_and_the_metrics(
        docs: dict[str, Any], monkeypatch: pytest.MonkeyPatch, marker: str) -> None:
    output = f"before {marker} after"
    sample, prediction = _judged(docs, monkeypatch, _episode(output=output))
    assert sample["parse_failure"] is None and sample["format_ok"] and sample["parse_path"] == "episode"
    assert sample["n_steps"] == 2 and sample["toolset_f1_prog"] == 1.0 and sample["exact_match"] is True
    assert prediction["reasoning_steps"][0]["tool_output"] == output
    assert sample["prediction"] == prediction


@pytest.mark.parametrize("field", ["thought", "answer", "justification"])
def test_a_think_close_marker_elsewhere_keeps_the_trace(docs: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
                                                        field: str) -> None:
    text = "reasoning</think>rest"
    sample, prediction = _judged(docs, monkeypatch, _episode(**{field: text}))
    assert sample["parse_failure"] is None and sample["n_steps"] == 2
    shown = {"thought": prediction["reasoning_steps"][0]["thought"],
             "answer": prediction["final_answer"]["value"],
             "justification": prediction["final_answer"]["justification"]}
    assert shown[field] == text


def test_the_direct_mapping_agrees_with_the_text_route_on_marker_free_episodes(docs: dict[str, Any]) -> None:
    for payload in (_episode(), _episode(output="温度 25°C 🌡️ مرحبا e\u0301 ```json\n{\"a\": 1}\n```"),
                    _episode(output="y" * 4000 + " [truncated]", thought="z" * 100_000), _episode(answer="")):
        trace = hooks.executed_trace(protocol.state_of(payload) or {})
        direct = trace_from_object(trace, TOOL_NAMES, LEGACY_ALIASES)
        text = parse_trace(json.dumps(trace, ensure_ascii=False), TOOL_NAMES, LEGACY_ALIASES)
        assert (direct.steps, direct.final_answer, direct.justification, direct.issues, direct.format_ok,
                direct.data) == (text.steps, text.final_answer, text.justification, text.issues, text.format_ok,
                                 text.data)
        assert (direct.parse_path, text.parse_path) == ("object", "json")


def test_the_direct_mapping_normalises_as_the_parser_does() -> None:
    trace = {"reasoning_steps": [{"tool_used": "OCR", "tool_input": {"a": float("nan"), "b": (1, 2)},
                                  "tool_output": "x"}], "final_answer": {"value": 3, "justification": None}}
    read = trace_from_object(trace, TOOL_NAMES, LEGACY_ALIASES)
    assert read.data is not None and read.data["reasoning_steps"][0]["tool_input"] == {"a": "nan", "b": [1, 2]}
    assert (read.final_answer, read.failure) == ("3", None)
    deep = {"reasoning_steps": [{"tool_used": "OCR", "tool_input": json.loads("[" * 70 + "]" * 70)}],
            "final_answer": "a"}
    assert trace_from_object(deep, TOOL_NAMES, LEGACY_ALIASES).failure == "invalid_json"  # as parse_trace
