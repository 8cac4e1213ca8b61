"""Scripted model policies for `agentx_tools` (the `agentic_scripted` model's `policy=script`): replies built from
the mini split's gold traces, and the misbehaving policies (bad arguments, loops, never finishing)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lmms_agentic
from lmms_agentic.adapters.agentic.tool_runtime import ToolRuntime
from lmms_agentic.tasks.agentx.tools import hooks
from lmms_agentic.tasks.agentx.tools.catalogue import catalogue

MINI = Path(lmms_agentic.tasks_dir()) / "agentx" / "data" / "mini"
KWARGS = {"max_steps": 4, "video_mode": "frames", "n_frames": 8}
FILLERS = {"text": "red block", "bbox": "(2, 2, 30, 30)", "attribute": "color", "position": "top-left",
           "keywords": "a painting", "instruction": "make it a painting", "query": "search", "command": "print(1)"}


def mini_records() -> dict[str, dict[str, Any]]:
    return {key: value[0] for key, value in json.loads((MINI / "data.json").read_text()).items()}


def gold_steps(record: dict[str, Any]) -> list[dict[str, Any]]:
    steps = record["reasoning_steps"]
    return steps[0] if steps and isinstance(steps[0], list) else steps


def call(tool: str, arguments: dict[str, Any], thought: str = "") -> str:
    return json.dumps({"thought": thought, "tool": tool, "arguments": arguments})


def final(value: str, justification: str = "") -> str:
    return json.dumps({"thought": "done", "final_answer": {"value": value, "justification": justification}})


def gold_arguments(tool: str, raw: object) -> dict[str, Any]:
    """The arguments a careful model would pass for a gold step's free-text input."""
    spec = catalogue()[tool]
    text = "" if raw is None else str(raw)
    parts = [text] if len(spec.inputs) == 1 else [p.strip() for p in text.split(",", len(spec.inputs) - 1)]
    arguments: dict[str, Any] = {}
    for index, arg in enumerate(spec.inputs):
        given = parts[index] if index < len(parts) and parts[index] else None
        if arg.type == "image":
            arguments[arg.name] = "image_1"
        elif given is not None and arg.type == "text":
            arguments[arg.name] = given
        elif not arg.optional:
            arguments[arg.name] = FILLERS.get(arg.name, "x")
    return arguments


def gold_script(records: dict[str, dict[str, Any]] | None = None) -> dict[str, list[str]]:
    """Per task: each gold step as a call, then the gold final answer."""
    script = {}
    for key, record in (records or mini_records()).items():
        replies = [call(s["tool"], gold_arguments(s["tool"], s.get("input")), s.get("thought", ""))
                   for s in gold_steps(record)]
        answer = record["final_answer"]
        script[key] = [*replies, final(answer.get("value", ""), answer.get("justification", ""))]
    return script


def write(folder: Path, script: dict[str, list[str]], name: str = "script.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(script))
    return path


def play(doc: dict[str, Any], replies: list[str], runtime: ToolRuntime) -> dict[str, Any]:
    """lmms-eval's loop for one document, in miniature: reply, doc_to_text, until terminal or the step limit (the
    last reply repeats); the scored record."""
    outputs: list[str] = []
    info = None
    for round_idx in range(1, KWARGS["max_steps"] + 1):
        outputs.append(replies[min(round_idx - 1, len(replies) - 1)])
        _, _, terminal, updated, info = hooks.doc_to_text(doc, KWARGS, previous_output=outputs, round_idx=round_idx,
                                                          previous_round_info=info, runtime=runtime)
        if terminal:
            return hooks.record(doc, list(updated), judge=False, kwargs=KWARGS)
    raise AssertionError("the task must end at its step limit")
