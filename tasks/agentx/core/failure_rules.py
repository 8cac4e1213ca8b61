"""Agent-X's deterministic failure rules: the rule-based failure taxonomy of the authors' error-analysis notebook
(``analysis/error_analysis.ipynb``), computed in code; no LLM involved.

``classify`` checks ONE prediction record of the released prediction-file shape ``{"query", "filename",
**model_json}`` (``ParsedTrace.notebook_record``) as the notebook does: raw keys, nothing from ``core/trace.py``.
The rules, the notebook bug not reproduced and the keyword approximation used without spaCy are in the benchmark
README ("Failure rules").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

CATEGORIES: dict[str, tuple[str, ...]] = {
    "planning": ("no_action_no_response", "whole_response_is_thought", "tool_conflict_or_repetition"),
    "formatting": ("invalid_json_format", "answer_without_format"),
    "reasoning": ("misinterpreting_visual_content", "step_keyword_mismatch"),
}
FORMAT_TOP_KEYS = ("query", "filename", "final_answer")
FORMAT_STEP_KEYS = ("step", "task", "tool_used", "tool_output", "thought")
TOP_KEYWORDS = 21

# English stop words (the spaCy list, abridged), for the keyword approximation.
_STOP_TEXT = """
a about above across after afterwards again against all almost alone along already also although always am among
amongst amount an and another any anyhow anyone anything anyway anywhere are around as at back be became because
become becomes becoming been before beforehand behind being below beside besides between beyond both bottom but by
ca call can cannot could did do does doing done down due during each either else elsewhere empty enough even ever
every everyone everything everywhere except few first for former formerly from front full further get give go had
has have he hence her here hereafter hereby herein hereupon hers herself him himself his how however i if in indeed
into is it its itself just keep last latter latterly least less made make many may me meanwhile might mine more
moreover most mostly move much must my myself name namely neither never nevertheless next no nobody none noone nor
not nothing now nowhere of off often on once one only onto or other others otherwise our ours ourselves out over own
part per perhaps please put quite rather re really regarding same say see seem seemed seeming seems serious several
she should show side since so some somehow someone something sometime sometimes somewhere still such take than that
the their them themselves then thence there thereafter thereby therefore therein thereupon these they third this
those though through throughout thru thus to together too top toward towards under unless until up upon us used
using various very via was we well were what whatever when whence whenever where whereafter whereas whereby wherein
whereupon wherever whether which while whither who whoever whole whom whose why will with within without would yet
you your yours yourself yourselves two three four five six seven eight nine ten eleven twelve fifteen twenty forty
fifty sixty hundred
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_TEXT.split())

_TOKEN = re.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)*")
_LETTER = re.compile(r"[a-z]")


def is_empty_value(value: object) -> bool:
    """Tool-call statistics: None, "" (or whitespace), "null" (any case), 0 and empty containers are empty."""
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip().lower() in ("", "null")
    if isinstance(value, (int, float)):
        return value == 0
    if isinstance(value, (list, tuple, dict, set)):
        return len(value) == 0
    return False


def _text(value: object) -> str:
    return "" if value is None else value if isinstance(value, str) else str(value)


def unwrap_lists(steps: object) -> list[Any]:
    """A list of steps, unwrapped once when every item is a list ([[...]]); anything but a list gives no steps."""
    if not isinstance(steps, list):
        return []
    if steps and all(isinstance(item, list) for item in steps):
        return [step for item in steps for step in item]
    return list(steps)


def _step_tool(step: Mapping[str, Any]) -> object:
    used = step.get("tool_used")
    return used if not is_empty_value(used) else step.get("tool")


def _step_output(step: Mapping[str, Any]) -> object:
    output = step.get("tool_output")
    return output if not is_empty_value(output) else step.get("output")


