"""RoboVista's failure analysis (`tasks/robovista/error_study.py`): every prediction analysed, perception vs
reasoning, the judge sees the ground-truth human reasoning and the item's own images; shares over all predictions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from lmms_agentic.adapters import benchmarks
from lmms_agentic.error_analysis import output
from lmms_agentic.error_analysis.judging import Assignment
from lmms_agentic.judges.error_modes import CORRECT, Item
from lmms_agentic.tasks.robovista import error_study, hooks


@pytest.fixture
def docs(mini_env: None) -> Iterator[dict[str, dict[str, Any]]]:
    yield {str(row["id"]): dict(row) for row in hooks.all_docs()}


def _item(doc: dict[str, Any], pred: str | None, reply: str = "<think>It is red.</think>A") -> Item:
    record = {"benchmark": "robovista", "id": doc["id"], "domain": doc["domain"], "source": doc["source"],
              "answer": doc["answer"], "pred": "E", "pred_parity": pred, "correct": False,
              "correct_parity": pred == doc["answer"], "request_failed": False}
    return Item("robovista_cot", "robovista_cot", record, reply, "correct_parity")


def test_declaration() -> None:
    spec = benchmarks.get("robovista").package().error_modes()
    assert spec is error_study.ERROR_MODES and spec.population == "all" and spec.shared_taxonomy
    modes = spec.all_modes("domestic")
    assert modes[0] is CORRECT and modes[1].key == "misidentification" and modes[1].group == "perception"
    assert {m.group for m in modes} == {"", "perception", "reasoning", "other"}
    assert spec.reference == {("all", "misidentification"): 30.2, ("all", "correct"): 36.5}


@pytest.mark.parametrize(("reply", "mode"), [
    ('{"mode": "Misidentification", "reason": "called the green block red"}', "Misidentification"),
    ('{"mode": "reasoning_error", "reason": "r"}', "reasoning_error"),
    ('{"mode": "Correct", "reason": "r"}', None),              # correct is never the judge's to give
    ('{"mode": "Perception", "reason": "r"}', None),
])
def test_parser(reply: str, mode: str | None) -> None:
    parsed = error_study.TEMPLATE.parser(reply)
    assert (parsed.fields.get("mode") if parsed.ok else None) == mode


def test_request_carries_human_reasoning_and_parity_letter(docs: dict[str, dict[str, Any]]) -> None:
    doc = docs["q_mini_01"]
    item = _item(doc, "A")
    assert item.pred_field == "pred_parity" and not item.correct
    kwargs = {"protocol": "icl", "image_preprocess": "paper", "suffix": "x"}  # ICL example images stay out
    built = error_study.build(item, doc, kwargs, None)
    meta = json.loads(doc["metadata_json"])
    assert built.values["reasoning"] == meta["reasoning"]
    assert built.values["chosen"] == f"A. {doc['options'][0]}"
    assert len(built.images) == len(doc["images"]) and max(built.images[0].size) <= 720
    assert "reasoning" not in built.template.untrusted and built.template.untrusted == ("response",)


def test_shares_are_over_all_predictions() -> None:
    modes = {m.key: m for m in error_study.MODES}

    def assignment(i: int, domain: str, mode: str) -> Assignment:
        record = {"benchmark": "robovista", "id": str(i), "domain": domain, "source": "s", "answer": "A"}
        item = Item("robovista_cot", "robovista_cot", record, "", "correct_parity")
        return Assignment(item, "correct" if mode == "correct" else "judged", modes.get(mode, CORRECT))

    labels = ["correct"] * 4 + ["misidentification"] * 3 + ["reasoning_error"] * 2 + ["no_rationale"]
    rows = [assignment(i, "domestic" if i % 2 else "agriculture", m) for i, m in enumerate(labels)]
    rows.append(Assignment(rows[0].item, "unscored:parse_failure"))
    shares = {(s.domain, s.mode): s for s in output.distribution(error_study.ERROR_MODES, "robovista_cot", rows)}
    assert (shares[("all", "misidentification")].count, shares[("all", "misidentification")].n) == (3, 10)
    assert shares[("all", "correct")].share == pytest.approx(40.0)
    assert shares[("all", "misidentification")].paper == 30.2
    assert (shares[("all", "group:reasoning")].count, shares[("all", "group:perception")].count) == (2, 3)
