"""MCQ answer extraction with an optional LLM-judge fallback (rules first, judge only for what rules miss).

Owns: the fallback's prompt template, the per-run switch (``LMMS_AGENTIC_MCQ_JUDGE=1``; off by default, read when
``mcq_judge_enabled`` runs) and ``McqExtraction``, which records the extraction path for the sample log:

* ``path="rules"``: ``adapters.core.extract.extract_choice`` found the letter; no judge call.
* ``path="judge"``: rules found nothing, the switch is on, and the judge named a valid letter.
* ``path="none"``: no letter; ``reason`` says why: the extractor's reason when the judge is off or there is
  nothing to judge ("empty", "request_failed"; with the switch off also "no_match"/"ambiguous"), "judge_none"
  when the judge answered NONE, or the judge's unscored reason ("parse_failure", "transport_error", "refusal",
  "not_configured").

The judge sees the question and options (trusted dataset text) and the model's response fenced as data; its reply
must be exactly one valid letter or NONE (``parsers.ChoiceParser``).  It is asked which option the response
chose, never to solve the question.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lmms_agentic.adapters.core.choice import ChoiceCall, ChoiceJudge, ChoiceVerdict
from lmms_agentic.adapters.core.extract import Extraction, extract_choice, option_letters

from .client import JudgeClient, default_client
from .config import env_flag
from .parsers import ChoiceParser
from .result import JudgeResult
from .templates import JudgeRequest, PromptTemplate

__all__ = [
    "ENV_MCQ_JUDGE",
    "MCQ_TEMPLATE_ID",
    "McqExtraction",
    "extract_many_with_fallback",
    "extract_with_fallback",
    "mcq_judge_enabled",
    "mcq_template",
]

ENV_MCQ_JUDGE = "LMMS_AGENTIC_MCQ_JUDGE"
MCQ_TEMPLATE_ID = "mcq_fallback"
MCQ_TEMPLATE_VERSION = "1"
Options = Sequence[str | None] | int
_NOT_JUDGEABLE = frozenset({"empty", "request_failed"})

_SYSTEM = (
    "You are a careful grading assistant. You read a model's response to a multiple-choice question and report "
    "which option letter the response chose as its final answer. You never solve the question yourself."
)
_USER = """Question (may be omitted):
{{question}}

Options:
{{options}}

Model response:
{{response}}

Which option letter did the model response choose as its final answer? Judge only what the response says, \
not which option is correct. If the response chooses no option, several options, or its choice cannot be \
determined, answer NONE.
Reply with exactly one of {{letters}} or NONE, and nothing else."""


@functools.lru_cache(maxsize=16)
def mcq_template(letters: str) -> PromptTemplate:
    """The fallback template for questions with option ``letters`` (e.g. "ABCDE")."""
    return PromptTemplate(
        id=MCQ_TEMPLATE_ID, version=MCQ_TEMPLATE_VERSION, system=_SYSTEM, user=_USER,
        parser=ChoiceParser(letters), trusted=frozenset({"question", "options", "letters"}), max_tokens=8,
    )


def mcq_judge_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """True when ``LMMS_AGENTIC_MCQ_JUDGE`` is set to 1/true/yes/on (default off)."""
    env = os.environ if environ is None else environ
    return env_flag(env.get(ENV_MCQ_JUDGE, ""), ENV_MCQ_JUDGE)


@dataclass(frozen=True)
class McqExtraction:
    """The chosen letter (or None), how it was found, and why not when it was not."""

    letter: str | None
    path: Literal["rules", "judge", "none"]
    rule: str
    """The extractor rule that decided, "judge", or "none"."""
    reason: str | None = None
    """Why there is no letter (None when ``letter`` is set)."""
    rules_reason: str | None = None
    """The rule-based extractor's reason when it found nothing."""
    judge: JudgeResult | None = None
    """The judge's result when the judge was asked."""

    def as_dict(self) -> dict[str, Any]:
        """Plain dict for sample logs."""
        return {"letter": self.letter, "path": self.path, "rule": self.rule, "reason": self.reason,
                "rules_reason": self.rules_reason, "judge": self.judge.as_dict() if self.judge else None}


def _letters_and_texts(options: Options) -> tuple[str, list[str | None] | None]:
    if isinstance(options, int):
        return option_letters(options), None
    return option_letters(len(options)), list(options)


