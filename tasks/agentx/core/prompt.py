"""Agent-X prompt: the released single-shot prompt as a harness-neutral structure (system text + ordered segments).

Owns the user turn's order and texts: all images in `file_path` order (or a video's frames, each preceded by
`Frame{i}:`, or the video file itself), then `"Query: " + query` with the query exactly as in data.json; and the
text of simple backends (the system message immediately followed by the query line).  The system message is
`release_data.system_message()`.  The visuals arrive decoded (images, sampled frames) or as a video path: decoding is
the plugin's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image

from lmms_agentic.tasks.agentx.core.release_data import system_message

QUERY_PREFIX = "Query: "


@dataclass(frozen=True)
class VideoFile:
    """A video passed to the model as a file (`video_mode: native`), not as frames."""

    path: str


Segment = str | Image.Image | VideoFile
"""One part of the user turn: a text, an image, or a video file."""


@dataclass(frozen=True)
class Prompt:
    """The system message and the user turn's segments, in order."""

    system: str
    segments: tuple[Segment, ...]


def query_line(query: str) -> str:
    """`Query: <query>` (the query as released, not stripped)."""
    return f"{QUERY_PREFIX}{query}"


def build_prompt(query: str, visuals: Sequence[Image.Image] | VideoFile, *, frames: bool = False) -> Prompt:
    """The prompt of one task: `visuals` are its images in `file_path` order, or a video's sampled frames
    (`frames=True`: each preceded by `Frame{i}:`, from 1), or the video file; then the query line."""
    segments: list[Segment] = []
    if isinstance(visuals, VideoFile):
        segments.append(visuals)
    elif frames:
        for index, frame in enumerate(visuals, start=1):
            segments += [f"Frame{index}:", frame]
    else:
        segments += visuals
    segments.append(query_line(query))
    return Prompt(system_message(), tuple(segments))


def simple_text(query: str) -> str:
    """Simple backends: the system message (the instruction and a blank line), then the query line."""
    return f"{system_message()}{query_line(query)}"
