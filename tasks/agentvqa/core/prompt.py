"""AgentVQA's prompt: the option texts in the run's coordinate convention, the user text, and the ordered visuals.

One user turn, no system prompt: the visuals first (images in dataset order, then the video as frames the caller
decoded, or its path for backends that take video natively), then the text — the question, the previous actions
(trajectory items, when the variant shows them), the options and the instruction [ASSUMPTION, see README.md]. The
wording of the history header and the instruction is configuration (`history_header`, `post_prompt` in the task
YAML's `lmms_eval_specific_kwargs`), passed in as `settings`.

A document here is a canonical row (`McqDoc.to_row()`) plus the settings its variant writes into it
(`documents.VARIANTS`): `coord_convention` and `with_history`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from PIL import Image

from lmms_agentic.adapters.core.schema import LETTERS
from lmms_agentic.adapters.core.task import MediaReader
from lmms_agentic.tasks.agentvqa.core.documents import IMAGES
from lmms_agentic.tasks.agentvqa.core.sources import RenderedOptions, adapter_for

Visual = Image.Image | str | PurePath
"""A decoded image or frame, or a video path (native video)."""


def rendered_options(doc: Mapping[str, Any]) -> RenderedOptions:
    """Options in the row's coordinate convention (against the image size the record carries)."""
    meta = json.loads(doc["metadata_json"])
    return adapter_for(doc["source"]).render(doc["options"], meta, doc["coord_convention"], None)


def shows_history(doc: Mapping[str, Any]) -> bool:
    """Does the prompt carry the item's previous actions (an item with a history, in a variant that shows it)?"""
    return bool(doc["with_history"] and doc["context"])


def prompt_text(doc: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """The user text: question, previous actions (when shown), `Options:`, one `X. text` line per option, and the
    instruction (`settings["post_prompt"]`; the history header is `settings["history_header"]`)."""
    options = rendered_options(doc).texts
    lines = [doc["question"]]
    if shows_history(doc):
        lines += [settings["history_header"], doc["context"]]
    lines.append("Options:")
    lines += [f"{LETTERS[i]}. {text}" for i, text in enumerate(options)]
    lines.append(settings["post_prompt"])
    return "\n".join(lines)


def ordered_visuals(images: Sequence[Image.Image], video: Any) -> list[Visual]:
    """The images in dataset order, then the video: its decoded frames (a list or tuple), or what the reader hands
    over for native video (a path or file object), or nothing (None)."""
    items: list[Any] = list(images)
    if isinstance(video, list | tuple):
        items.extend(video)
    elif video is not None:
        items.append(video)
    return items


def visuals(doc: Mapping[str, Any], settings: Mapping[str, Any], media: MediaReader) -> list[Any]:
    """The media the model is shown, in order: each image cell as `media.image` reads it, then the video as
    `media.video(path, settings["n_frames"])` returns it (its frames, or its path for native video)."""
    images = [media.image(cell) for cell in doc.get(IMAGES) or []]
    video = media.video(str(doc["video"]), int(settings["n_frames"])) if doc.get("video") else None
    return ordered_visuals(images, video)


@dataclass(frozen=True)
class Prompt:
    """What the model is shown: the visuals in order, then the text, in one user turn."""

    visuals: Sequence[Visual]
    text: str

    def messages(self) -> list[dict[str, Any]]:
        """The chat form: one user turn with an `image` (or `video`: a path) part per visual, then the text."""
        content: list[dict[str, Any]] = [
            {"type": "video", "url": str(item)} if isinstance(item, str | PurePath) else {"type": "image", "url": item}
            for item in self.visuals
        ]
        content.append({"type": "text", "text": self.text})
        return [{"role": "user", "content": content}]
