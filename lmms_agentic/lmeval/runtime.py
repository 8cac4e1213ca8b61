"""What lmms-agentic's lm-eval tasks adjust in the running lm-evaluation-harness (0.4.13), installed once by
`lmms_agentic.lmeval.task_functions` when lm-eval imports it to load one of the generated tasks:

- **images where lmms-eval puts them, for the API backends too.** lm-eval's `local-chat-completions` /
  `openai-chat-completions` send every image of a request first and then one text part that still holds the
  `<image>` placeholders (`lm_eval.models.api_models.create_image_prompt`). For a request whose images all come
  from these tasks (tagged by `bridge.IMAGE_MARK`) and whose last turn holds exactly one placeholder per image,
  `interleaved_prompt` sends text and images in prompt order instead, placeholders removed: the parts lmms-eval's
  OpenAI-compatible backend sends. Any other request is passed to lm-eval's own function unchanged. If the lm-eval
  in use has no such function (another version), nothing is patched and one warning says what the model gets.
- **each warning once.** lm-eval warns for every task with a `custom_dataset` hook ("Custom kwargs can be passed to
  `--metadata`", not applicable to these tasks, which read only `max_images` from it) and for every task whose
  metrics were not all scored on the same number of documents (by design here: a metric that a row does not count
  for is left out for that row). For these tasks the first is dropped and the second shown once, with a note.
"""

from __future__ import annotations

import base64
import functools
import inspect
import io
import logging
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from PIL import Image

from lmms_agentic.lmeval import record
from lmms_agentic.lmeval.bridge import IMAGE_MARK, IMAGE_TOKEN

log = logging.getLogger(__name__)
TASK_LOGGER = "lm_eval.api.task"
EVALUATOR_LOGGER = "lm_eval.evaluator_utils"
CUSTOM_KWARGS = re.compile(r"^(?P<task>\S+): Custom kwargs can be passed to `--metadata`")
UNEQUAL_COUNTS = re.compile(r"^\[(?P<task>[^\]]+)\] Metrics were not scored on the same number of documents")
_installed: list[str] = []


def _image_part(image: Image.Image, fmt: str) -> dict[str, Any]:
    """An image as lm-eval's API backends encode it (same format, same data URL, same detail)."""
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    encoded = base64.b64encode(buffer.getvalue()).decode("utf-8")
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{encoded}", "detail": "auto"}}


def interleaved_content(text: str, images: list[Image.Image], fmt: str = "PNG") -> list[dict[str, Any]] | None:
    """The user turn as text and image parts in prompt order, or None when the text does not hold exactly one
    placeholder per image or an image is not one of these tasks' (then lm-eval's own layout applies)."""
    if not images or text.count(IMAGE_TOKEN) != len(images) or not all(
            getattr(image, "info", {}).get(IMAGE_MARK) for image in images):
        return None
    parts: list[dict[str, Any]] = []
    pieces = text.split(IMAGE_TOKEN)
    for index, piece in enumerate(pieces):
        if piece:
            parts.append({"type": "text", "text": piece})
        if index < len(images):
            parts.append(_image_part(images[index], fmt))
    return parts


def interleaved_prompt(original: Callable[..., Any]) -> Callable[..., Any]:
    """`create_image_prompt` that interleaves these tasks' images, lm-eval's `original` for anything else."""

    @functools.wraps(original)
    def create_image_prompt(imgs: list[Image.Image], chat: Any, fmt: str = "PNG") -> Any:
        last = chat[-1] if isinstance(chat, list) and chat else None
        content = last.get("content") if isinstance(last, dict) else None
        parts = interleaved_content(content, list(imgs), fmt) if isinstance(content, str) else None
        if parts is None or last is None:
            return original(imgs, chat, fmt)
        last["content"] = parts
        last.pop("type", None)
        return chat

    create_image_prompt.lmms_agentic = True  # type: ignore[attr-defined]
    return create_image_prompt


def _patch_api_images() -> None:
    try:
        from lm_eval.models import api_models
    except ImportError:  # lm-eval's API extra missing: its API backends cannot run, nothing to adjust
        return
    current = getattr(api_models, "create_image_prompt", None)
    if getattr(current, "lmms_agentic", False):
        return
    if current is None or list(inspect.signature(current).parameters)[:2] != ["imgs", "chat"]:
        log.warning("this lm-eval has no create_image_prompt(imgs, chat): its API backends send a request's "
                    "images before its text, not at their <image> placeholders as lmms-eval does")
        return
    api_models.create_image_prompt = interleaved_prompt(current)


class _OncePerRun(logging.Filter):
    """Drops lm-eval's per-task warnings that do not apply to lmms-agentic's tasks, or repeat for each of them."""

    def __init__(self, ours: Callable[[str], bool]) -> None:
        super().__init__()
        self.ours = ours
        self.unequal_shown = False

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if (match := CUSTOM_KWARGS.match(message)) and self.ours(match["task"]):
            return False
        if (match := UNEQUAL_COUNTS.match(message)) and self.ours(match["task"]):
            if self.unequal_shown:
                return False
            self.unequal_shown = True
            record.msg = (f"{message} -- expected for lmms-agentic tasks, which leave a metric out for the rows it "
                          "does not count for; shown once per run (their groups are generated for it)")
            record.args = ()
        return True


def task_names(folders: Iterable[Path]) -> set[str]:
    """The task and group names of generated lm-eval folders (read from their YAMLs' `task:`/`group:` lines)."""
    pattern = re.compile(r"^(?:task|group): (\S+)$", re.MULTILINE)
    return {name for folder in folders for path in folder.rglob("*.yaml")
            for name in pattern.findall(path.read_text(encoding="utf-8"))}


@functools.cache
def _our_tasks() -> frozenset[str]:
    from lmms_agentic.lmeval import generate

    return frozenset(task_names([generate.ensure()]))


def _is_ours(task: str) -> bool:
    return task in _our_tasks()


def install() -> None:
    """Install the adjustments once per process (idempotent)."""
    if _installed:
        return
    _installed.append("done")
    _patch_api_images()
    record.install()
    once = _OncePerRun(_is_ours)
    for name in (TASK_LOGGER, EVALUATOR_LOGGER):
        logging.getLogger(name).addFilter(once)
