"""Multimodal judge calls for the error analysis, on the shared judge layer (cache, retries, typed unscored state).

Images: ``judges.templates`` renders text-only messages, so this module attaches the visual input itself.
``ImageJudgeRequest`` is a ``JudgeRequest`` with ``images`` (data URLs); ``MultimodalJudgeClient`` renders the
template as usual and turns the user message into OpenAI content parts: every image as an ``image_url`` part (in the
order the model saw them), then the rendered text (data notice and fenced model output unchanged).  The cache key is
recomputed over the final body, so the images are part of it.  (A clean change to ``judges/`` would be an ``images``
field on ``JudgeRequest`` and content parts in ``PromptTemplate.render``; then this subclass goes away.)

Image support is declared, never assumed: ``LMMS_AGENTIC_JUDGE_VISION=1`` (or ``--judge-vision``) says the judge
accepts ``image_url`` parts; the ``gpt-4o`` preset is known to, ``qwen3-14b-local`` is known not to.  Anything else is
refused before any call (``NoVisionJudge``).  ``--probe-vision`` checks it instead: one request with a plain red image
must come back naming the colour red.

Images travel as JPEG data URLs, the longer side capped at ``max_side`` pixels (never upscaled).  Requests are built
and sent in chunks, so only a chunk's images are held in memory.
"""

from __future__ import annotations

import base64
import io
import itertools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from PIL import Image

from lmms_agentic.judges import (
    JsonObjectParser,
    JudgeClient,
    JudgeConfig,
    JudgeRequest,
    JudgeResult,
    PromptTemplate,
    Text,
    request_key,
)
from lmms_agentic.judges.client import _Prepared
from lmms_agentic.judges.config import env_flag
from lmms_agentic.judges.error_modes import CORRECT, ErrorModes, Item, Mode, mode_of

from .run import DocStore

VISION_ENV = "LMMS_AGENTIC_JUDGE_VISION"
VISION_PRESETS = {"gpt-4o": True, "qwen3-14b-local": False}
DEFAULT_MAX_SIDE = 1536
DEFAULT_MAX_REPLY_CHARS = 40_000


class JudgeSetupError(ValueError):
    """The judge cannot do this analysis (not configured, or not declared image-capable); nothing was sent."""


@dataclass(frozen=True)
class ImageJudgeRequest(JudgeRequest):
    """A judge request with images (data URLs) shown before the rendered text."""

    images: tuple[str, ...] = ()


class MultimodalJudgeClient(JudgeClient):
    """``JudgeClient`` that sends an ``ImageJudgeRequest``'s images as ``image_url`` content parts."""

    def _prepare(self, request: JudgeRequest) -> _Prepared:
        prepared = super()._prepare(request)
        images = getattr(request, "images", ())
        if not images:
            return prepared
        body = dict(prepared.body)
        messages = [dict(m) for m in body["messages"]]
        text = messages[-1]["content"]
        messages[-1]["content"] = [*({"type": "image_url", "image_url": {"url": url}} for url in images),
                                   {"type": "text", "text": text}]
        body["messages"] = messages
        key = request_key(request.template, self.config.model, body) if self.config.model else None
        return replace(prepared, body=body, key=key)


