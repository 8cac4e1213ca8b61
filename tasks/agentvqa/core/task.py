"""AgentVQA as an `adapters.core.task.CoreTask`: the names harness glue reads, and the prompt it shows.

Documents and variants come from `documents.py`, the option rendering and the prompt text from `prompt.py`, the
record (the headline `correct` included) from `scoring.py`, the metric table from `metrics.py`; this module adds
`prompt`, which puts the media the caller's reader prepares (`prompt.visuals`) before the text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmms_agentic.adapters.core.choice import ChoiceCall, ChoiceJudge, ChoiceVerdict
from lmms_agentic.adapters.core.task import MediaReader, Prompt
from lmms_agentic.tasks.agentvqa.core import documents as _documents
from lmms_agentic.tasks.agentvqa.core import prompt as _prompt
from lmms_agentic.tasks.agentvqa.core.metrics import METRICS, TASK_METRICS
from lmms_agentic.tasks.agentvqa.core.records import BENCHMARK
from lmms_agentic.tasks.agentvqa.core.scoring import score

VARIANTS = _documents.VARIANTS
MEDIA_FIELDS = (_documents.IMAGES,)
"""The document fields that hold image cells (a harness may hand the text hooks documents without them)."""
documents = _documents.documents

__all__ = ["BENCHMARK", "MEDIA_FIELDS", "METRICS", "TASK_METRICS", "VARIANTS", "ChoiceCall", "ChoiceJudge",
           "ChoiceVerdict", "documents", "prompt", "score"]


def prompt(doc: Mapping[str, Any], settings: Mapping[str, Any], media: MediaReader) -> Prompt:
    """One user turn, no system text: the images in dataset order (`media.image` of each cell), then the video
    (`media.video(path, settings["n_frames"])`: its frames, or its path where the model takes video natively), then
    the text (`prompt.prompt_text`: `settings` gives the history header and the instruction)."""
    return Prompt(None, (*_prompt.visuals(doc, settings, media), _prompt.prompt_text(doc, settings)))
