"""RoboVista as an `adapters.core.task.CoreTask`: the names harness glue reads, and the prompt it shows.

Documents and variants are `documents.py`'s, the layout `prompt.py`'s, the record `scoring.py`'s, the metric table
`metrics.py`'s. This module adds `prompt`: `media.image` decodes each image cell, the task's `image_preprocess`
policy prepares it (`images.preprocess_image`), and the texts and images are laid out in order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PIL import Image

from lmms_agentic.adapters.core.choice import ChoiceCall as ChoiceCall
from lmms_agentic.adapters.core.choice import ChoiceJudge as ChoiceJudge
from lmms_agentic.adapters.core.choice import ChoiceVerdict as ChoiceVerdict
from lmms_agentic.adapters.core.schema import RecordError
from lmms_agentic.adapters.core.task import MediaReader, Prompt
from lmms_agentic.tasks.robovista.core import documents as _documents
from lmms_agentic.tasks.robovista.core import prompt as _layout
from lmms_agentic.tasks.robovista.core.images import ImagePolicy, preprocess_image
from lmms_agentic.tasks.robovista.core.metrics import METRICS as METRICS
from lmms_agentic.tasks.robovista.core.metrics import TASK_METRICS as TASK_METRICS
from lmms_agentic.tasks.robovista.core.records import BENCHMARK as BENCHMARK
from lmms_agentic.tasks.robovista.core.scoring import score as score

VARIANTS = _documents.VARIANTS
MEDIA_FIELDS = (_documents.IMAGES, _documents.ICL_IMAGES)
"""The document fields that hold image cells (a harness may hand the text hooks documents without them)."""
IMAGE_MODE = None
"""Readers hand over images in their stored mode: the image policy converts them (grayscale stays grayscale)."""
documents = _documents.documents


def prompt(doc: Mapping[str, Any], settings: Mapping[str, Any], media: MediaReader) -> Prompt:
    """The system text and the user turn (`settings` is the task YAML's prompt configuration): the item's images
    (`images`) and, under the in-context protocol when the document has an example, the example's (`icl_images`),
    each decoded by `media.image` and prepared by the task's image policy (`image_preprocess`: "paper", the
    default, or "none"); `prompt.build`'s segments with each image list spread out in order."""
    policy = ImagePolicy.named(str(settings.get("image_preprocess", "paper")))

    def prepared(column: str) -> list[Image.Image]:
        if doc.get(column) is None:
            raise RecordError(BENCHMARK, str(doc.get("id")), column, "is missing from the document")
        return [preprocess_image(media.image(cell), policy) for cell in doc[column]]

    images = prepared(_documents.IMAGES)
    if settings.get("protocol") == "icl" and "icl_example_id" not in doc:
        raise ValueError("protocol 'icl' needs the documents of an icl_seed<k> variant (VARIANTS), which carry the "
                         "in-context example")
    example = prepared(_documents.ICL_IMAGES) if _layout.shows_example(doc, settings) else []
    system, segments = _layout.build(doc, settings, images, example)
    spread = ([part] if isinstance(part, str) else part for part in segments)
    return Prompt(system, tuple(part for parts in spread for part in parts))