def data_url(image: Image.Image, max_side: int | None = DEFAULT_MAX_SIDE, quality: int = 90) -> str:
    """A JPEG data URL of ``image`` (RGB), the longer side capped at ``max_side`` (None or 0: native size)."""
    picture = image.convert("RGB")
    if max_side and max(picture.size) > max_side:
        scale = max_side / max(picture.size)
        picture = picture.resize((max(1, round(picture.width * scale)), max(1, round(picture.height * scale))))
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters: the first quarter and the last three quarters, the cut marked."""
    if limit <= 0 or len(text) <= limit:
        return text
    head, tail = limit // 4, limit - limit // 4
    return f"{text[:head]}\n[... {len(text) - limit} characters omitted ...]\n{text[-tail:]}"


def require_judge(config: JudgeConfig, vision: bool | None = None, environ: Mapping[str, str] | None = None) -> str:
    """Refuse (``JudgeSetupError``) unless a judge is configured and declared image-capable; returns how it was
    declared.  ``vision``: the command-line declaration (None: not given)."""
    if not config.configured:
        raise JudgeSetupError("no LLM judge configured: set LMMS_AGENTIC_JUDGE_BASE_URL and LMMS_AGENTIC_JUDGE_MODEL "
                              "(or LMMS_AGENTIC_JUDGE_PRESET) to a judge that accepts images (or use --dry-run)")
    env = os.environ if environ is None else environ
    if vision is None and env.get(VISION_ENV, "").strip():
        vision = env_flag(env[VISION_ENV], VISION_ENV)
        how = f"{VISION_ENV}={env[VISION_ENV].strip()}"
    else:
        how = "--judge-vision" if vision else ""
    if vision is None and config.preset in VISION_PRESETS:
        vision, how = VISION_PRESETS[config.preset], f"preset {config.preset}"
    if not vision:
        raise JudgeSetupError(
            f"the error analysis shows the judge the model's visual input, but the judge model {config.model!r} is "
            f"not declared image-capable ({how or 'no declaration'}). Point the judge at a vision-language model and "
            f"set {VISION_ENV}=1 (or pass --judge-vision), or pass --probe-vision to test it with one request.")
    return how


PROBE = PromptTemplate(
    id="error_analysis/vision_probe", version="1",
    user='What is the colour of the attached image? Answer with one JSON object: {"colour": "<one word>"}',
    parser=JsonObjectParser(required={"colour": Text(nonempty=True)}), max_tokens=2048)


def probe_vision(client: JudgeClient) -> tuple[bool, str]:
    """Send one plain red 64x64 image; (True, detail) when the judge names red."""
    red = data_url(Image.new("RGB", (64, 64), (220, 20, 20)))
    result = client.judge(ImageJudgeRequest(PROBE, {}, "vision-probe", images=(red,)))
    if not result.scored:
        return False, f"probe unscored ({result.unscored_reason}: {result.detail})"
    colour = str(result.fields.get("colour", "")).strip().lower()
    return colour.startswith("red"), f"the judge saw {colour!r} in a red image"


@dataclass(frozen=True)
class Assignment:
    """The outcome for one analysed prediction."""

    item: Item
    status: str
    """``judged``, ``unscored:<reason>``, ``correct`` (not judged) or ``skipped:request_failed``."""
    mode: Mode | None = None
    reason: str = ""
    result: JudgeResult | None = None
    n_images: int = 0
    question: str = ""
    """The question and options as the judge saw them (for the verification export)."""
    options: str = ""


@dataclass(frozen=True)
class Options:
    """How requests are built."""

    video_frames: int | None = None
    max_side: int | None = DEFAULT_MAX_SIDE
    max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS
    chunk: int = 0
    """Requests built and sent at a time (0: twice the judge's concurrency, at least 8)."""


def build_requests(spec: ErrorModes, items: Sequence[Item], store: DocStore,
                   kwargs_of: Callable[[str], Mapping[str, Any]], options: Options
                   ) -> Iterator[tuple[Item, ImageJudgeRequest]]:
    """One request per item, built lazily (images are decoded when the request is built)."""
    for item in items:
        doc = spec.prepare_doc(store.get(item), item.record)
        clipped = replace(item, reply=clip(item.reply, options.max_reply_chars))
        built = spec.build(clipped, doc, kwargs_of(item.task), options.video_frames)
        urls = tuple(data_url(image, options.max_side) for image in built.images)
        yield item, ImageJudgeRequest(built.template, dict(built.values), f"{item.task}:{item.id}", images=urls)


def one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _assignment(spec: ErrorModes, item: Item, request: ImageJudgeRequest, result: JudgeResult) -> Assignment:
    seen = Assignment(item, "", result=result, n_images=len(request.images),
                      question=request.values.get("question", ""), options=request.values.get("options", ""))
    if not result.scored:
        return replace(seen, status=f"unscored:{result.unscored_reason}", reason=one_line(result.detail or ""))
    mode = mode_of(str(result.fields.get("mode", "")), spec.modes_for(item.domain))
    if mode is None:  # the parser's Choice admits only listed modes; kept as a guard
        return replace(seen, status="unscored:parse_failure", reason="mode not in the domain's taxonomy")
    return replace(seen, status="judged", mode=mode, reason=one_line(str(result.fields.get("reason", ""))))


def judge_items(spec: ErrorModes, items: Sequence[Item], skipped: Sequence[Item], store: DocStore,
                kwargs_of: Callable[[str], Mapping[str, Any]], client: JudgeClient, options: Options,
                progress: bool = True) -> list[Assignment]:
    """Assignments for ``items`` (correct ones labelled ``CORRECT`` without a call) plus the ``skipped`` ones."""
    out = [Assignment(item, "skipped:request_failed") for item in skipped if item.request_failed]
    to_judge = []
    for item in items:
        if item.correct:
            out.append(Assignment(item, "correct", CORRECT))
        else:
            to_judge.append(item)
    pending = build_requests(spec, to_judge, store, kwargs_of, options)
    size = options.chunk or max(8, 2 * client.config.concurrency)
    while True:
        chunk = list(itertools.islice(pending, size))
        if not chunk:
            break
        results = client.judge_many([request for _, request in chunk], progress=progress,
                                    desc=f"{spec.benchmark} error modes")
        out += [_assignment(spec, item, request, result)
                for (item, request), result in zip(chunk, results, strict=True)]
    return out
