"""Loading `agentx_tools`'s documents and aggregating its metrics have no side effects: no tool runtime is made,
lmms-eval's loop is not patched, nothing is recorded for the results file (the round loop prepares the runtime; the
plugin asks for the facts when it writes the results file)."""

from __future__ import annotations

import pytest

from lmms_agentic.adapters import provenance
from lmms_agentic.adapters.agentic import tool_runtime
from lmms_agentic.tasks.agentx.tools import execution, hooks

from ...conftest import placeholder


def test_document_loading_makes_no_runtime_and_patches_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import lmms_eval.evaluator as evaluator

    loop = evaluator._run_generate_until_agentic
    monkeypatch.setattr(tool_runtime, "_DEFAULTS", {})
    monkeypatch.setenv("LMMS_AGENTIC_DATA", "mini")
    provenance.clear()
    manifest = placeholder("agentx")
    assert len(hooks.docs_text_answer(manifest)) == 8 and len(hooks.docs_generative(manifest)) == 2
    assert tool_runtime.default_made("agentx_tools") is None and evaluator._run_generate_until_agentic is loop
    assert execution.RUNTIME_KEY not in provenance.collected()
    provenance.clear()


def test_an_aggregation_records_nothing_and_the_plugin_derives_per_tool() -> None:
    provenance.clear()
    rows = [{"calls": 2, "valid": 1, "errors": 0, "unavailable": 0, "steps": 3, "invalid_replies": 0,
             "is_generative": False, "per_tool": {"OCR": {"calls": 2, "valid": 1, "errors": 0, "unavailable": 0,
                                                          "seconds": 1.0, "backends": ["local"]}}}]
    assert execution.valid_call_rate(rows) == 0.5
    assert provenance.collected() == {}
    provenance.items_aggregated(execution.valid_call_rate, rows)  # what the plugin does after lmms-eval aggregates
    generative = [{**rows[0], "is_generative": True}]
    provenance.items_aggregated(execution.valid_call_rate, generative)
    per_tool = provenance.collected()[execution.RUNTIME_KEY]["per_tool"]
    provenance.clear()
    assert set(per_tool) == {"text_answer", "generative"} and per_tool["text_answer"]["OCR"]["valid_rate"] == 0.5
