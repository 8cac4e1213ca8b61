"""Scoring one RoboVista item: the per-item fields the metrics need, from the reply and the canonical document.

Owns: both released runner parsers applied to the reply as each runner read it (`parsers`), the default one's
letter as `pred_parity` (the paper's scoring, `parity_mode` names it), the stated confidence and the breakdown
labels. The strict letter (`pred`, `strict_acc`) is `adapters.core.extract.extract_choice`'s; the plugin adds it,
with its optional LLM-judge fallback, and the sample-record contract fields around these.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.core.extract import Extraction, split_confidence
from lmms_agentic.tasks.robovista.core import parity


def as_runner_read_it(response: object, mode: str) -> object:
    """The reply as the runner path behind each parser's published numbers saw it: the API runner (paper tables,
    parity_20260706) collapses whitespace runs before parsing; the local runner (the reference runs scored with
    parity_20260714) passes the text as generated."""
    if mode == "parity_20260706" and isinstance(response, str):
        return " ".join(response.split())
    return response


def released_parses(response: object, options: Sequence[str | None]) -> dict[str, Extraction]:
    """The answer of every released runner parser (`parity.PARSER_MODES`), each on the reply as its runner read it."""
    return {mode: parity.parse_answer(as_runner_read_it(response, mode), options, mode)
            for mode in parity.PARSER_MODES}


def score_item(doc: Mapping[str, Any], response: object) -> dict[str, Any]:
    """RoboVista's per-item fields for a canonical document (`McqDoc.to_row()`, ICL fields optional) and its reply."""
    released = released_parses(response, doc["options"])
    default = released[parity.DEFAULT_PARSER]
    meta = json.loads(doc["metadata_json"])
    return {
        "parity_mode": parity.DEFAULT_PARSER,
        "pred_parity": default.letter,
        "rule_parity": default.rule,
        "correct_parity": default.letter == doc["answer"],
        "parsers": {mode: {"letter": e.letter, "rule": e.rule, "correct": e.letter == doc["answer"]}
                    for mode, e in released.items()},
        "confidence": split_confidence(response)[1] if isinstance(response, str) else None,
        "task": meta["task"],
        "ability_type": meta["ability_type"],
        "ability_split": meta["ability_split"],
        "icl_example_id": doc.get("icl_example_id"),
    }
