"""Run lmms-eval task hooks under lm-evaluation-harness: documents, prompt, images, scoring.

lm-eval calls every hook with the document only (`doc_to_text(doc)`, `doc_to_image(doc)`, ...), has no chat
messages and no video input, and resolves the task description (the system prompt) from a document field. The
benchmarks' hooks are written for lmms-eval: `doc_to_messages(doc, kwargs)` builds the chat turn, `process_docs`
builds the documents, `process_results(doc, results)` scores. This module bridges the two without copying any
prompt logic:

- a `TaskSpec` holds one task's lmms-eval hooks (callables) and its `lmms_eval_specific_kwargs` entry;
- `documents(spec, docs)` wraps the rows `process_docs` returned in a `DocList` of `Doc`s: dicts that carry their
  task spec, show encoded images as lazily opened PIL images (so lm-eval's sample log prints a short repr instead
  of the bytes), and render the chat messages once per document object;
- rendering (`render`) turns the messages into what lm-eval wants: the system turn's text (the task's
  `description` names the virtual field `SYSTEM_FIELD`), the user turn's text with one `<image>` placeholder per
  image in order (`doc_to_text`), and the images in the same order (`doc_to_image`). A video part is refused:
  lm-eval tasks must sample frames (`video_mode: frames`). lm-eval's local backends (`hf-multimodal`, `vllm-vlm`)
  put each image at its placeholder; every image is tagged (`IMAGE_MARK` in its `info`) so that
  `lmms_agentic.lmeval.runtime` can make the API backends do the same for these documents only;
- no silent image loss: a backend sends at most `max_images` images per request and drops the rest without a
  word, so `doc_to_image` stops the run (`ImageLimitError`, one line naming `max_images=N`) when a document has
  more images than the task's `TaskSpec.max_images`;
- scoring is the task's own `process_results` (the first metric carries the sample record), limited to the task's
  metric list and without the metrics a row does not count for (see `process_results`).

The module imports nothing from lmms-agentic, so `lmms_agentic.lmeval.export` can inline it into an upstream
task folder's `utils.py`.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import datasets
from PIL import Image

IMAGE_TOKEN = "<image>"
IMAGE_MARK = "lmms_agentic_image"
"""The `PIL.Image.info` key set on every image a document sends (the API backends' interleaving reads it)."""
SUGGESTED_MAX_IMAGES = 64
"""What the image-limit error suggests at least: covers every document of the bundled benchmarks (32 frames)."""
SYSTEM_FIELD = "lmms_agentic_system_prompt"
"""The document field a task's `description` names: the system prompt, rendered on first use."""
TASK_FIELD = "lmms_agentic_task"
"""Every document records the lmms-eval task it came from (visible in lm-eval's sample log)."""

Hook = Callable[..., Any]
log = logging.getLogger(__name__)
_WARNED: set[str] = set()


@dataclass(frozen=True)
class TaskSpec:
    """One lmms-eval task's hooks and settings, as lm-eval runs it."""

    task: str
    doc_to_messages: Hook
    doc_to_target: Hook
    process_results: Hook
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    metrics: tuple[str, ...] = ()
    """The task's metric list: other keys `process_results` returns are dropped (lm-eval would average them with
    its `mean` and fail on a dict; lmms-eval logs them and reports nothing), with one warning per task."""
    max_images: int | None = None
    """The most images the model receives per request (lm-eval's `max_images` model argument, or its backend's
    default); a document with more stops the run. None: not known here, not checked."""
    max_images_source: str = "max_images"
    """Where `max_images` came from, for the error message (the model argument, or the backend default)."""


class ImageLimitError(ValueError):
    """A document has more images than the model would receive: the rest would be dropped silently."""


@dataclass(frozen=True)
class Rendered:
    """A document's prompt in lm-eval's terms."""

    system: str
    text: str
    images: tuple[Image.Image, ...]


def _parts(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def render(messages: Sequence[Mapping[str, Any]], task: str = "") -> Rendered:
    """System text, user text with `<image>` placeholders, and the images, from lmms-eval chat messages."""
    system: list[str] = []
    text: list[str] = []
    images: list[Image.Image] = []
    for message in messages:
        role = message.get("role")
        if role not in ("system", "user"):
            raise ValueError(f"{task}: lm-eval prompts have a system and a user turn, got a {role!r} turn")
        for part in _parts(message.get("content", [])):
            kind = part.get("type")
            if kind == "text":
                (system if role == "system" else text).append(str(part["text"]))
            elif kind == "image" and role == "user":
                images.append(part["url"])
                text.append(IMAGE_TOKEN)
            elif kind == "video":
                raise ValueError(f"{task}: lm-eval has no video input; the task must sample frames "
                                 "(lmms_eval_specific_kwargs video_mode: frames)")
            else:
                raise ValueError(f"{task}: unsupported {kind!r} part in the {role} turn")
    return Rendered("".join(system), "".join(text), tuple(images))


class Doc(dict):  # type: ignore[type-arg]  # a plain dict to lm-eval (logged, pickled), with its task attached
    """One document: the row's fields, the task spec, and the prompt rendered on first use.

    `SYSTEM_FIELD` is virtual: `SYSTEM_FIELD in doc` is true and `doc[SYSTEM_FIELD]` is the system prompt, so a
    task's `description: lmms_agentic_system_prompt` resolves per document, while the logged document stays
    the row (the system prompt is not stored in it).
    """

    spec: TaskSpec
    _rendered: Rendered | None

    def __init__(self, row: Mapping[str, Any], spec: TaskSpec) -> None:
        super().__init__(row)
        self[TASK_FIELD] = spec.task
        self.spec = spec
        self._rendered = None

    def __contains__(self, key: object) -> bool:
        return key == SYSTEM_FIELD or super().__contains__(key)

    def __missing__(self, key: str) -> Any:
        if key == SYSTEM_FIELD:
            return self.rendered.system
        raise KeyError(key)

    @property
    def rendered(self) -> Rendered:
        if self._rendered is None:
            self._rendered = render(self.spec.doc_to_messages(self, self.spec.kwargs), self.spec.task)
        return self._rendered

    def __reduce__(self) -> tuple[Any, ...]:  # pickle the row and the spec, not the rendered images
        return (Doc, (dict(self), self.spec))


def _lazy_images(cell: Any) -> Any:
    """Encoded image cells (`{"bytes", "path"}`) as lazily opened PIL images; anything else unchanged."""
    if isinstance(cell, Mapping) and cell.get("bytes"):
        return Image.open(io.BytesIO(cell["bytes"]))
    if isinstance(cell, list):
        return [_lazy_images(item) for item in cell]
    return cell


def _image_columns(features: datasets.Features) -> list[str]:
    def is_image(feature: Any) -> bool:
        if isinstance(feature, datasets.Image):
            return True
        inner = getattr(feature, "feature", None)
        return inner is not None and is_image(inner)

    return [name for name, feature in features.items() if is_image(feature)]


class DocList(Sequence[Doc]):
    """The documents of one task: indexable, iterable, sized, with `features` (lm-eval reads all four)."""

    def __init__(self, docs: datasets.Dataset, spec: TaskSpec) -> None:
        self.docs = docs
        self.spec = spec
        self.features = docs.features
        self._images = _image_columns(docs.features)

    def __len__(self) -> int:
        return len(self.docs)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        row = dict(self.docs[int(index)])
        for column in self._images:
            row[column] = _lazy_images(row[column])
        return Doc(row, self.spec)

    def __iter__(self) -> Iterator[Doc]:
        for index in range(len(self)):
            yield self[index]


def documents(spec: TaskSpec, docs: datasets.Dataset) -> DocList:
    """The task's documents as lm-eval receives them."""
    return DocList(docs, spec)


def as_doc(doc: Mapping[str, Any]) -> Doc:
    """The `Doc` lm-eval handed back (documents are passed through unchanged)."""
    if not isinstance(doc, Doc):
        raise TypeError(f"expected a document built by lmms_agentic's lm-eval adapter, got {type(doc).__name__}; "
                        "the task's documents must come from its `custom_dataset` / `process_docs` hook")
    return doc


# --------------------------------------------------------------------------- lm-eval hooks (doc only)

def doc_to_text(doc: Mapping[str, Any]) -> str:
    """The user turn's text, one `<image>` per image in order."""
    return as_doc(doc).rendered.text


def check_image_limit(doc: Doc, count: int) -> None:
    """Stop (one line naming the fix) when `count` images exceed what the model receives for this task."""
    spec = doc.spec
    if spec.max_images is None or count <= spec.max_images:
        return
    wanted = max(SUGGESTED_MAX_IMAGES, count)
    raise ImageLimitError(
        f"{spec.task}: document {doc.get('id', '?')} has {count} images but the model receives at most "
        f"{spec.max_images} ({spec.max_images_source}), so the others would be dropped without a word; pass "
        f"max_images={wanted} in --model_args (Python: TaskManager(..., metadata={{'max_images': {wanted}}}))")


def doc_to_image(doc: Mapping[str, Any]) -> list[Image.Image]:
    """The user turn's images (video frames included), in prompt order, each tagged with `IMAGE_MARK`."""
    found = as_doc(doc)
    images = list(found.rendered.images)
    check_image_limit(found, len(images))
    for image in images:
        image.info[IMAGE_MARK] = True
    return images


def doc_to_target(doc: Mapping[str, Any]) -> Any:
    return as_doc(doc).spec.doc_to_target(doc)


def process_results(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The task's own `process_results` (the first metric carries the sample record, see adapters.samples), limited
    to the task's metric list, without the metrics this document does not count for.

    A view of None means "this row does not count" and every aggregation skips it; lm-eval has to get no value at
    all instead, for its groups: it averages a metric over the subtasks that report it, so a subtask where no row
    counts must not report NaN (lmms-agentic's group aggregation skips NaN under lmms-eval; lm-eval ignores custom
    group aggregations). Such a metric is then absent from that subtask's lm-eval results (NaN under lmms-eval).
    """
    spec = as_doc(doc).spec
    values = dict(spec.process_results(doc, results))
    if spec.metrics:
        extra = sorted(set(values) - set(spec.metrics))
        if extra and spec.task not in _WARNED:
            _WARNED.add(spec.task)
            log.warning("%s: process_results returned %s, which the task's metric list does not name; not reported",
                        spec.task, ", ".join(extra))
        values = {name: values[name] for name in spec.metrics if name in values}
    return {name: value for name, value in values.items() if value is not None}
