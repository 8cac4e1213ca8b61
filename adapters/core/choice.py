"""Reading the chosen option of a multiple-choice reply: the strict rules, then (optionally) a judge's reading.

Standard library only; shared by every MCQ core. `read_choice` applies the project's strict extractor
(`extract.extract_choice`) to the reply against the options as the model saw them. When the rules find no letter in
a reply that has text and the caller passes a `ChoiceJudge` (the MCQ fallback), the judge is asked which option the
reply chose, never to solve the question; a reply with nothing to read (empty, a failed request) is never judged.
Without a letter the item is unanswered, with the reason the rules or the judge gave.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lmms_agentic.adapters.core.extract import extract_choice
from lmms_agentic.adapters.core.text import REQUEST_FAILED_PREFIX

NOT_JUDGED = frozenset({"empty", "request_failed"})
"""The extractor's reasons for no letter that leave nothing for a judge to read."""


@dataclass(frozen=True)
class ChoiceCall:
    """What the judge is asked about one reply the rules could not read: the question, the options as shown
    (positional: an empty text keeps its letter), the reply."""

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
"""The MCQ fallback a caller may pass to a core's `score`: one verdict per call, in order."""


@dataclass(frozen=True)
class Choice:
    """The letter read from a reply and how: `rule` (the extractor rule that decided, "judge", or "none"), `path`
    ("rules", "judge" or "none"), the reason when there is no letter, the judge's logged result."""

    letter: str | None
    rule: str
    path: str
    reason: str | None = None
    judge: dict[str, Any] | None = None


def read_choice(item_id: str, question: str, reply: object, options: Sequence[str],
                judge: ChoiceJudge | None = None) -> Choice:
    """The strict rules first; the judge only when they found nothing in a reply with text and a judge is given."""
    rules = extract_choice(reply, options)
    if rules.letter is not None:
        return Choice(rules.letter, rules.rule, "rules")
    if judge is None or rules.reason in NOT_JUDGED or not isinstance(reply, str):
        return Choice(None, "none", "none", rules.reason)
    (verdict,) = judge([ChoiceCall(item_id, question, tuple(options), reply)])
    logged = dict(verdict.logged) if verdict.logged is not None else None
    if verdict.letter is None:
        return Choice(None, "none", "none", verdict.reason, logged)
    return Choice(verdict.letter, "judge", "judge", None, logged)


def request_failed(reply: object) -> bool:
    """Is the reply the harness's failed-request marker (an unanswered item)?"""
    return isinstance(reply, str) and reply.lstrip().startswith(REQUEST_FAILED_PREFIX)
