"""Agent-X (828 vision-centric tool-use tasks scored by an LLM judge): the benchmark package of
`adapters/interface.py` — its harness-neutral `core`, `METRICS`, and the plugin's loading, mini split and example
replies."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from lmms_agentic.tasks.agentx import core
from lmms_agentic.tasks.agentx.tools import EXECUTION_METRICS

if TYPE_CHECKING:
    import datasets

METRICS = (*core.metrics.METRICS, *EXECUTION_METRICS)
"""The one-shot protocol's metrics, then the execution metrics of `agentx_tools` (`tools/execution.py`)."""


def load_docs() -> datasets.Dataset:
    """Every Agent-X task in canonical form, located and validated as an evaluation loads it."""
    from lmms_agentic.tasks.agentx import hooks

    return hooks.all_docs()


def build_mini(folder: Path) -> Path:
    """Write the bundled mini split (`data.json` + `files/`) into `folder`; returns the written `data.json`."""
    from lmms_agentic.tasks.agentx import mini

    return mini.write(folder)


def error_modes() -> None:
    """None: the paper has no judge-based error-mode study (its failure taxonomy is `core/failure_rules.py`)."""
    return None


def example_replies(doc: Mapping[str, Any]) -> list[str]:
    """Replies that exercise the scorer on `doc` (the golden test of an exported task folder): the ground-truth
    trace as a fenced JSON reply, an empty reply and free text with no trace."""
    steps = json.loads(doc.get("gt_steps_json") or "[]")
    trace = {"query": doc.get("query", ""), "reasoning_steps": [
        {"step": s.get("step"), "task": s.get("task"), "tool_used": s.get("tool"), "tool_output": s.get("output"),
         "thought": s.get("thought")} for s in steps if isinstance(s, dict)],
        "final_answer": json.loads(doc.get("gt_final_answer_json") or "{}")}
    return ["```json\n" + json.dumps(trace) + "\n```", "", "I think it is a cat."]


def export_hooks() -> ModuleType:
    """Its upstream export (`upstream.py`, an `adapters.upstream.UpstreamHooks`): the thin `utils.py`, the citation
    and licences, the README and pull-request notes."""
    from lmms_agentic.tasks.agentx import upstream

    return upstream
