"""RoboVista's failure analysis (paper §V) for ``python -m lmms_agentic errors``.

The paper labels the reasoning chain of every prediction with Qwen3-VL-32B-Thinking (then checks the labels by
hand), separating perception failures — *misidentification* of an object's identity, state or location — from
reasoning failures; for Qwen2.5-VL-7B 143 of 474 predictions (30.2%) are misidentifications and 36.5% are correct.
So every prediction is analysed (``population="all"``): correct ones are labelled ``correct`` without a judge call
(by the headline's parser, ``correct_parity``), the others go to a multimodal judge with the images as the model saw
them, the question, the options, the gold and chosen answers, the dataset's **ground-truth human reasoning** (the
record's ``reasoning``) and the model's full reply (fenced as data).  Shares are over all labelled predictions, like
the paper's 143/474.

The paper gives only the perception/reasoning split and the misidentification category; the other categories, their
definitions and the judge prompt were written for this project [ASSUMPTION], versioned as ``TEMPLATE_VERSION``.
Letter-only replies (the zero-shot protocol) carry no reasoning and can only be labelled ``No Rationale``: analyse a
reasoning protocol (``robovista_cot``, the paper's reasoning chains).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from PIL import Image

from lmms_agentic.adapters.core.schema import LETTERS
from lmms_agentic.adapters.reference import load_reference, rows_for
from lmms_agentic.judges.error_modes import ANY_DOMAIN, ErrorModes, Item, JudgeInput, Mode, mode_template
from lmms_agentic.tasks.robovista import hooks
from lmms_agentic.tasks.robovista.core.records import BENCHMARK

TEMPLATE_VERSION = "1"
PAPER_MODEL = "Qwen 2.5 VL-7B"

MODES: tuple[Mode, ...] = (
    Mode("Misidentification", "Perception failure: the reply misperceives what the images show — an object's "
         "identity (wrong object, part, tool or material), its state (open/closed, grasped or not, full, damaged, "
         "progress of the task) or its location (position, orientation, spatial relation, which arm or gripper) — "
         "as the ground-truth reasoning shows.", "perception"),
    Mode("Reasoning Error", "Reasoning failure: what the reply says it sees agrees with the images and the "
         "ground-truth reasoning, but the inference from it is wrong (task logic, physics, cause and effect, order of "
         "steps, planning or recovery choice, or a robot-specific fact).", "reasoning"),
    Mode("Answer Inconsistency", "The reasoning supports the correct option, but the final answer names another "
         "option or none.", "other"),
    Mode("No Rationale", "The reply gives no reasoning (e.g. only a letter), so the failure cannot be attributed.",
         "other"),
)

INTRO = (
    "You analyse why a vision-language model answered a robotics multiple-choice question from the RoboVista "
    "benchmark incorrectly. You see the images the model saw (attached, in order), the question and options, the "
    "correct answer, the option the model chose, the ground-truth reasoning written by a human expert, and the "
    "model's full reply including its reasoning. Compare the model's reasoning with the ground-truth reasoning and "
    "the images: decide whether the failure starts in perception (misidentifying an object's identity, state or "
    "location) or in reasoning from a correct perception, and assign the single category below that fits best."
)
USER = """Domain: {{domain}}
Robot task: {{task}}
Ability: {{ability}}
Visual input: {{visual_input}}

Question:
{{question}}

Options:
{{options}}

Correct answer: {{gold}}
Option the model chose: {{chosen}}

Ground-truth reasoning (human expert):
{{reasoning}}

The model's full reply (reasoning and answer):
{{response}}"""
TRUSTED = ("domain", "task", "ability", "visual_input", "question", "options", "gold", "chosen", "reasoning")
TEMPLATE = mode_template("robovista/failure_mode", TEMPLATE_VERSION, INTRO, MODES, USER, TRUSTED)


def build(item: Item, doc: Mapping[str, Any], kwargs: Mapping[str, Any], video_frames: int | None) -> JudgeInput:
    """The judge request for one incorrect prediction: the item's own images (never an ICL example's), preprocessed
    as in the run (``image_preprocess``)."""
    settings = {"protocol": "zero_shot", "system_prompt": "", "suffix": "", "confidence_request": "",
                "image_preprocess": kwargs.get("image_preprocess", "paper")}
    images = [v for v in hooks.doc_to_visual(doc, settings) if isinstance(v, Image.Image)]
    meta = json.loads(doc["metadata_json"])
    letter = {LETTERS[i]: text for i, text in enumerate(doc["options"]) if text}
    pred = item.pred
    ability = " / ".join(str(meta[k]) for k in ("ability_type", "ability_subcategory") if meta.get(k))
    values = {
        "domain": doc["domain"],
        "task": str(meta.get("task") or "unknown"),
        "ability": ability or "unknown",
        "visual_input": f"{len(images)} image(s), attached in the order the model saw them",
        "question": doc["question"],
        "options": "\n".join(f"{k}. {v}" for k, v in letter.items()),
        "gold": f"{doc['answer']}. {letter.get(doc['answer'], '')}",
        "chosen": f"{pred}. {letter.get(pred, '')}" if pred else "no option could be read from the reply (no answer)",
        "reasoning": str(meta.get("reasoning") or "(not given)"),
        "response": item.reply,
    }
    return JudgeInput(TEMPLATE, values, tuple(images))


def _reference() -> dict[tuple[str, str], float]:
    rows = rows_for(load_reference(BENCHMARK), model=PAPER_MODEL, variant="error_study")
    wanted = {"misidentification_share": ("all", "misidentification"), "parity_acc": ("all", "correct")}
    return {wanted[row.metric]: row.value for row in rows if row.metric in wanted}


ERROR_MODES = ErrorModes(
    benchmark=BENCHMARK,
    title="RoboVista",
    population="all",
    modes={ANY_DOMAIN: MODES},
    build=build,
    reference=_reference(),
    reference_note="Qwen2.5-VL-7B (reasoning chains; Qwen3-VL-32B-Thinking labels, hand-corrected): "
                   "misidentification 143/474 = 30.2%, correct 36.5%; Qwen3-235B-A22B: misidentification 20.3%, "
                   "correct 48.5%.",
    notes=("every prediction is analysed; correct ones (the headline parser's) are labelled without a judge call",
           "categories beyond misidentification, their definitions and the judge prompt written for this project, "
           f"template version {TEMPLATE_VERSION} [assumption]; letter-only replies can only be No Rationale: analyse "
           "robovista_cot"),
)
