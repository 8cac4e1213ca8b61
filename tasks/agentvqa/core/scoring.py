"""AgentVQA's per-item fields: what its metrics and reports read about one scored item, beyond the MCQ contract.

The reply is parsed by the project's strict extractor (`adapters.core.extract.extract_choice`) against the option
texts as the model saw them (`prompt.rendered_options(doc).texts`, so an echoed option in the run's coordinate
convention counts); AgentVQA's paper publishes no parser of its own. Correctness (`pred == answer`, an unanswered
item counting as wrong) is part of the MCQ contract record the plugin builds (`adapters.samples.mcq_record`); this
module adds the benchmark's own fields.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lmms_agentic.tasks.agentvqa.core.prompt import shows_history
from lmms_agentic.tasks.agentvqa.core.sources import RenderedOptions


def item_fields(doc: Mapping[str, Any], rendered: RenderedOptions) -> dict[str, Any]:
    """The input type, the variant's settings and how the options were rendered (`rendered`, as the model saw
    them): `coords_status` feeds `coords_as_released`, `coords_note` says why an item was shown as released."""
    return {
        "input_type": json.loads(doc["metadata_json"])["input_type"],
        "coord_convention": doc["coord_convention"],
        "coords_status": rendered.status,
        "coords_note": rendered.note,
        "with_history": shows_history(doc),
    }
