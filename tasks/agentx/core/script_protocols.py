"""Agent-X prompt protocols: the paper-level prompt (the project's default) and the authors' per-model scripts.

The leaderboard's rows were produced by one inference script per model family (`mbzuai-oryx/Agent-X`,
`evaluation/scripts/{closed,open}_source_models/.../run_inference*.py`), and the scripts differ in the instruction,
where it goes, the order of images and text, how many images are sent and how a video is sampled.  This module owns
that table as data (`PROTOCOLS`), the frame-index rules of the scripts (`FrameRule`) and the prompt each protocol
builds (`build_script_prompt`); `core/prompt.py` keeps the paper-level prompt (`paper`), byte for byte as before.

| protocol | instruction, where | user turn | video |
|---|---|---|---|
| `paper` | GPT instruction + blank line, system | images, query | 8 uniform frames, `Frame{i}:` labels |
| `gpt` | GPT instruction + blank line, system | 1 image: image, query; more: query, images | query, first 8 frames |
| `gemini` | GPT instruction, Gemini's block, system | all images, query | 4 frames at i·N/4 |
| `qwen` | open-source instruction, user | first 2 images, instruction + `"\\n\\n Query: "` | native at 1 fps |
| `gemma` | open-source instruction, system | first 2 images, query | 4 random frames |
| `pixtral` | open-source instruction (Pixtral's block), user | first 2 images, instruction + `"\\n"` | 4 random |
| `kimi` | Kimi-VL markdown instruction, user | first 2 images, instruction + `"\\n"` + query | 3 of 4 random |

The scripts draw random frames unseeded (`random.sample`), which no run can repeat; the `random` rule here is the
seeded variant: the indices come from `random.Random(f"{seed}:{video}")`, the same on every machine.  The Qwen
script's video text joins with `"\\n\\nQuery: "` (no space), its image text with `"\\n\\n Query: "`: both as released.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PIL import Image

from lmms_agentic.tasks.agentx.core import script_texts
from lmms_agentic.tasks.agentx.core.prompt import Prompt, Segment, VideoFile, build_prompt, query_line
from lmms_agentic.tasks.agentx.core.release_data import FORMAT_BLOCK_GPT

PAPER = "paper"
RANDOM_FRAMES_SEED = 0
"""Seed of the seeded stand-in for the scripts' unseeded random frames (mixed with the video's path)."""
SOURCE = "mbzuai-oryx/Agent-X@c62b043 evaluation/scripts"


@dataclass(frozen=True)
class FrameRule:
    """Which frames of a video a script reads: `first` (the first n, consecutive), `floor` (index ⌊i·N/n⌋),
    `random` (n distinct indices, sorted, seeded by `key`).  Hashable, so a decoded-frame cache can key on it."""

    kind: str
    key: str = ""

    def __call__(self, n_total: int, n_wanted: int) -> list[int]:
        if n_total <= 0 or n_wanted <= 0:
            raise ValueError(f"frame rule {self.kind}: need a frame and a request, got {n_total} / {n_wanted}")
        if self.kind == "first":
            return list(range(min(n_wanted, n_total)))
        if self.kind == "floor":
            return [i * n_total // n_wanted for i in range(n_wanted)]
        if self.kind == "random":
            return sorted(random.Random(self.key).sample(range(n_total), min(n_wanted, n_total)))
        raise ValueError(f"unknown frame rule {self.kind!r} (expected first, floor or random)")


@dataclass(frozen=True)
class VideoPlan:
    """How a protocol passes a video: `native` (the file) or `frames` (`count` frames by `rule`, the first `shown`
    of them sent; `rule` "uniform" is the paper-level default's evenly spaced frames)."""

    mode: str
    count: int = 0
    rule: str = "uniform"
    shown: int | None = None
    labels: bool = False
    fps: float | None = None

    def frame_rule(self, video: str, seed: int = RANDOM_FRAMES_SEED) -> FrameRule | None:
        """The index rule for ``video`` (its dataset path), or None for evenly spaced frames."""
        if self.rule == "uniform":
            return None
        return FrameRule(self.rule, f"{seed}:{video}" if self.rule == "random" else "")


@dataclass(frozen=True)
class ScriptProtocol:
    """One prompt protocol (see the module table)."""

    name: str
    script: str
    models: tuple[str, ...]
    """The reference.csv model names whose published rows this script produced."""
    placement: str
    """`system`: the instruction is the system message; `user`: it ends the user turn, joined to the query."""
    video: VideoPlan
    system_suffix: str = ""
    joiner: str = ""
    video_joiner: str | None = None
    max_images: int | None = None
    query_first_when_many: bool = False

    def instruction(self) -> str:
        """The instruction text with the tool catalogue, exactly as the script builds it."""
        return _INSTRUCTIONS[self.name]()

    def describe(self) -> dict[str, object]:
        """Plain data for results files and sample logs."""
        return {"protocol": self.name, "script": f"{SOURCE}/{self.script}" if self.script else "",
                "instruction_in": self.placement, "max_images": self.max_images,
                "video": {"mode": self.video.mode, "frames": self.video.count, "rule": self.video.rule,
                          "shown": self.video.shown, "fps": self.video.fps,
                          "seeded": self.video.rule == "random"}}


_INSTRUCTIONS: dict[str, Callable[[], str]] = {
    PAPER: lambda: script_texts.closed_instruction(FORMAT_BLOCK_GPT),
    "gpt": lambda: script_texts.closed_instruction(FORMAT_BLOCK_GPT),
    "gemini": lambda: script_texts.closed_instruction(script_texts.FORMAT_BLOCK_GEMINI),
    "qwen": lambda: script_texts.open_instruction(script_texts.FORMAT_BLOCK_OPEN),
    "gemma": lambda: script_texts.open_instruction(script_texts.FORMAT_BLOCK_OPEN),
    "pixtral": lambda: script_texts.open_instruction(script_texts.FORMAT_BLOCK_PIXTRAL),
    "kimi": script_texts.kimi_instruction,
}

PROTOCOLS: dict[str, ScriptProtocol] = {p.name: p for p in (
    ScriptProtocol(PAPER, "", (), "system", VideoPlan("frames", 8, "uniform", labels=True), system_suffix="\n\n"),
    ScriptProtocol("gpt", "closed_source_models/run_inference_gpt.py", ("GPT-4o", "OpenAI o4-mini"), "system",
                   VideoPlan("frames", 8, "first"), system_suffix="\n\n", query_first_when_many=True),
    ScriptProtocol("gemini", "closed_source_models/run_inference_gemini.py", ("Gemini-2.5-Pro", "Gemini-1.5-Pro"),
                   "system", VideoPlan("frames", 4, "floor")),
    ScriptProtocol("qwen", "open_source_models/Qwen-VL/run_inference.py", ("Qwen-2.5-VL-7B",), "user",
                   VideoPlan("native", fps=1.0), joiner="\n\n ", video_joiner="\n\n", max_images=2),
    ScriptProtocol("gemma", "open_source_models/gemma/run_inference.py", ("Gemma-3-4B",), "system",
                   VideoPlan("frames", 4, "random"), max_images=2),
    ScriptProtocol("pixtral", "open_source_models/pixtral/run_inference.py", ("Pixtral-12B",), "user",
                   VideoPlan("frames", 4, "random"), joiner="\n", max_images=2),
    ScriptProtocol("kimi", "open_source_models/kimi_vl/run_inference.py", ("Kimi-VL-A3B-Thinking",), "user",
                   VideoPlan("frames", 4, "random", shown=3), joiner="\n", max_images=2),
)}


def get(name: str) -> ScriptProtocol:
    """The protocol called ``name``; the error lists the known ones."""
    if name not in PROTOCOLS:
        raise ValueError(f"unknown Agent-X prompt protocol {name!r}; known: {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]


def build_script_prompt(protocol: ScriptProtocol, query: str, visuals: Sequence[Image.Image] | VideoFile, *,
                        frames: bool = False) -> Prompt:
    """The prompt ``protocol``'s script sends: ``visuals`` are the task's images in `file_path` order, a video's
    frames (``frames=True``; already sampled by the protocol's rule, the first `shown` are sent) or the video file.
    A protocol with the instruction in the user turn has no system message (`Prompt.system` is "")."""
    if protocol.name == PAPER:
        return build_prompt(query, visuals, frames=frames)
    is_video = frames or isinstance(visuals, VideoFile)
    media: list[Segment]
    if isinstance(visuals, VideoFile):
        media = [visuals]
    else:
        limit = protocol.video.shown if is_video else protocol.max_images
        media = list(visuals[:limit] if limit is not None else visuals)
    if protocol.placement == "system":
        system, text = protocol.instruction() + protocol.system_suffix, query_line(query)
    else:
        joiner = protocol.video_joiner if is_video and protocol.video_joiner is not None else protocol.joiner
        system, text = "", protocol.instruction() + joiner + query_line(query)
    query_first = protocol.query_first_when_many and (is_video or len(media) > 1)
    return Prompt(system, tuple([text, *media] if query_first else [*media, text]))


def simple_text(prompt: Prompt) -> str:
    """Simple backends (one text, images apart): the system message, then the user turn's texts in order."""
    return prompt.system + "".join(part for part in prompt.segments if isinstance(part, str))
