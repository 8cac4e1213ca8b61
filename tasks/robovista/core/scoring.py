"""Scoring one RoboVista item: its record, every field any metric reads, from the reply and the canonical document.

Owns: the strict letter (`pred`, `adapters.core.extract.extract_choice`; when the rules find nothing in a reply with
text and the caller passes a judge, the MCQ fallback's letter: a `ChoiceJudge` is asked which option the reply
chose, never to solve the question), both released runner parsers applied to the reply as each runner read it
(`parsers`), the default one's letter as `pred_parity` (the paper's scoring, `parity_mode` names it), the stated
confidence, the breakdown labels and the headline `score` (100 x `correct_parity`, what `parity_acc` averages).
In the record, `pred` is the strict or judged letter (or None), `rule` the extractor rule that decided ("judge",
"none"), `extraction_path` "rules", "judge" or "none", `judge` the judge's logged result (or None).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.core.choice import ChoiceJudge, read_choice, request_failed
from lmms_agentic.adapters.core.extract import Extraction, split_confidence
from lmms_agentic.tasks.robovista.core import parity
from lmms_agentic.tasks.robovista.core.records import BENCHMARK

Doc = Mapping[str, Any]
Options = Sequence[str | None]


def as_runner_read_it(response: object, mode: str) -> object:
    """The reply as the runner behind each parser's published numbers saw it: the API runner (paper tables,
    parity_20260706) collapses whitespace runs; the local runner (reference runs, parity_20260714) does not."""
    if mode == "parity_20260706" and isinstance(response, str):
        return " ".join(response.split())
    return response


def released_parses(response: object, options: Options) -> dict[str, Extraction]:
    """The answer of every released runner parser (`parity.PARSER_MODES`), each on the reply as its runner read it."""
    read = {mode: as_runner_read_it(response, mode) for mode in parity.PARSER_MODES}
    return {mode: parity.parse_answer(text, options, mode) for mode, text in read.items()}


def score_item(doc: Doc, response: object) -> dict[str, Any]:
    """RoboVista's per-item fields for a canonical document (`McqDoc.to_row()`, ICL fields optional) and its reply."""
    released = released_parses(response, doc["options"])
    default = released[parity.DEFAULT_PARSER]
    meta = json.loads(doc["metadata_json"])
    confidence = split_confidence(response)[1] if isinstance(response, str) else None
    return {
        "parity_mode": parity.DEFAULT_PARSER,
        "pred_parity": default.letter,
        "rule_parity": default.rule,
        "correct_parity": default.letter == doc["answer"],
        "parsers": {mode: _parsed(e, doc["answer"]) for mode, e in released.items()},
        "confidence": confidence,
        **{key: meta[key] for key in ("task", "ability_type", "ability_split")},
        "icl_example_id": doc.get("icl_example_id"),
    }


def _parsed(extraction: Extraction, answer: str) -> dict[str, Any]:
    return {"letter": extraction.letter, "rule": extraction.rule, "correct": extraction.letter == answer}


def score(doc: Doc, reply: object, judge: ChoiceJudge | None = None) -> dict[str, Any]:
    """The item's record (see the module docstring)."""
    options = [str(option) for option in doc["options"]]
    choice = read_choice(str(doc["id"]), str(doc["question"]), reply, options, judge)
    record: dict[str, Any] = {
        "benchmark": BENCHMARK,
        "id": str(doc["id"]),
        "domain": str(doc["domain"]),
        "source": str(doc["source"]),
        "answer": str(doc["answer"]),
        "pred": choice.letter,
        "correct": choice.letter == doc["answer"],
        "rule": choice.rule,
        "no_answer_reason": choice.reason,
        "extraction_path": choice.path,
        "judge": choice.judge,
        "request_failed": request_failed(reply),
        **score_item(doc, reply),
    }
    record["score"] = 100.0 if record["correct_parity"] else 0.0
    return record
