"""Agent-X per-item scoring: one reply and its document -> the deterministic fields the metrics read.

Owns the parse outcome (`trace.parse_trace`), the programmatic tool-set scores against the GT tools, the exact
match of "objective" answers, the failure rules (`failure_rules.classify`) and what the judges are given (the parsed
prediction record and the GT as released, `judge_gt`).  The document is a row of `records.normalise`.  The judged
fields, the loop check and the report fields are added by the plugin (`tasks/agentx/hooks.py`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from lmms_agentic.tasks.agentx.core.failure_rules import classify
from lmms_agentic.tasks.agentx.core.records import final_answer_fields
from lmms_agentic.tasks.agentx.core.release_data import LEGACY_ALIASES, TOOL_NAMES
from lmms_agentic.tasks.agentx.core.trace import PARSE_FAILURES, ParsedTrace, canonical_tool, toolset_scores


def _normalise_answer(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    text = re.sub(r"[^\w\s.]", " ", text).replace(",", "")
    return " ".join(text.split()).rstrip(".")


def exact_match(predicted: str, gold: str, query_type: str) -> bool | None:
    """Deterministic outcome check for factual ("objective") answers; None for interpretive ones."""
    if query_type.strip().lower() != "objective" or not gold.strip():
        return None
    return _normalise_answer(predicted) == _normalise_answer(gold)


def gt_answer(doc: Mapping[str, Any]) -> dict[str, Any]:
    """{"value", "justification"} of the released final answer (validated when loading)."""
    return final_answer_fields(json.loads(doc["gt_final_answer_json"])) or {"value": "", "justification": ""}


def judge_gt(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The GT block the judges get, as released: `[[...]]`-wrapped steps stay wrapped, malformed steps stay in."""
    return {"query": doc["query"], "GT reasoning steps": json.loads(doc["gt_steps_json"]),
            "GT final answer": json.loads(doc["gt_final_answer_json"])}


def gold_tools(doc: Mapping[str, Any]) -> list[str]:
    """The GT tool set, canonical names: the keys of `tool_metadata`, else (none, or not an object) the steps'
    tools."""
    tool_metadata = json.loads(doc["tool_metadata_json"])
    names = list(tool_metadata) if isinstance(tool_metadata, dict) and tool_metadata else doc["gt_tools"]
    return [t for t in (canonical_tool(name, TOOL_NAMES, LEGACY_ALIASES) for name in names) if t]


def score_trace(doc: Mapping[str, Any], trace: ParsedTrace) -> dict[str, Any]:
    """The deterministic per-item fields of a parsed reply, in sample-record order.

    The deterministic checks use the unwrapped GT steps without the malformed ones (`gt_steps_flat_json`).
    `parse_failure` is set only when nothing could be read from the reply (`trace.PARSE_FAILURES`); the issues of a
    reply that did parse (several tools in a step, an unknown tool, no final answer -- which a generative task
    legitimately has) are in `trace_issues`."""
    gt_final = gt_answer(doc)
    toolset = toolset_scores([s.tool_canonical for s in trace.steps if s.tool_canonical], gold_tools(doc))
    return {
        "format_ok": trace.format_ok,
        "parse_failure": trace.failure if trace.failure in PARSE_FAILURES else None,
        "trace_issues": list(trace.issues), "parse_path": trace.parse_path,
        "n_steps": len(trace.steps), "toolset_f1_prog": toolset["f1"],
        "toolset_precision_prog": toolset["precision"], "toolset_recall_prog": toolset["recall"],
        "exact_match": exact_match(trace.final_answer, str(gt_final.get("value", "")), doc["query_type"]),
        "errors": classify(trace.notebook_record(doc["query"], ", ".join(doc["media"])), gt_final, TOOL_NAMES,
                           gt_steps=json.loads(doc["gt_steps_flat_json"])),
        "prediction": trace.prediction_record(),
    }
