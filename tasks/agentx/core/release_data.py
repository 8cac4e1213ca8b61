"""Agent-X release data: the 14-tool catalogue, the legacy tool aliases, the 222
generative task ids, the closed-source instruction template and the GPT format block.

These are reproduced verbatim from the release; tests pin every verbatim string against
SHA-256 digests (tests/agentx/test_release_data.py).  Nothing here does I/O at import time: the catalogue
(`toolmeta.json`, next to this module, the released file with its key order) is read on first use and cached.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

TOOLMETA_PATH = Path(__file__).resolve().parent / "toolmeta.json"
EXPORT_INLINED_FILES = {"_toolmeta_text": "toolmeta.json"}
"""Data files next to this module that an exported task folder carries with it (the function that reads each)."""

# The keys of toolmeta.json, in file order (a test checks that they agree).  The notebooks' set of allowed names.
TOOL_NAMES: tuple[str, ...] = (
    "Calculator", "OCR", "ObjectCounter", "SceneDescriber", "WebSearch", "RegionDescriber", "LocateObjectByText",
    "CodePlotter", "MathOCR", "Solver", "DrawBoundingBox", "OverlayText", "ImageGenerator", "ImageStylization",
)

# GTA / AgentLego names -> Agent-X names (normalised in GT, dataset.json and model output).
LEGACY_ALIASES: dict[str, str] = {
    "ImageDescription": "SceneDescriber",
    "CountGivenObject": "ObjectCounter",
    "DrawBox": "DrawBoundingBox",
    "DetectGivenObject": "LocateObjectByText",
    "TextToBbox": "LocateObjectByText",
    "RegionAttributeDescription": "RegionDescriber",
    "Plot": "CodePlotter",
    "GoogleSearch": "WebSearch",
    "TextToImage": "ImageGenerator",
    "AddText": "OverlayText",
}

# data.json keys of the generative (image-output) tasks, from analysis/metrics.ipynb cell 1; as key strings.
# fmt: off
_GENERATIVE_INTS = (
    1, 8, 10, 12, 24, 30, 35, 44, 46, 50, 53, 56, 57, 60, 61, 63, 65, 67, 69, 70, 75, 78, 92, 93, 94, 97, 98, 101,
    103, 106, 107, 113, 115, 117, 119, 121, 122, 125, 129, 132, 134, 135, 139, 146, 147, 148, 159, 162, 164, 166,
    168, 170, 174, 185, 196, 198, 215, 217, 221, 223, 231, 232, 233, 234, 235, 244, 245, 246, 261, 274, 277, 278,
    284, 293, 294, 303, 304, 311, 319, 332, 335, 336, 338, 339, 341, 351, 358, 359, 362, 363, 364, 365, 368, 371,
    374, 382, 389, 394, 399, 407, 408, 412, 413, 414, 418, 419, 424, 425, 430, 436, 442, 443, 445, 447, 448, 450,
    451, 463, 467, 468, 472, 473, 476, 481, 483, 484, 485, 487, 491, 495, 497, 500, 508, 509, 515, 516, 521, 526,
    530, 533, 539, 546, 551, 552, 553, 556, 560, 563, 567, 571, 572, 582, 584, 586, 588, 595, 596, 600, 604, 605,
    614, 615, 620, 623, 624, 640, 643, 644, 645, 646, 647, 650, 651, 652, 655, 660, 664, 677, 679, 683, 694, 697,
    698, 701, 704, 706, 712, 714, 716, 728, 731, 739, 741, 742, 749, 752, 755, 756, 758, 759, 761, 764, 766, 768,
    775, 776, 777, 788, 789, 796, 798, 799, 800, 805, 806, 816, 817, 818, 819, 820, 822, 826,
)
# fmt: on
GENERATIVE_IDS: frozenset[str] = frozenset(str(key) for key in _GENERATIVE_INTS)
# Known mismatches between the list and the queries of the release (README "Generative ids"): kept as they are, the
# list is what reproduces the published Goal_acc / Goal_acc* columns.
LISTED_TEXT_QUESTIONS: frozenset[str] = frozenset({"336", "553", "584", "605", "615", "820"})
"""In the generative list, but the query asks a text question (their Goal_acc is never judged)."""
UNLISTED_BOX_QUESTIONS: frozenset[str] = frozenset({"43", "167", "578", "619", "732", "781", "803", "827"})
"""Examples of ids NOT in the list whose query asks for a drawn box (an image output), judged for Goal_acc."""

# The instruction of the closed-source scripts (GPT-4o, o4-mini, Gemini).  Note the trailing space after "include:".
INSTRUCTION_TEMPLATE = "\n".join((
    "You are an intelligent multi-modal agent. You are provided with:",
    "- A text query",
    "- An image or video",
    "- A set of tools to assist with your reasoning with meta data of tools given as follows:",
    "{TOOLMETA_JSON}",
    "",
    "Your objective is to answer the query based on the given visual content by choosing and using the most "
    "appropriate tools. You must reason step-by-step. Each reasoning step should include: ",
    "{FORMAT_BLOCK}",
))

# The format block, GPT variant: starts with an empty line, four trailing spaces after the final_output
# justification, ends with "\n".  It contains braces, so it is substituted with str.replace, never str.format.
FORMAT_BLOCK_GPT = "\n".join((
    "",
    '    "reasoning_step_format": [',
    '        {"task": "Describe the sub-task being performed."},',
    '        {"tool_used": "Specify the tool selected and justify its choice."},',
    '        {"tool_output": "Provide the tool\'s output."},',
    '        {"thought": "Explain the significance of the output and how it contributes to answering the query."}',
    "    ]",
    "",
    '    "constraints": [',
    '        "Use tools only when necessary and justify their usage.",',
    '        "Ensure each step is self-contained and clearly explained.",',
    '        "Maintain transparency in decision-making and reasoning."',
    "    ]",
    "",
    '    "final_output": {',
    '        "final_answer": "Provide a clear and concise answer based on all previous steps", '
    '"justification": "Provide a justification for the final answer."    ',
    "    }",
    "",
    '    "The output should be a dictionary as shown in the following example":',
    "",
    "",
    '        { "query": "What is the man doing in the video?",',
    '        "reasoning_steps": [',
    "            {",
    '                "step": 1,',
    '                "task": "Identify key frames containing activity.",',
    '                "tool": "Scene Segmentation Tool",',
    '                "tool_output": "Frames 40-80 show continuous motion.",',
    '                "thought": "These frames likely contain the main action."',
    "            },",
    "            {",
    '                "step": 2,',
    '                "task": "Recognize the action happening in the selected frames.",',
    '                "tool_used": "Action Recognition Model",',
    '                "tool_output": "Man is playing guitar",',
    '                "thought": "The model confirms that the man is engaged in a musical activity."',
    "            }",
    "        ],",
    '        "final_answer": {"value": "The man is playing a guitar in the video.", "justification":  '
    '"Through scene segmentation and targeted action recognition, we isolated the most relevant frames and '
    "identified the man's activity with high confidence, leading to a precise and grounded answer.\"",
    "            }",
    "        }",
    "",
))


@cache
def _toolmeta_text() -> str:
    return TOOLMETA_PATH.read_text(encoding="utf-8")


def toolmeta() -> dict[str, Any]:
    """The 14-tool catalogue as released (file key order kept).  A fresh copy on every call: callers may mutate it."""
    catalogue: dict[str, Any] = json.loads(_toolmeta_text())
    return catalogue


@cache
def toolmeta_json() -> str:
    """`TOOLMETA_JSON`: `json.dumps` of the catalogue with default settings (one line, 6,818 characters)."""
    return json.dumps(toolmeta())


@cache
def instruction() -> str:
    """The model's system instruction: the closed-source template with the catalogue and the GPT block."""
    return INSTRUCTION_TEMPLATE.replace("{TOOLMETA_JSON}", toolmeta_json()).replace("{FORMAT_BLOCK}", FORMAT_BLOCK_GPT)


def system_message() -> str:
    """The system message byte for byte as the released GPT script sends it: ``instruction_prompt + '\\n\\n'``
    (the instruction, then two newlines).  Backends without a system role get exactly this text as the first part
    of the user turn; simple backends get it immediately followed by ``"Query: " + query``."""
    return instruction() + "\n\n"
