"""The model tools read their models as GTA's tools (the Agent-X tools' source) define them, on CPU with nothing
downloaded: a scripted detector stands in for the zero-shot pipeline, a loopback endpoint for the VLM.

LocateObjectByText is GTA's `TextToBbox`: `top1` gives the best box whatever its score, `top1=false` the boxes
scoring above 0.5, lines `(x1, y1, x2, y2), score NN` with the score x 100, `No object found.` when there is none;
ObjectCounter counts the boxes above the same cut (agentlego's `CountGivenObject`).  RegionDescriber asks GTA's
question about the crop; SceneDescriber asks for the brief description the metadata defines."""

from __future__ import annotations

from typing import Any

import pytest
from PIL import Image

from lmms_agentic.adapters.agentic.tool_io import ToolInfrastructureError
from lmms_agentic.judges.testing import ScriptedJudgeServer, ScriptedReply
from lmms_agentic.tasks.agentx.tools.model_tools import ModelTools


class ScriptedDetector:
    """The zero-shot pipeline's call, answering fixed (score, box) detections; records the threshold it got."""

    def __init__(self, found: list[tuple[float, tuple[float, float, float, float]]]) -> None:
        self.found = found
        self.thresholds: list[float] = []

    def __call__(self, image: Image.Image, *, candidate_labels: list[str], threshold: float) -> list[dict[str, Any]]:
        self.thresholds.append(threshold)
        return [{"score": score, "label": candidate_labels[0],
                 "box": {"xmin": box[0], "ymin": box[1], "xmax": box[2], "ymax": box[3]}}
                for score, box in self.found if score >= threshold]


def tools_with(found: list[tuple[float, tuple[float, float, float, float]]],
               environ: dict[str, str] | None = None) -> ModelTools:
    tools = ModelTools({"LMMS_AGENTIC_AGENTX_DETECTOR": "scripted", **(environ or {})})
    tools._detector = ScriptedDetector(found)
    return tools


IMAGE = Image.new("RGB", (64, 48), "white")
LOW_AND_HIGH = [(0.31, (1.2, 2.0, 30.6, 40.4)), (0.92, (10.0, 5.0, 20.0, 15.0)), (0.55, (3.0, 3.0, 9.0, 9.0))]
ONLY_LOW = [(0.31, (1.2, 2.0, 30.6, 40.4)), (0.12, (0.0, 0.0, 5.0, 5.0))]

# (case, detections, arguments, environment, observation)
LOCATE: list[tuple[str, Any, dict[str, Any], dict[str, str], str]] = [
    ("top1: the best box, score x 100", LOW_AND_HIGH, {"text": "cat"}, {}, "(10, 5, 20, 15), score 92"),
    ("top1 ignores the threshold", ONLY_LOW, {"text": "cat", "top1": True}, {}, "(1, 2, 31, 40), score 31"),
    ("all: the boxes above 0.5, best first", LOW_AND_HIGH, {"text": "cat", "top1": False}, {},
     "(10, 5, 20, 15), score 92\n(3, 3, 9, 9), score 55"),
    ("all: none above 0.5", ONLY_LOW, {"text": "cat", "top1": False}, {}, "No object found."),
    ("all: a configured threshold", ONLY_LOW, {"text": "cat", "top1": False},
     {"LMMS_AGENTIC_AGENTX_DETECTOR_THRESHOLD": "0.1"}, "(1, 2, 31, 40), score 31\n(0, 0, 5, 5), score 12"),
    ("nothing detected", [], {"text": "cat"}, {}, "No object found."),
]


@pytest.mark.parametrize(("case", "found", "arguments", "environ", "observation"), LOCATE,
                         ids=[row[0] for row in LOCATE])
def test_locate_object_by_text_as_gta(case: str, found: Any, arguments: dict[str, Any], environ: dict[str, str],
                                      observation: str) -> None:
    tools = tools_with(found, environ)
    assert tools.run("LocateObjectByText", arguments, {"image": IMAGE}).text == observation, case
    assert tools._detector.thresholds == [0.0]  # every box comes back; the tool applies GTA's rule


@pytest.mark.parametrize(("found", "environ", "count"), [
    (LOW_AND_HIGH, {}, "2"),                                                      # scores > 0.5
    (ONLY_LOW, {}, "0"),
    ([(0.5, (0.0, 0.0, 4.0, 4.0))], {}, "0"),                                     # strictly above, as GTA
    (ONLY_LOW, {"LMMS_AGENTIC_AGENTX_DETECTOR_THRESHOLD": "0.1"}, "2"),
    ([], {}, "0"),
])
def test_object_counter_counts_boxes_above_the_threshold(found: Any, environ: dict[str, str], count: str) -> None:
    assert tools_with(found, environ).run("ObjectCounter", {"text": "cat"}, {"image": IMAGE}).text == count


@pytest.mark.parametrize("value", ["high", "1.5", "-0.1", "nan"])
def test_a_bad_threshold_is_named_before_any_call(value: str) -> None:
    tools = tools_with(LOW_AND_HIGH, {"LMMS_AGENTIC_AGENTX_DETECTOR_THRESHOLD": value})
    assert "LMMS_AGENTIC_AGENTX_DETECTOR_THRESHOLD" in str(tools.missing("ObjectCounter"))
    with pytest.raises(ToolInfrastructureError, match="DETECTOR_THRESHOLD"):
        tools.run("LocateObjectByText", {"text": "cat", "top1": False}, {"image": IMAGE})


# (tool, arguments, the question the VLM is asked, the size of the image it is sent)
DESCRIBERS: list[tuple[str, dict[str, Any], str, tuple[int, int]]] = [
    ("RegionDescriber", {"bbox": "(10, 5, 30, 25)", "attribute": "color"},
     "Describe color on the image in detail", (20, 20)),  # GTA's question, about the crop
    ("RegionDescriber", {"bbox": "[0, 0, 64, 48]", "attribute": "the texture of the wall"},
     "Describe the texture of the wall on the image in detail", (63, 47)),  # clipped to the image
    ("SceneDescriber", {}, "Describe this image briefly in one or two sentences.", (64, 48)),  # "brief", as defined
]


@pytest.mark.parametrize(("tool", "arguments", "question", "size"), DESCRIBERS)
def test_describers_ask_the_defined_question(tool: str, arguments: dict[str, Any], question: str,
                                             size: tuple[int, int]) -> None:
    import base64
    import io

    with ScriptedJudgeServer(lambda call: ScriptedReply("red")) as server:
        tools = ModelTools({"LMMS_AGENTIC_AGENTX_VLM_BASE_URL": server.base_url,
                            "LMMS_AGENTIC_AGENTX_VLM_MODEL": "vlm-test"})
        assert tools.run(tool, arguments, {"image": IMAGE}).text == "red"
        (call,) = server.calls
    image_part, text_part = call.body["messages"][0]["content"]
    assert text_part == {"type": "text", "text": question}
    png = base64.b64decode(image_part["image_url"]["url"].split(",", 1)[1])
    assert Image.open(io.BytesIO(png)).size == size
