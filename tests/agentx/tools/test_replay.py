"""The `replay` backend: it answers only a call identical to a step of the task's gold trace (tool, every argument,
image) and gives one fixed text otherwise.  Table-driven: the leaks the security review found, the normalisation,
reuse, and the replay coverage of the mini split's gold script.

Each call is made twice: as the runtime makes it today (`replay(doc, tool, arguments, used)`, images read from the
bound arguments) and with the call's image indices and the task's input count (`images=`, `n_inputs=`)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import pytest

from lmms_agentic.tasks.agentx.tools import replay
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall, bind, catalogue
from lmms_agentic.tasks.agentx.tools.toolset import agentx_runtime, config_from_env

from .scripts import gold_arguments, gold_steps, mini_records

FORMS = ("runtime_today", "with_images")


@pytest.fixture(scope="module")
def mini() -> dict[str, dict[str, Any]]:
    os.environ.setdefault("LMMS_AGENTIC_DATA", "mini")
    from lmms_agentic.tasks.agentx import hooks as agentx_hooks

    return {row["id"]: dict(row) for row in agentx_hooks.all_docs()}


def doc_of(steps: list[dict[str, Any]], answer: str = "the answer", n_images: int = 1) -> dict[str, Any]:
    """A document as `tasks/agentx/hooks.py` makes it, with only the fields replay reads."""
    return {"id": "t", "media_type": "image", "media": [f"{i}.jpg" for i in range(n_images)],
            "gt_steps_flat_json": json.dumps(steps),
            "gt_final_answer_json": json.dumps({"value": answer, "justification": ""})}


def bound(tool: str, arguments: Mapping[str, Any], n_visuals: int, n_inputs: int) -> BoundCall:
    result = bind(tool, dict(arguments), n_visuals, n_inputs)
    assert isinstance(result, BoundCall), result
    return result


def replayed(doc: Mapping[str, Any], tool: str, arguments: Mapping[str, Any], form: str, n_visuals: int = 1,
             n_inputs: int = 1, used: tuple[int, ...] = ()) -> str | None:
    """The replayed text of one call, or None when replay has nothing for it."""
    call = bound(tool, arguments, n_visuals, n_inputs)
    if form == "runtime_today":
        found = replay.replay(doc, call.tool, call.arguments, used)
    else:
        found = replay.replay(doc, call.tool, call.arguments, used, images=call.images, n_inputs=n_inputs)
    return None if found is None else found[1]


STEP = {"step": 1, "task": "t", "thought": ""}
OCR_2 = doc_of([{**STEP, "tool": "OCR", "input": "image_2", "output": "text of the second image"}], n_images=2)
OCR_ANY = doc_of([{**STEP, "tool": "OCR", "input": "image", "output": "the sign"}])
REGION_PARTIAL = doc_of([{**STEP, "tool": "RegionDescriber", "input": "image", "output": "the answer"}])
NOT_TOOLS = doc_of([{**STEP, "tool": "Final Answer", "input": "image", "output": "the answer"},
                    {**STEP, "tool": "OCR, Calculator", "input": "image", "output": "two tools at once"}])

# (case, mini task or synthetic doc, tool, arguments, n_visuals, n_inputs): replay must answer nothing
LEAKS: list[tuple[str, str | dict[str, Any], str, dict[str, Any], int, int]] = [
    ("purple elephant, gold step gives only the image", "1", "ObjectCounter",
     {"image": "image_1", "text": "purple elephant"}, 1, 1),
    ("the final answer verbatim, from OCR on a tool-produced image", "6", "OCR", {"image": "image_2"}, 2, 1),
    ("a gold step without a bbox and attribute; its output is the final answer", REGION_PARTIAL, "RegionDescriber",
     {"image": "image_1", "bbox": "(1, 2, 3, 4)", "attribute": "anything"}, 1, 1),
    ("a gold step without an instruction", "8", "ImageStylization",
     {"image": "image_1", "instruction": "make it a painting"}, 1, 1),
    ("an optional argument the gold step leaves at its default", "9", "WebSearch",
     {"query": "Springfield population", "k": 3}, 1, 1),
    ("another image than the one the gold step names", OCR_2, "OCR", {"image": "image_1"}, 2, 2),
    ("a tool-produced image", OCR_ANY, "OCR", {"image": "image_2"}, 2, 1),
    ("a gold step that is no single tool call", NOT_TOOLS, "OCR", {"image": "image_1"}, 1, 1),
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("case", "task", "tool", "arguments", "n_visuals", "n_inputs"), LEAKS,
                         ids=[row[0] for row in LEAKS])
def test_a_call_the_gold_trace_never_made_gets_nothing(mini: dict[str, Any], case: str, task: str | dict[str, Any],
                                                       tool: str, arguments: dict[str, Any], n_visuals: int,
                                                       n_inputs: int, form: str) -> None:
    doc = mini[task] if isinstance(task, str) else task
    assert replayed(doc, tool, arguments, form, n_visuals, n_inputs) is None, case


# (case, gold step tool, gold input, call arguments, replays?)
NORMALISED: list[tuple[str, str, Any, dict[str, Any], bool]] = [
    ("5.0 is 5", "Calculator", "5 - 3", {"expression": "5.0 - 3"}, True),
    ("a number argument", "OverlayText", "image, 2, top-left", {"image": "image_1", "text": "2.0",
                                                                 "position": "Top-Left"}, True),
    ("1,000 is 1000 as a whole value", "OverlayText", {"image": "image", "text": "1,000", "position": "top"},
     {"image": "image_1", "text": "1000", "position": "top"}, True),
    ("+ is commutative", "Calculator", "3 + 5", {"expression": "5+3"}, True),
    ("* is commutative", "Calculator", "2*4", {"expression": "4 * 2"}, True),
    ("nested + and *", "Calculator", "8*2+5*6", {"expression": "(6*5) + 2*8"}, True),
    ("- is not commutative", "Calculator", "5 - 3", {"expression": "3 - 5"}, False),
    ("/ is not commutative", "Calculator", "8 / 2", {"expression": "2 / 8"}, False),
    ("another operand", "Calculator", "3 + 5", {"expression": "3 + 6"}, False),
    ("a bbox in free text", "RegionDescriber", "image, (10, 20, 30, 40), color",
     {"image": "image_1", "bbox": "[10,20,30,40]", "attribute": "Color"}, True),
    ("a bbox as bare numbers", "RegionDescriber", "image, 10, 20, 30, 40, color",
     {"image": "image_1", "bbox": "10 20 30 40", "attribute": "color"}, True),
    ("another bbox", "RegionDescriber", "image, (10, 20, 30, 40), color",
     {"image": "image_1", "bbox": "(10, 20, 30, 41)", "attribute": "color"}, False),
    ("case, spaces and quotes", "WebSearch", "Springfield population",
     {"query": "'springfield  POPULATION'"}, True),
    ("a structured gold input", "LocateObjectByText", {"image": "image_1", "text": "red block", "top1": "false"},
     {"image": "image_1", "text": "Red block", "top1": False}, True),
    ("a text that only starts like the gold one", "ObjectCounter", "image, red block",
     {"image": "image_1", "text": "red block or purple elephant"}, False),
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("case", "tool", "gold_input", "arguments", "replays"), NORMALISED,
                         ids=[row[0] for row in NORMALISED])
def test_a_call_written_differently_still_replays(case: str, tool: str, gold_input: Any, arguments: dict[str, Any],
                                                  replays: bool, form: str) -> None:
    doc = doc_of([{**STEP, "tool": tool, "input": gold_input, "output": "recorded"}])
    assert replayed(doc, tool, arguments, form) == ("recorded" if replays else None), case


@pytest.mark.parametrize("form", FORMS)
def test_exact_gold_call_gets_its_output_even_when_it_is_the_answer(mini: dict[str, Any], form: str) -> None:
    # task "7": ObjectCounter(image, red block) -> "4", and the answer is "4": the model made the gold call
    assert replayed(mini["7"], "ObjectCounter", {"image": "image_1", "text": "Red Block"}, form) == "4"
    assert replayed(mini["7"], "ObjectCounter", {"image": "image_1", "text": "purple elephant"}, form) is None
    assert replayed(mini["6"], "OCR", {"image": "image_1"}, form) == "EXIT 12"
    assert replayed(OCR_2, "OCR", {"image": "image_2"}, form, 2, 2) == "text of the second image"


@pytest.mark.parametrize("form", FORMS)
def test_a_gold_step_replays_once(form: str) -> None:
    doc = doc_of([{**STEP, "tool": "OCR", "input": "image", "output": "first"},
                  {**STEP, "tool": "OCR", "input": "image", "output": "second"}])
    call = bound("OCR", {"image": "image_1"}, 1, 1)
    extra: dict[str, Any] = {} if form == "runtime_today" else {"images": call.images, "n_inputs": 1}
    assert replay.replay(doc, "OCR", call.arguments, [], **extra) == (0, "first")
    assert replay.replay(doc, "OCR", call.arguments, [0], **extra) == (1, "second")
    assert replay.replay(doc, "OCR", call.arguments, [0, 1], **extra) is None


def test_one_text_for_every_unmatched_call(mini: dict[str, Any]) -> None:
    """Task "9" uses WebSearch but not MathOCR: both misses read the same, apart from the (model's own) tool name."""
    runtime = agentx_runtime(config_from_env({"LMMS_AGENTIC_AGENTX_TOOLS": "*=replay"}), sandbox_warm=0)
    from lmms_agentic.tasks.agentx.tools.hooks import input_visuals

    visuals = input_visuals(mini["9"])
    present = runtime.execute(mini["9"], bound("WebSearch", {"query": "weather today"}, 1, 1), visuals)
    absent = runtime.execute(mini["9"], bound("MathOCR", {"image": "image_1"}, 1, 1), visuals)
    assert present.status == absent.status == "unavailable"
    assert present.text == ("WebSearch has no recorded output for this call "
                            "(replay answers only a call identical to a reference step).")
    assert absent.text == present.text.replace("WebSearch", "MathOCR") == replay.unavailable("MathOCR")


MINI_FLOOR = 12
"""Gold steps of the mini split (18) that replay when the gold script makes every call on the replay backend: all but
the 4 ObjectCounter steps and the ImageStylization and DrawBoundingBox steps whose gold input gives only the image
(before the exact-match rule: 18 of 18)."""


def test_the_mini_gold_script_still_replays(mini: dict[str, Any]) -> None:
    from lmms_agentic.tasks.agentx.tools.hooks import input_visuals

    hits, total = 0, 0
    missed: list[tuple[str, dict[str, Any]]] = []
    for key, record in mini_records().items():
        n_inputs = len(input_visuals(mini[key]))
        used: list[int] = []
        for step in gold_steps(record):
            call = bound(step["tool"], gold_arguments(step["tool"], step.get("input")), n_inputs, n_inputs)
            found = replay.replay(mini[key], call.tool, call.arguments, used, images=call.images, n_inputs=n_inputs)
            total += 1
            if found is None:
                missed.append((step["tool"], step))
                continue
            hits += 1
            used.append(found[0])
            assert found[1] == step["output"]
    assert total == 18 and hits >= MINI_FLOOR, missed
    # every miss is a step whose input leaves a required argument open, which no call can match
    assert all(replay.gold_call(catalogue()[tool], step.get("input")) is None for tool, step in missed), missed
