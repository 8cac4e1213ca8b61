"""AgentVQA's scoring: one reply -> the item's record, the headline `correct` and every field a metric reads.

The reply is read by the project's strict extractor (`adapters.core.choice.read_choice`) against the option texts
as the model saw them (`prompt.rendered_options(doc).texts`, so an echoed option in the run's coordinate convention
counts); AgentVQA's paper publishes no parser of its own. When the rules find no letter in a reply that has text, a
caller may pass a judge (`ChoiceJudge`, the MCQ fallback): it is asked which option the reply chose, never to solve
the question. Without a judge the item is unanswered. An unanswered item counts as wrong (`correct` is
`pred == answer`).

Record fields: `benchmark`, `id`, `domain`, `source`, `answer` (the gold letter of this row), `pred` (the letter, or
None), `correct`, `rule` (the extractor rule that decided, "judge", or "none"), `no_answer_reason`,
`extraction_path` ("rules", "judge" or "none"), `judge` (the judge's logged result, or None), `request_failed` (the
reply is the harness's failed-request marker), the item fields (`item_fields`) and `score` (100 × `correct`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lmms_agentic.adapters.core.choice import ChoiceJudge, read_choice, request_failed
from lmms_agentic.tasks.agentvqa.core.prompt import rendered_options, shows_history
from lmms_agentic.tasks.agentvqa.core.records import BENCHMARK
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


def score(doc: Mapping[str, Any], reply: object, judge: ChoiceJudge | None = None) -> dict[str, Any]:
    """The item's record (see the module docstring)."""
    rendered = rendered_options(doc)
    choice = read_choice(str(doc["id"]), str(doc["question"]), reply, rendered.texts, judge)
    correct = choice.letter == doc["answer"]
    return {
        "benchmark": BENCHMARK,
        "id": str(doc["id"]),
        "domain": str(doc["domain"]),
        "source": str(doc["source"]),
        "answer": str(doc["answer"]),
        "pred": choice.letter,
        "correct": correct,
        "rule": choice.rule,
        "no_answer_reason": choice.reason,
        "extraction_path": choice.path,
        "judge": choice.judge,
        "request_failed": request_failed(reply),
        **item_fields(doc, rendered),
        "score": 100.0 if correct else 0.0,
    }
