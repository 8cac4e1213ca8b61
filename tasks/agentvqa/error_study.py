"""AgentVQA's error-mode study (paper App. G.1, §4.5) for ``python -m lmms_agentic errors``.

For each incorrect prediction a multimodal judge gets the visual input (images in dataset order; a video as uniformly
sampled frames), the question, the action history the model saw, all options as the model saw them (coordinates in
the run's convention), the gold answer, the chosen option, the model's full reply (fenced as data) and the item's
metadata, and assigns the single most fitting mode of the item's domain.

Taxonomy: the five domains' mode names are the paper's (App. G.1).  The paper's definitions and its judge prompt
(App. M) are not in the paper's text: the definitions below and the prompt were written for this project from the
mode names and the paper's §4.5 discussion [ASSUMPTION], and are versioned as ``TEMPLATE_VERSION`` (part of every
judge cache key and logged result).  The paper's annotator was Gemini 3.1 Pro on Gemini 3.1 Pro's own errors, with 100
assignments hand-verified; its shares are the ``reference`` (from ``reference.csv``, variant ``error_analysis``).
Change a definition, the wording or the reply format -> bump ``TEMPLATE_VERSION``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from PIL import Image

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.core.schema import LETTERS
from lmms_agentic.adapters.data import fetch_folder, locate
from lmms_agentic.adapters.plugin_task import PluginMedia
from lmms_agentic.adapters.reference import load_reference, rows_for
from lmms_agentic.judges import PromptTemplate
from lmms_agentic.judges.error_modes import ErrorModes, Item, JudgeInput, Mode, mode_template
from lmms_agentic.tasks.agentvqa import hooks
from lmms_agentic.tasks.agentvqa.core import documents, prompt, records

TEMPLATE_VERSION = "1"
DEFAULT_FRAMES = 32

MODES: dict[str, tuple[Mode, ...]] = {
    "web_agents": (
        Mode("Grounding Error", "The model understood what to do but located the wrong UI element or screen region, "
             "or mapped the target to wrong coordinates."),
        Mode("Logical Breakdown", "The reasoning is internally inconsistent or its conclusion does not follow from "
             "its own observations."),
        Mode("Visual Hallucination", "The reasoning relies on UI elements, text or screen states that are not in the "
             "screenshots."),
        Mode("Missing Inference", "The model perceived the screen correctly but missed a necessary implicit step, "
             "e.g. what the previous actions already achieved or that a menu must be opened first."),
        Mode("Action Mismatch", "The intended step is right but the chosen action type or parameters (tap, type, "
             "scroll, back, text) do not carry it out."),
        Mode("Goal Misunderstanding", "The model misread the task goal or instruction and pursued a different "
             "objective."),
    ),
    "egocentric_videos": (
        Mode("Motion Misperception", "Wrong direction, speed or order of the camera's or an object's motion, or of "
             "the events in the video."),
        Mode("Perception Gaps", "Objects, attributes, text or events visible in the frames are missed or misread."),
        Mode("Spatial Confusion", "Wrong spatial relations, distances, sizes, counts in space or room layout."),
        Mode("Incomplete Analysis", "The model used only part of the video or of the options, or stopped reasoning "
             "before the evidence needed."),
        Mode("Task Misinterpretation", "The model misread what the question asks (wrong target, quantity or "
             "goal)."),
    ),
    "robotics": (
        Mode("Spatial Confusion", "Wrong positions, orientations, spatial relations, grasp points or trajectories "
             "in the scene."),
        Mode("Object Misrecognition", "An object, part, tool or its state is misidentified."),
        Mode("Action-Time Disconnect", "The model confuses the stage of the task: what has happened, what happens "
             "next, or which moment an action belongs to."),
        Mode("Selection Error", "The reasoning supports the correct option but a different option was chosen, or "
             "near-identical options were confused."),
        Mode("COT Failure", "Perception is right but the chain of thought derails: invalid steps, contradictions, "
             "or wrong physical or task logic."),
    ),
    "games": (
        Mode("Visual Miscomprehension", "Game visuals are misread: sprites, HUD values, scores, positions or "
             "states."),
        Mode("Rule Misunderstanding", "Wrong game rules or mechanics are applied."),
        Mode("Tracking Drift", "Entities or events are lost or confused across frames; counts over time are "
             "wrong."),
        Mode("Reasoning Breakdown", "The game state is perceived correctly but the inference or plan from it is "
             "wrong."),
        Mode("Context Hallucination", "Game context, elements or events that are not shown are invented."),
    ),
    "spatial_planning": (
        Mode("Viewpoint Gap", "The model fails to take the required viewpoint or frame of reference (camera vs "
             "object vs person; left/right or front/back flipped)."),
        Mode("Categorization Confusion", "Object categories are confused, or the wrong object is taken for the one "
             "the question names."),
        Mode("Detection Hallucination", "Objects are reported that are not there, or present objects are missed."),
        Mode("Logic Collapse", "Relations are perceived correctly but composed or reasoned about invalidly."),
        Mode("Scope Misinterpretation", "The scope of the question is misread: which objects, region, scene or "
             "measure it asks about."),
    ),
}

INTRO = (
    "You analyse why a vision-language model answered a multiple-choice question from the AgentVQA benchmark "
    "({domain} domain) incorrectly. You see the visual input the model saw (the attached images, in order; a video "
    "as uniformly sampled frames), the question, the previous actions shown to the model, all options as the model "
    "saw them, the correct answer, the option the model chose, the model's full reply including its reasoning, and "
    "the item's metadata. Compare the model's reasoning with the visual input and the correct answer, then assign "
    "the single error mode of the {domain} taxonomy below that best explains the failure."
)
USER = """Domain: {{domain}}
Source dataset: {{source}}
Visual input: {{visual_input}}
Metadata: {{metadata}}

