"""Agent-X's core with the authors' per-model script protocols (`script_protocols`): the paper core (`task`) plus
the `<kind>_<protocol>` variants, whose documents name their protocol (`prompt_protocol`), the prompt each protocol's
script builds and the protocol in the record. A document without a protocol is the paper core's, unchanged.

This is the core of this project's one-shot tasks (`hooks.py`); the upstream exports offer no script task and copy
the paper core alone (`upstream.LEFT_OUT_CORE`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from lmms_agentic.adapters.core.task import Judge, MediaReader, Prompt, Record, Variant
from lmms_agentic.tasks.agentx.core import script_protocols, task
from lmms_agentic.tasks.agentx.core.prompt import VideoFile
from lmms_agentic.tasks.agentx.core.script_protocols import FrameRule, ScriptProtocol
from lmms_agentic.tasks.agentx.core.task import (
    BENCHMARK,
    METRICS,
    RECORD_METRIC,
    TASK_METRICS,
    documents,
    judged,
    media_cell,
)

__all__ = ["BENCHMARK", "METRICS", "RECORD_METRIC", "TASK_METRICS", "VARIANTS", "FrameRuleReader", "documents",
           "judged", "media_cell", "prompt", "protocol_of", "score", "text_prompt", "video_settings"]

VARIANTS: Mapping[str, Variant] = {
    **task.VARIANTS,
    **{f"{kind}_{name}": task.selection(kind == "generative", name)
       for name in script_protocols.PROTOCOLS if name != script_protocols.PAPER
       for kind in ("text_answer", "generative")},
}
"""The paper core's variants; `<kind>_<protocol>`: the documents of one kind with the prompt of an author's
per-model script (`prompt_protocol`, `script_protocols.PROTOCOLS`)."""


@runtime_checkable
class FrameRuleReader(Protocol):
    """A media reader that can also sample a video's frames by a script's own index rule (the per-model protocols'
    first / floor / seeded random frames); the paper protocol needs only `MediaReader.video`'s uniform frames."""

    def video_frames(self, path: str, n_frames: int, rule: FrameRule) -> Sequence[Any]:
        """`n_frames` frames of the video at `path` at the indices `rule(n_total, n_frames)`."""


def protocol_of(doc: Mapping[str, Any]) -> ScriptProtocol:
    """The prompt protocol of `doc`'s task: `paper` unless its variant names a script protocol."""
    return script_protocols.get(str(doc.get("prompt_protocol") or script_protocols.PAPER))


def video_settings(protocol: ScriptProtocol, settings: Mapping[str, Any]) -> tuple[str, int]:
    """(`video_mode`, `n_frames`) of the task's settings (the protocol's when absent); a script protocol samples as
    its script did and refuses other settings."""
    plan = protocol.video
    mode, count = str(settings.get("video_mode", plan.mode)), int(settings.get("n_frames", plan.count))
    if protocol.name != script_protocols.PAPER and (mode, count) != (plan.mode, plan.count):
        raise ValueError(f"agentx prompt protocol {protocol.name!r} samples video as video_mode={plan.mode}, "
                         f"n_frames={plan.count} (its script's); the task sets {mode}, {count}: restore them, or use "
                         "the paper protocol (task agentx) for other video settings")
    if mode not in ("frames", "native"):
        raise ValueError(f"video_mode must be 'frames' or 'native', got {mode!r}")
    return mode, count


def _frames(media: MediaReader, cell: str, count: int, rule: FrameRule | None, protocol: str) -> list[Any]:
    if rule is None:
        return list(media.video(cell, count))
    if not isinstance(media, FrameRuleReader):
        raise ValueError(f"agentx prompt protocol {protocol!r} samples video frames by its script's rule "
                         f"({rule.kind}); this harness's media reader has no video_frames")
    return list(media.video_frames(cell, count, rule))


def prompt(doc: Mapping[str, Any], settings: Mapping[str, Any], media: MediaReader) -> Prompt:
    """The prompt of the document's protocol: the paper core's for `paper`, else the script's
    (`script_protocols.build_script_prompt`): the system text (None when the protocol puts the instruction in the
    user turn) and the user turn on the images, the video's frames (`video_frames` for a script's index rule) or
    the video itself (`video_mode: native`: what `media.video` hands over, a path as a `prompt.VideoFile`)."""
    protocol = protocol_of(doc)
    if protocol.name == script_protocols.PAPER:
        return task.prompt(doc, settings, media)
    cells = [media_cell(str(name)) for name in doc["media"]]
    if doc["media_type"] != "video":
        built = script_protocols.build_script_prompt(protocol, doc["query"], [media.image(c) for c in cells])
        return Prompt(built.system or None, built.segments)
    mode, count = video_settings(protocol, settings)
    if mode == "native":
        handed = media.video(cells[0], count)
        video = VideoFile(handed) if isinstance(handed, str) else handed
        built = script_protocols.build_script_prompt(protocol, doc["query"], VideoFile(cells[0]))
        parts = tuple(video if isinstance(part, VideoFile) else part for part in built.segments)
        return Prompt(built.system or None, parts)
    sampled = _frames(media, cells[0], count, protocol.video.frame_rule(doc["media"][0]), protocol.name)
    built = script_protocols.build_script_prompt(protocol, doc["query"], sampled, frames=True)
    return Prompt(built.system or None, built.segments)


def score(doc: Mapping[str, Any], reply: object, judge: Judge | None = None) -> Record:
    """The paper core's record (`task.score`) naming the document's prompt protocol (`prompt_protocol`)."""
    return {**task.score(doc, reply, judge), "prompt_protocol": protocol_of(doc).describe()}


class _NoPixels:
    """A reader that decodes nothing: what `text_prompt` lays the prompt out on (its texts never read pixels)."""

    placeholder = object()

    def image(self, cell: Any) -> Any:
        return self.placeholder

    def video(self, path: str, n_frames: int) -> Any:
        return [self.placeholder] * n_frames

    def video_frames(self, path: str, n_frames: int, rule: FrameRule) -> Any:
        return [self.placeholder] * n_frames


def text_prompt(doc: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """The prompt for text-only backends: under the paper's protocol the paper core's (`task.text_prompt`); under a
    script protocol its system text (if any) then its user turn's texts."""
    if protocol_of(doc).name == script_protocols.PAPER:
        return task.text_prompt(doc, settings)
    built = prompt(doc, settings, _NoPixels())
    return (built.system or "") + "".join(part for part in built.parts if isinstance(part, str))
