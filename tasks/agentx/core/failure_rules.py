"""Agent-X's deterministic failure rules: the rule-based failure taxonomy of the authors' error-analysis notebook,
computed in code; no LLM involved (not to be confused with the paper's judge-based error-mode study).

Owns the checks of ``analysis/error_analysis.ipynb`` over ONE prediction record, the released prediction-file shape
``{"query", "filename", **model_json}`` as a plain dict (build it with ``ParsedTrace.notebook_record``).  Like the
notebook, every rule reads the raw record: nothing here depends on ``core/trace.py``, keys are not canonicalised
unless a rule says so, and ``[[...]]``-wrapped steps are kept as written except where noted.  Summing the per-record
results over a prediction file gives the notebook's error counts (README.md).

``classify`` keys, grouped as in the paper (``CATEGORIES``):
  planning    no_action_no_response        steps falsy AND (final_answer not a dict OR its "value" falsy); a bare
                                           string answer therefore counts (as in the notebook)
              whole_response_is_thought    steps falsy AND final_answer is a dict with a truthy "value"
              tool_conflict_or_repetition  a dict step has both "tool" and "tool_used", non-empty and different
                                           (case-insensitive, stripped); or two consecutive steps name the same
                                           tool ("tool_used" else "tool", raw name, case-insensitive, stripped)
  formatting  invalid_json_format          any of: a top-level key of {query, filename, final_answer} missing;
                                           final_answer not a dict with "value" and "justification";
                                           reasoning_steps not a list; a step not a dict holding all of {step, task,
                                           tool_used, tool_output, thought} (this punishes "tool", which the
                                           prompt's own example uses, and [[...]] wrapping -- both as released)
              answer_without_format        invalid_json_format AND a non-empty answer (the dict's "value", or a
                                           bare-string final_answer -- the notebook's handling of that is unknown)
  reasoning   misinterpreting_visual_content   none of the 21 most common GT-answer keywords (GT value +
                                           justification) occurs, case-insensitively, in the predicted value +
                                           justification.  With no GT keywords at all (empty GT answer) nothing can
                                           occur, so the item fails -- what ``any([])`` does in the notebook.
              step_keyword_mismatch        the "incorrect spatial reasoning / sequencing" check done as the notebook
                                           INTENDED: keywords of the GT steps (task, tool, output, thought) against
                                           the predicted steps (task, tool_used else tool, tool_output else output,
                                           thought).  NOTEBOOK BUG, not reproduced: the released cell passes the
                                           final-answer keywords instead of the step keywords (the notebook
                                           prints "0 'reasoning' match (buggy check)").  Steps are unwrapped
                                           from [[...]] here; a GT step that is not an object is skipped, as
                                           in the notebook's GT reader.
A reasoning key is present only when its GT is given (gt_final_answer / gt_steps not None).

KEYWORDS -- DEVIATION FROM THE NOTEBOOK.  The notebook uses spaCy ``en_core_web_sm``: noun chunks whose text has
1 < length < 30 plus NOUN/PROPN lemmas that are not stop words, lower-cased, 21 most common.  That model cannot be
downloaded here, so the default is a deterministic approximation: lower-cased word tokens ``[a-z0-9]+`` (joined by
inner "." or "-"); unigram candidates = tokens of 2+ characters with a letter, not in ``STOP_WORDS``, reduced by a
crude plural rule (-ies -> -y, -sses/-xes/-ches/-shes/-zes -> drop "es", else a final "s" not after s/u/i); chunk
candidates = adjacent pairs of such non-stop tokens as written ("red umbrellas"), 1 < length < 30; the 21 most
common by count, ties in order of first occurrence.  Without a tagger, verbs and adjectives are candidates too, so
counts differ from the notebook.  With ``use_spacy=None`` (default) spaCy is used when ``spacy`` and
``en_core_web_sm`` happen to be importable; ``use_spacy=False`` forces the approximation (tests do), True requires it.
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


def _unwrap(steps: object) -> list[Any]:
    """A list of steps, unwrapped once from [[...]]; anything that is not a list gives no steps."""
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
    """The ``top_k`` most common keyword candidates of ``text`` (lower case); see the module docstring."""
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
    """The "invalid JSON format" error on a prediction-file record (see the module docstring for the four rules)."""
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
    """The taxonomy's error flags of one prediction record (True = the error is present); keys as in ``CATEGORIES``.

    ``tool_names`` is accepted for the callers' convenience; no classify rule reads it (invalid tool names
    are a tool-call statistic, as in the notebooks).  Reasoning keys appear only when their GT is given."""
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
            _steps_text(_unwrap(gt_steps), gt=True), _steps_text(_unwrap(steps), gt=False), use_spacy)
    return flags
