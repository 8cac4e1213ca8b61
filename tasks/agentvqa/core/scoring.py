"""AgentVQA's scoring: one reply -> the item's record, the headline `correct` and every field a metric reads.

The reply is read by the project's strict extractor (`adapters.core.extract.extract_choice`) against the option texts
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lmms_agentic.adapters.core.extract import extract_choice
from lmms_agentic.adapters.core.text import REQUEST_FAILED_PREFIX
from lmms_agentic.tasks.agentvqa.core.prompt import rendered_options, shows_history
from lmms_agentic.tasks.agentvqa.core.records import BENCHMARK
from lmms_agentic.tasks.agentvqa.core.sources import RenderedOptions

NOT_JUDGED = frozenset({"empty", "request_failed"})
"""Extractor reasons that leave nothing to judge (no text, or a failed request)."""


@dataclass(frozen=True)
class ChoiceCall:
    """What the judge is asked about one reply the rules could not read: the question, the options as shown, the
    reply."""

    item_id: str
    question: str
    options: tuple[str, ...]
    reply: str


@dataclass(frozen=True)
class ChoiceVerdict:
    """The judge's answer to one `ChoiceCall`: the chosen letter or None, why not (its unscored reason, or
    "judge_none" when it found no choice), and its result as the sample log keeps it."""

    letter: str | None
    reason: str | None = None
    logged: Mapping[str, Any] | None = None


ChoiceJudge = Callable[[Sequence[ChoiceCall]], Sequence[ChoiceVerdict]]
"""The MCQ fallback a caller may pass to `score`: one verdict per call, in order."""


@dataclass(frozen=True)
class Choice:
    """The letter read from a reply and how it was read."""

    letter: str | None
    rule: str
    path: str
    reason: str | None = None
    judge: Mapping[str, Any] | None = None


def read_choice(doc: Mapping[str, Any], reply: object, options: Sequence[str],
                judge: ChoiceJudge | None = None) -> Choice:
    """The strict rules first; the judge only when they found nothing in a reply with text and a judge is given."""
    rules = extract_choice(reply, options)
    if rules.letter is not None:
        return Choice(rules.letter, rules.rule, "rules")
    if judge is None or rules.reason in NOT_JUDGED or not isinstance(reply, str):
        return Choice(None, "none", "none", rules.reason)
    (verdict,) = judge([ChoiceCall(str(doc["id"]), str(doc["question"]), tuple(options), reply)])
    logged = dict(verdict.logged) if verdict.logged is not None else None
    if verdict.letter is None:
        return Choice(None, "none", "none", verdict.reason, logged)
    return Choice(verdict.letter, "judge", "judge", None, logged)


def request_failed(reply: object) -> bool:
    """Is the reply the harness's failed-request marker (also an unanswered item)?"""
    return isinstance(reply, str) and reply.lstrip().startswith(REQUEST_FAILED_PREFIX)


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
    choice = read_choice(doc, reply, rendered.texts, judge)
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