def _request(response: str, options: Options, question: str | None, item_id: str | None) -> JudgeRequest:
    letters, texts = _letters_and_texts(options)
    if texts is None:
        listed = ", ".join(letters)
    else:
        lines = zip(letters, texts, strict=True)
        listed = "\n".join(f"{letter}. {text if text else '(no text)'}" for letter, text in lines)
    values = {"question": question or "(not provided)", "options": listed, "response": response,
              "letters": ", ".join(letters)}
    return JudgeRequest(mcq_template(letters), values, item_id)


def _from_rules(rules: Extraction) -> McqExtraction | None:
    if rules.letter is not None:
        return McqExtraction(rules.letter, "rules", rules.rule)
    return None


def _from_judge(rules: Extraction, result: JudgeResult) -> McqExtraction:
    if not result.scored:
        return McqExtraction(None, "none", "none", result.unscored_reason, rules.reason, result)
    if result.label == "NONE" or result.label is None:
        return McqExtraction(None, "none", "none", "judge_none", rules.reason, result)
    return McqExtraction(result.label, "judge", "judge", None, rules.reason, result)


def extract_with_fallback(response: object, options: Options, *, question: str | None = None,
                          item_id: str | None = None, enabled: bool | None = None,
                          client: JudgeClient | None = None) -> McqExtraction:
    """Rules first; the judge only when rules find nothing and the fallback is on (``enabled`` or the env)."""
    rules = extract_choice(response, options)
    done = _from_rules(rules)
    if done is not None:
        return done
    on = mcq_judge_enabled() if enabled is None else enabled
    if not on or rules.reason in _NOT_JUDGEABLE or not isinstance(response, str):
        return McqExtraction(None, "none", "none", rules.reason, rules.reason)
    judge = client if client is not None else default_client()
    return _from_judge(rules, judge.judge(_request(response, options, question, item_id)))


def extract_many_with_fallback(responses: Sequence[object], options: Sequence[Options], *,
                               questions: Sequence[str | None] | None = None,
                               item_ids: Sequence[str | None] | None = None, enabled: bool | None = None,
                               client: JudgeClient | None = None, progress: bool = False) -> list[McqExtraction]:
    """Batch form: rules on every response, one ``judge_many`` over the misses (for rescoring runs)."""
    if len(options) != len(responses) or (questions is not None and len(questions) != len(responses)) or (
            item_ids is not None and len(item_ids) != len(responses)):
        raise ValueError("responses, options, questions and item_ids must have the same length")
    on = mcq_judge_enabled() if enabled is None else enabled
    out: list[McqExtraction | None] = []
    pending: list[tuple[int, Extraction, JudgeRequest]] = []
    for i, (response, opts) in enumerate(zip(responses, options, strict=True)):
        rules = extract_choice(response, opts)
        done = _from_rules(rules)
        if done is None and (not on or rules.reason in _NOT_JUDGEABLE or not isinstance(response, str)):
            done = McqExtraction(None, "none", "none", rules.reason, rules.reason)
        out.append(done)
        if done is None:
            question = questions[i] if questions is not None else None
            item_id = item_ids[i] if item_ids is not None else None
            pending.append((i, rules, _request(str(response), opts, question, item_id)))
    if pending:
        judge = client if client is not None else default_client()
        results = judge.judge_many([req for _, _, req in pending], progress=progress, desc="mcq judge")
        for (i, rules, _), result in zip(pending, results, strict=True):
            out[i] = _from_judge(rules, result)
    return [x for x in out if x is not None]


def _verdict(extraction: McqExtraction) -> ChoiceVerdict:
    return ChoiceVerdict(extraction.letter, extraction.reason,
                         extraction.judge.as_dict() if extraction.judge is not None else None)


def fallback_choices(calls: Sequence[ChoiceCall]) -> list[ChoiceVerdict]:
    """The MCQ cores' `ChoiceJudge` (`adapters.core.choice`): this LLM judge on each reply the rules could not
    read."""
    return [_verdict(extract_with_fallback(call.reply, list(call.options), question=call.question,
                                           item_id=call.item_id, enabled=True)) for call in calls]


def choice_judge() -> ChoiceJudge | None:
    """The judge an MCQ core may call: `fallback_choices` when LMMS_AGENTIC_MCQ_JUDGE=1 (off by default)."""
    return fallback_choices if mcq_judge_enabled() else None
