"""RoboVista as an `adapters.core.task.CoreTask`: the names harness glue reads, and the prompt it shows.

Documents and variants come from `documents.py`, the layout from `prompt.py`, the image policy from `images.py`,
the record (the headline `correct_parity` and its `score` included) from `scoring.py`, the metric table from
`metrics.py`. This module adds `prompt`: the caller's reader decodes each image cell (`media.image`), the task's
`image_preprocess` policy prepares it (`images.preprocess_image`), and `assemble` lays texts and images out in order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image

from lmms_agentic.adapters.core.choice import ChoiceCall, ChoiceJudge, ChoiceVerdict
from lmms_agentic.adapters.core.schema import RecordError
from lmms_agentic.adapters.core.task import MediaReader, Prompt
from lmms_agentic.tasks.robovista.core import documents as _documents
from lmms_agentic.tasks.robovista.core import prompt as _layout
from lmms_agentic.tasks.robovista.core.images import ImagePolicy, preprocess_image
from lmms_agentic.tasks.robovista.core.metrics import METRICS, TASK_METRICS
from lmms_agentic.tasks.robovista.core.records import BENCHMARK
from lmms_agentic.tasks.robovista.core.scoring import score

VARIANTS = _documents.VARIANTS
documents = _documents.documents

__all__ = ["BENCHMARK", "METRICS", "TASK_METRICS", "VARIANTS", "ChoiceCall", "ChoiceJudge", "ChoiceVerdict",
           "assemble", "documents", "image_cells", "image_policy", "prompt", "require_examples", "score"]


def image_policy(settings: Mapping[str, Any]) -> ImagePolicy:
    """The task's image preparation (`image_preprocess`: "paper", the default, or "none")."""
    return ImagePolicy.named(str(settings.get("image_preprocess", "paper")))


def image_cells(doc: Mapping[str, Any], column: str) -> Sequence[Any]:
    """The document's image cells under `column` (`images`, or `icl_images` for its example)."""
    cells = doc.get(column)
    if cells is None:
        raise RecordError(BENCHMARK, str(doc.get("id")), column, "is missing from the document")
    return list(cells)


def require_examples(doc: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
    """The in-context protocol needs the documents of an `icl_seed<k>` variant."""
    if settings.get("protocol") == "icl" and "icl_example_id" not in doc:
        raise ValueError("protocol 'icl' needs the documents of an icl_seed<k> variant (VARIANTS), which carry the "
                         "in-context example")


def assemble(doc: Mapping[str, Any], settings: Mapping[str, Any], images: Sequence[Image.Image],
             example_images: Sequence[Image.Image]) -> Prompt:
    """The prompt of one document on its prepared images (and its example's, shown only under the in-context
    protocol when it has one): `prompt.build`'s segments with each image list spread out in order."""
    system, segments = _layout.build(doc, settings, list(images), list(example_images))
    parts = [part for segment in segments for part in ([segment] if isinstance(segment, str) else segment)]
    return Prompt(system, tuple(parts))


def prompt(doc: Mapping[str, Any], settings: Mapping[str, Any], media: MediaReader) -> Prompt:
    """The system text and the user turn (`settings` is the task YAML's prompt configuration): the item's images
    and, under the in-context protocol, the example's, each decoded by `media.image` and prepared by the task's
    image policy."""
    policy = image_policy(settings)
    images = [preprocess_image(media.image(cell), policy) for cell in image_cells(doc, _documents.IMAGES)]
    require_examples(doc, settings)
    example_images = ([preprocess_image(media.image(cell), policy)
                       for cell in image_cells(doc, _documents.ICL_IMAGES)]
                      if _layout.shows_example(doc, settings) else [])
    return assemble(doc, settings, images, example_images)
