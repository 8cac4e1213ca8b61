"""RoboVista prompts as a harness-neutral structure: a system prompt and ordered segments (texts and image lists).

Owns the layouts (paper App. B, public runner) and the choice of in-context examples. The texts (`texts`:
`system_prompt`, `suffix`, `confidence_request`, `icl_system_prompt`, `icl_reasoning`, `protocol`) are the task
YAML's configuration; images arrive prepared (`images.preprocess_image`). Zero-shot / CoT: all images, then
`question \\n\\nOptions:\\n A. ... \\n\\n suffix`. ICL: the paper's EXAMPLE / YOUR QUESTION layout, the example's
images at the first marker, the item's at the second; an item whose (task, domain) has no other member is asked
zero-shot (its `icl_example_id` is empty).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image

from lmms_agentic.adapters.core.fewshot import choose_examples
from lmms_agentic.adapters.core.prompting import mcq_text, option_lines

Doc = Mapping[str, Any]
Images = list[Image.Image]
Segment = str | Images
Prompt = tuple[str, list[Segment]]
"""(system prompt, ordered user segments: text strings and image lists)."""


def choose_incontext_examples(ids: Sequence[str], metadata_json: Sequence[str], domains: Sequence[str],
                              seed: int) -> list[int | None]:
    """The index of each document's in-context example: one of the same (task, domain), never the item itself,
    drawn with `random.Random(f"{seed}|{item_id}")` (paper App. B); None when there is no other such document."""
    tasks = [json.loads(metadata)["task"] for metadata in metadata_json]
    return choose_examples(ids, list(zip(tasks, domains, strict=True)), seed)


def shows_example(doc: Doc, texts: Doc) -> bool:
    """Whether the prompt carries an in-context example (protocol "icl" and the document has one)."""
    return texts.get("protocol") == "icl" and bool(doc["icl_example_id"])


def user_text(doc: Doc, texts: Doc) -> str:
    """The item's own text: question, options, suffix and (when configured) the confidence request."""
    suffix = texts["suffix"]
    if texts.get("confidence_request"):
        suffix = f"{suffix}\n{texts['confidence_request']}"
    return mcq_text(doc["question"], doc["options"], suffix)


def build(doc: Doc, texts: Doc, images: Images, example_images: Images) -> Prompt:
    """The prompt of one document; `example_images` are used only when `shows_example`."""
    if not shows_example(doc, texts):
        return texts["system_prompt"], [images, user_text(doc, texts)]
    example = (f"Question: {doc['icl_question']}\nOptions: {option_lines(doc['icl_options'])}\n"
               f"Answer: {doc['icl_answer']}")
    if texts.get("icl_reasoning"):
        example += f"\nReasoning: {doc['icl_reasoning']}"
    return texts["icl_system_prompt"], [
        "=== EXAMPLE ===\n[Image 1: Example image]\n", example_images,
        f"\n{example}\n\n\n=== YOUR QUESTION ===\n[Image 2: Your image]\n", images,
        user_text(doc, texts),
    ]