# ---------------------------------------------------------------- keywords
def _lemma(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 4 and token.endswith(("sses", "xes", "ches", "shes", "zes")):
        return token[:-2]
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def _approx_candidates(text: str) -> list[str]:
    tokens = _TOKEN.findall(text.lower())
    content = [len(tok) > 1 and tok not in STOP_WORDS and _LETTER.search(tok) is not None for tok in tokens]
    out: list[str] = []
    for i, tok in enumerate(tokens):
        if not content[i]:
            continue
        out.append(_lemma(tok))
        if i + 1 < len(tokens) and content[i + 1]:
            chunk = f"{tok} {tokens[i + 1]}"
            if 1 < len(chunk) < 30:
                out.append(chunk)
    return out


@cache
def _spacy_model() -> Any:
    try:
        import spacy

        return spacy.load("en_core_web_sm")
    # not installed, the model missing or built for another spaCy: use the approximation
    except (ImportError, OSError, ValueError):
        return None


def _spacy_candidates(nlp: Any, text: str) -> list[str]:
    doc = nlp(text)
    out = [chunk.text.lower() for chunk in doc.noun_chunks if 1 < len(chunk.text) < 30]
    out += [tok.lemma_.lower() for tok in doc if tok.pos_ in ("NOUN", "PROPN") and not tok.is_stop]
    return out


def extract_keywords(text: str, top_k: int = TOP_KEYWORDS, use_spacy: bool | None = None) -> list[str]:
    """The ``top_k`` most common keyword candidates of ``text`` (lower case; README "Failure rules")."""
    nlp = _spacy_model() if use_spacy is not False else None
    if use_spacy is True and nlp is None:
        raise RuntimeError("use_spacy=True but spacy with en_core_web_sm is not importable")
    candidates = _spacy_candidates(nlp, text) if nlp is not None else _approx_candidates(text)
    return [word for word, _ in Counter(candidates).most_common(top_k)]


def _no_keyword_match(gt_text: str, pred_text: str, use_spacy: bool | None) -> bool:
    pred = pred_text.lower()
    return not any(keyword in pred for keyword in extract_keywords(gt_text, use_spacy=use_spacy))


# ---------------------------------------------------------------- rules
def _answer(final_answer: object) -> tuple[str, str]:
    """(value, justification) of a final answer: a dict's fields, or a bare string as the value."""
    if isinstance(final_answer, Mapping):
        return _text(final_answer.get("value")), _text(final_answer.get("justification"))
    if isinstance(final_answer, str):
        return final_answer, ""
    return "", ""


def invalid_json_format(record: Mapping[str, Any]) -> bool:
    """The "invalid JSON format" error of a prediction-file record (README "Failure rules")."""
    if any(key not in record for key in FORMAT_TOP_KEYS):
        return True
    final_answer = record["final_answer"]
    if not isinstance(final_answer, Mapping) or "value" not in final_answer or "justification" not in final_answer:
        return True
    steps = record.get("reasoning_steps")
    if not isinstance(steps, list):
        return True
    return any(not isinstance(step, Mapping) or any(key not in step for key in FORMAT_STEP_KEYS) for step in steps)


def _tool_conflict_or_repetition(steps: object) -> bool:
    if not isinstance(steps, list):
        return False
    previous = ""
    for step in steps:
        if not isinstance(step, Mapping):
            previous = ""
            continue
        tool, used = step.get("tool"), step.get("tool_used")
        if not is_empty_value(tool) and not is_empty_value(used) and _norm(tool) != _norm(used):
            return True
        current = "" if is_empty_value(_step_tool(step)) else _norm(_step_tool(step))
        if current and current == previous:
            return True
        previous = current
    return False


def _norm(value: object) -> str:
    return _text(value).strip().lower()


def _steps_text(steps: Sequence[Any], gt: bool) -> str:
    parts: list[str] = []
    for step in steps:
        if not isinstance(step, Mapping):
            if not gt:  # a GT step that is not an object is skipped, as the authors' reader does ("skip malformed")
                parts.append(_text(step))
            continue
        tool = step.get("tool") if gt else _step_tool(step)
        output = step.get("output") if gt else _step_output(step)
        parts += [_text(step.get("task")), _text(tool), _text(output), _text(step.get("thought"))]
    return " ".join(part for part in parts if part)


def classify(
    record: Mapping[str, Any],
    gt_final_answer: Mapping[str, Any] | None,
    tool_names: Sequence[str],
    *,
    gt_steps: object = None,
    use_spacy: bool | None = None,
) -> dict[str, bool]:
    """The taxonomy's error flags of one prediction record (True = the error is present), keyed as ``CATEGORIES``;
    a reasoning key only when its GT is given.  No rule reads ``tool_names`` (a tool-call statistic)."""
    del tool_names
    steps = record.get("reasoning_steps")
    final_answer = record.get("final_answer")
    value, justification = _answer(final_answer)
    dict_value = final_answer.get("value") if isinstance(final_answer, Mapping) else None
    invalid = invalid_json_format(record)
    flags = {
        "no_action_no_response": not steps and (not isinstance(final_answer, Mapping) or not dict_value),
        "whole_response_is_thought": not steps and isinstance(final_answer, Mapping) and bool(dict_value),
        "tool_conflict_or_repetition": _tool_conflict_or_repetition(steps),
        "invalid_json_format": invalid,
        "answer_without_format": invalid and bool(value.strip()),
    }
    if gt_final_answer is not None:
        gt_value, gt_justification = _answer(gt_final_answer)
        flags["misinterpreting_visual_content"] = _no_keyword_match(
            f"{gt_value} {gt_justification}", f"{value} {justification}", use_spacy)
    if gt_steps is not None:
        flags["step_keyword_mismatch"] = _no_keyword_match(
            _steps_text(unwrap_lists(gt_steps), gt=True), _steps_text(unwrap_lists(steps), gt=False), use_spacy)
    return flags