Question:
{{question}}

Previous actions shown to the model:
{{history}}

Options:
{{options}}

Correct answer: {{gold}}
Option the model chose: {{chosen}}

The model's full reply (reasoning and answer):
{{response}}"""
TRUSTED = ("domain", "source", "visual_input", "metadata", "question", "history", "options", "gold", "chosen")

TEMPLATES: dict[str, PromptTemplate] = {
    domain: mode_template(f"agentvqa/error_mode/{domain}", TEMPLATE_VERSION,
                          INTRO.format(domain=records.DOMAINS[domain]), modes, USER, TRUSTED)
    for domain, modes in MODES.items()
}


def prepare_doc(doc: Mapping[str, Any], record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The document with the variant settings the record logs (coordinate convention, action history) and the
    media root of the current data location (for the video path)."""
    location = locate(benchmarks.get(records.BENCHMARK).source)
    return {**doc, "coord_convention": record.get("coord_convention") or documents.DEFAULT_CONVENTION,
            "with_history": bool(record.get("with_history", True)),
            "media_root": _media_root(location.kind, location.where)}


@functools.cache
def _media_root(kind: str, where: str) -> str:
    """The folder video paths resolve against (the Hub snapshot is fetched once per location)."""
    return fetch_folder(benchmarks.get(records.BENCHMARK).source).root or ""


def _visual_input(doc: Mapping[str, Any], n_images: int, n_frames: int) -> str:
    parts = [f"{n_images} image(s) in dataset order"] if n_images else []
    if doc.get("video"):
        parts.append(f"{n_frames} frame(s) sampled uniformly from the video")
    return ", then ".join(parts) + " (attached, in this order)" if parts else "none"


def build(item: Item, doc: Mapping[str, Any], kwargs: Mapping[str, Any], video_frames: int | None) -> JudgeInput:
    """The judge request for one incorrect prediction (``doc`` as ``prepare_doc`` returns it)."""
    settings = {**kwargs, "video_mode": "frames",
                "n_frames": video_frames or int(kwargs.get("n_frames") or DEFAULT_FRAMES)}
    visuals = [v for v in prompt.visuals(doc, settings, PluginMedia(hooks.PLUGIN, doc, settings))
               if isinstance(v, Image.Image)]
    n_images = len(doc.get(documents.IMAGES) or [])
    try:
        texts = list(prompt.rendered_options(doc).texts)
    except ValueError:  # coordinates without an image size: the released text
        texts = list(doc["options"])
    letter = {LETTERS[i]: text for i, text in enumerate(texts)}
    meta = json.loads(doc["metadata_json"])
    shown = {"source": meta.get("source_label") or doc["source"], "input_type": meta.get("input_type"),
             "output_type": meta.get("output_type"), "task_type": meta.get("task_type") or None,
             "coordinate_convention": doc["coord_convention"] if meta.get("coordinate_format") else None,
             "image_size": [meta["image_width"], meta["image_height"]] if meta.get("image_width") else None}
    pred = item.pred
    values = {
        "domain": records.DOMAINS.get(doc["domain"], doc["domain"]),
        "source": str(shown["source"]),
        "visual_input": _visual_input(doc, n_images, len(visuals) - n_images),
        "metadata": json.dumps({k: v for k, v in shown.items() if v not in (None, "")}, ensure_ascii=False),
        "question": doc["question"],
        "history": doc["context"] if prompt.shows_history(doc) else "(none)",
        "options": "\n".join(f"{k}. {v}" for k, v in letter.items()),
        "gold": f"{doc['answer']}. {letter.get(doc['answer'], '')}",
        "chosen": f"{pred}. {letter.get(pred, '')}" if pred else "no option could be read from the reply (no answer)",
        "response": item.reply,
    }
    return JudgeInput(TEMPLATES[doc["domain"]], values, tuple(visuals))


def _reference() -> dict[tuple[str, str], float]:
    rows = rows_for(load_reference(records.BENCHMARK), variant="error_analysis")
    wanted = {f"error_share_{domain}_{mode.key}": (domain, mode.key) for domain, modes in MODES.items()
              for mode in modes}
    return {wanted[row.metric]: row.value for row in rows if row.metric in wanted}


ERROR_MODES = ErrorModes(
    benchmark=records.BENCHMARK,
    title="AgentVQA",
    population="incorrect",
    modes=MODES,
    build=build,
    prepare_doc=prepare_doc,
    reference=_reference(),
    reference_note="Gemini 3.1 Pro's incorrect predictions, Gemini-annotated, 100 assignments hand-verified: Web "
                   "Agents 78% grounding errors, Games 71% visual miscomprehension, Robotics 65% spatial confusion, "
                   "Spatial Planning 62% viewpoint gaps, Egocentric Videos 39% motion misperception / 29% perception "
                   "gaps / 15% spatial confusion.",
    notes=("mode names from the paper (App. G.1); definitions and the judge prompt (the paper's App. M is not in "
           f"its text) written for this project, template version {TEMPLATE_VERSION} [assumption]",
           "videos are shown to the judge as uniformly sampled frames (--video-frames, default the run's n_frames)"),
)
