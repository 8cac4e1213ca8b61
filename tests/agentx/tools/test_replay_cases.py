"""Replay's hard cases: a correct call written differently from the gold step still replays, and a call on another
image than the gold step's does not.  Each row is one gold step (tool, recorded input) and one model call, bound as
the runtime binds it (`catalogue.bind`) and replayed with the call's image indices and the task's input count."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lmms_agentic.tasks.agentx.tools import replay
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall, bind


def replays(tool: str, gold_input: Any, arguments: dict[str, Any], media: list[str] | None = None,
            media_type: str = "image") -> bool:
    """Whether the call replays the one gold step of a task with these media files (several images make a
    "multi_image" task, as the release loader types it; a video is sampled to 8 frames)."""
    media = media or ["AgentX_1.jpg"]
    media_type = "multi_image" if media_type == "image" and len(media) > 1 else media_type
    n_inputs = 8 if media_type == "video" else len(media)
    doc = {"id": "t", "media_type": media_type, "media": media,
           "gt_steps_flat_json": json.dumps([{"step": 1, "task": "t", "tool": tool, "input": gold_input,
                                              "output": "recorded", "thought": ""}])}
    call = bind(tool, dict(arguments), n_inputs, n_inputs)
    assert isinstance(call, BoundCall), call
    found = replay.replay(doc, call.tool, call.arguments, [], images=call.images, n_inputs=n_inputs)
    return found is not None and found[1] == "recorded"


ONE = {"image": "image_1"}
BOX = {"image": "image_1", "bbox": "(10, 20, 30, 40)", "attribute": "color"}

# (case, tool, gold input, call arguments): the same call, written differently
SAME_CALL: list[tuple[str, str, Any, dict[str, Any]]] = [
    ("5.0 is 5 in an expression", "Calculator", "10/2", {"expression": "10.0 / 2"}),
    ("5.0 is 5 in a bbox", "DrawBoundingBox", "image, (10, 20, 30, 40)",
     {"image": "image_1", "bbox": "(10.0, 20.0, 30.00, 40)"}),
    ("an integer argument given as 5.0", "WebSearch", {"query": "springfield", "k": "5.0"}, {"query": "springfield",
                                                                                             "k": 5}),
    ("+ operands reordered", "Calculator", "12 + 30 + 4", {"expression": "4 + (30 + 12)"}),
    ("* and + reordered, nested", "Calculator", "(2+3)*(4+5)", {"expression": "(5 + 4) * (3 + 2)"}),
    ("math.sqrt is sqrt", "Calculator", "sqrt(16) + 2", {"expression": "2 + math.sqrt(16)"}),
    ("max arguments reordered", "Calculator", "max(3, 9, 4)", {"expression": "max(9, 4, 3)"}),
    ("backticks around the expression", "Calculator", "8*2+5*6", {"expression": "`5*6 + 8*2`"}),
    ("× and ÷ as * and /", "Calculator", "8 × 2 ÷ 4", {"expression": "8*2/4"}),
    ("a bbox in free text", "RegionDescriber", "image, (10, 20, 30, 40), color", BOX),
    ("a bbox in free text, no image part", "RegionDescriber", "[10, 20, 30, 40], color", BOX),
    ("a bbox as bare numbers", "RegionDescriber", "image_1, 10, 20, 30, 40, color", BOX),
    ("free text name=value", "RegionDescriber", "image=image_1, bbox=(10, 20, 30, 40), attribute=color", BOX),
    ("free text name: value, any order", "RegionDescriber", "attribute: color, bbox: [10, 20, 30, 40], image: image",
     BOX),
    ("an object written as text", "RegionDescriber", '{"image": "image_1", "bbox": [10, 20, 30, 40], '
                                                     '"attribute": "Color"}', BOX),
    ("object keys in another case", "RegionDescriber", {"Image": "image_1", "BBox": "(10,20,30,40)",
                                                        "Attribute": "color"}, BOX),
    ("a one-argument tool's value by name", "Calculator", "expression: 3 + 5", {"expression": "5 + 3"}),
    ("position words are the GTA code", "OverlayText", "image, 2, top-left",
     {"image": "image_1", "text": "2", "position": "lt"}),
    ("position (x, y) written otherwise", "OverlayText", "image, hi, (100, 200)",
     {"image": "image_1", "text": "hi", "position": "x=100, y=200"}),
    ("a colour by name and by hex", "OverlayText", {"image": "image", "text": "2", "position": "mt",
                                                    "color": "#FF0000"},
     {"image": "image_1", "text": "2", "position": "mt", "color": "red"}),
    ("the default colour given", "OverlayText", "image, 2, mt", {"image": "image_1", "text": "2", "position": "mt",
                                                                 "color": "Red"}),
    ("fenced Solver code, unfenced gold", "Solver", "print(solve(x - 2, x))",
     {"command": "```python\nprint(solve(x - 2, x))\n```"}),
    ("unfenced Solver code, fenced gold", "Solver", "```python\nprint(solve(x - 2, x))\n```",
     {"command": "print(solve(x - 2, x))"}),
    ("fenced plot code with another tag", "CodePlotter", "```py\nplt.plot([1, 2])\n```",
     {"command": "```\nplt.plot([1, 2])\n```"}),
    ("the second image, by ordinal", "OCR", "the second image", {"image": "image_2"}),
    ("the second image, by file name", "OCR", "AgentX_8.jpg", {"image": "image_2"}),
    ("the named image in free text", "ObjectCounter", "<image 2>, red block", {"image": "image_2",
                                                                               "text": "Red block"}),
]


@pytest.mark.parametrize(("case", "tool", "gold_input", "arguments"), SAME_CALL, ids=[row[0] for row in SAME_CALL])
def test_the_gold_call_written_differently_replays(case: str, tool: str, gold_input: Any,
                                                   arguments: dict[str, Any]) -> None:
    assert replays(tool, gold_input, arguments, ["AgentX_7.jpg", "AgentX_8.jpg"]), case


# (case, tool, gold input, call arguments, media, media type): another call, which must not replay
OTHER_CALL: list[tuple[str, str, Any, dict[str, Any], list[str], str]] = [
    ("- is not commutative", "Calculator", "10 - 4", {"expression": "4 - 10"}, ["a.jpg"], "image"),
    ("other code inside the fence", "Solver", "print(solve(x - 2, x))",
     {"command": "```python\nprint(solve(x - 3, x))\n```"}, ["a.jpg"], "image"),
    ("** is not commutative", "Calculator", "2**3", {"expression": "3**2"}, ["a.jpg"], "image"),
    ("^ is XOR, not a power", "Calculator", "2^3", {"expression": "2**3"}, ["a.jpg"], "image"),
    ("a function's arguments keep their order", "Calculator", "pow(2, 3)", {"expression": "pow(3, 2)"}, ["a.jpg"],
     "image"),
    ("another bbox", "RegionDescriber", "image, (10, 20, 30, 40), color",
     {**BOX, "bbox": "(10, 20, 30, 41)"}, ["a.jpg"], "image"),
    ("another attribute", "RegionDescriber", "image, (10, 20, 30, 40), color", {**BOX, "attribute": "texture"},
     ["a.jpg"], "image"),
    ("another position", "OverlayText", "image, 2, top-left", {"image": "image_1", "text": "2", "position": "rt"},
     ["a.jpg"], "image"),
    ("another colour", "OverlayText", "image, 2, mt", {"image": "image_1", "text": "2", "position": "mt",
                                                       "color": "blue"}, ["a.jpg"], "image"),
    ("the second image by ordinal, the call on the first", "OCR", "the second image", ONE, ["a.jpg", "b.jpg"],
     "image"),
    ("the first image by ordinal, the call on the second", "OCR", "first image", {"image": "image_2"},
     ["a.jpg", "b.jpg"], "image"),
    ("the second image by file name, the call on the first", "OCR", "b.jpg", ONE, ["a.jpg", "B.JPG"], "image"),
    ("the second image by name in free text", "ObjectCounter", "image_2, red block",
     {"image": "image_1", "text": "red block"}, ["a.jpg", "b.jpg"], "image"),
    ("the second image by name in an object", "RegionDescriber", {**BOX, "image": "image_2"}, BOX,
     ["a.jpg", "b.jpg"], "image"),
    ("the second image by name: value", "RegionDescriber", "image: picture 2, bbox: (10, 20, 30, 40), "
                                                            "attribute: color", BOX, ["a.jpg", "b.jpg"], "image"),
]


@pytest.mark.parametrize(("case", "tool", "gold_input", "arguments", "media", "media_type"), OTHER_CALL,
                         ids=[row[0] for row in OTHER_CALL])
def test_another_call_does_not_replay(case: str, tool: str, gold_input: Any, arguments: dict[str, Any],
                                      media: list[str], media_type: str) -> None:
    assert not replays(tool, gold_input, arguments, media, media_type), case


@pytest.mark.parametrize(("gold_input", "image", "expected"), [
    ("the first frame", "image_3", True),   # a video's frames are not the sampled image_k: any sampled frame
    ("video.mp4", "image_5", True),         # a video's file names no frame
    ("frame 2", "image_7", True),
])
def test_video_frame_references_name_no_sampled_frame(gold_input: str, image: str, expected: bool) -> None:
    assert replays("OCR", gold_input, {"image": image}, ["video.mp4"], media_type="video") is expected


@pytest.mark.parametrize(("gold_input", "image", "expected"), [
    ("image_2", "image_2", True), ("image_2", "image_1", False), ("image", "image_2", True),
    ("image", "image_3", False),
])
def test_a_multi_image_task_without_the_callers_counts(gold_input: str, image: str, expected: bool) -> None:
    """`replay` called as before the runtime passed image indices: a multi-image task's inputs are its files."""
    doc = {"id": "t", "media_type": "multi_image", "media": ["a.jpg", "b.jpg"],
           "gt_steps_flat_json": json.dumps([{"tool": "OCR", "input": gold_input, "output": "recorded"}])}
    assert (replay.replay(doc, "OCR", {"image": image}, []) is not None) is expected


@pytest.mark.parametrize("code", ["```python\n  a = 1\n  print(a)\n```", "```py\nx = 2\n```", "```\nplain\n```",
                                  "no fence", "```python\nunclosed", "text ```sh\nls\n``` more", "``` ```"])
def test_replay_reads_fenced_code_as_the_sandbox_runs_it(code: str) -> None:
    from lmms_agentic.tasks.agentx.tools import sandbox_worker
    from lmms_agentic.tasks.agentx.tools.replay_values import fenced_code

    assert fenced_code(code).strip() == sandbox_worker._strip_fence(code)
