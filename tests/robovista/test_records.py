"""RoboVista normaliser: valid rows become McqDoc; malformed rows name the record and the field."""

from __future__ import annotations

from typing import Any

import pytest

from lmms_agentic.adapters.schema import McqDoc, RecordError
from lmms_agentic.tasks.robovista.records import normalise


def _row(**changes: Any) -> dict[str, Any]:
    row = {"id": "q_1", "question": "Which block?", "choices": ["red", "green", "blue", "yellow", "purple"],
           "correct_answer": "C", "reasoning": "because", "domain": "domestic", "task": "tidying",
           "ability_type": "physical_interaction", "ability_subcategory": "grasp", "publication_source": "paper"}
    row.update(changes)
    return row


def test_valid_row() -> None:
    doc = normalise(_row(), n_images=2)
    assert (doc.id, doc.gold_letter, doc.domain, doc.visuals.n_images) == ("q_1", "C", "domestic", 2)
    assert doc.metadata["ability_split"] == "PL" and doc.metadata["task"] == "tidying"
    assert McqDoc.from_row(doc.to_row()) == doc


@pytest.mark.parametrize(("changes", "field", "n_images"), [
    ({"domain": ""}, None, 1),
    ({"domain": "  domestic "}, None, 1),
    ({"ability_type": None}, None, 1),
    ({"choices": ["a", "b", None, "d", "e"], "correct_answer": "A"}, None, 1),
    ({"correct_answer": " c"}, None, 1),
], ids=["empty-domain", "padded-domain", "null-ability", "null-choice", "lowercase-gold"])
def test_tolerated_variations(changes: dict[str, Any], field: None, n_images: int) -> None:
    doc = normalise(_row(**changes), n_images=n_images)
    assert doc.domain in {"unknown", "domestic"}


@pytest.mark.parametrize(("changes", "field", "problem"), [
    ({"question": None}, "question", "expected str"),
    ({"question": "  "}, "question", "is empty"),
    ({"choices": "A. red"}, "choices", "expected list"),
    ({"choices": ["red", 3, "blue"]}, "choices[1]", "expected a string"),
    ({"choices": ["only"]}, "correct_answer", "not one of the letters"),
    ({"correct_answer": "F"}, "correct_answer", "not one of the letters"),
    ({"correct_answer": "AB"}, "correct_answer", "not one of the letters"),
    ({"choices": ["red", "green", "", "yellow", "purple"]}, "gold_index", "empty option C"),
    ({"domain": "space"}, "domain", "is not one of"),
    ({"ability_type": "telepathy"}, "ability_type", "is not one of"),
    ({"domain": 5}, "domain", "expected a string"),
], ids=["null-question", "blank-question", "choices-string", "choice-int", "one-choice", "gold-out-of-range",
        "gold-two-letters", "gold-on-empty-option", "unknown-domain", "unknown-ability", "domain-int"])
def test_malformed_rows_name_record_and_field(changes: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(RecordError) as error:
        normalise(_row(**changes), n_images=1)
    assert error.value.record_id == "q_1" and error.value.field_name == field
    assert problem in str(error.value) and "robovista record 'q_1'" in str(error.value)


@pytest.mark.parametrize("field", ["id", "question", "choices", "correct_answer", "domain", "task", "ability_type"])
def test_missing_field(field: str) -> None:
    row = _row()
    del row[field]
    with pytest.raises(RecordError, match=f"field '{field}': is missing"):
        normalise(row, n_images=1)


def test_row_without_images() -> None:
    with pytest.raises(RecordError, match="field 'images'"):
        normalise(_row(), n_images=0)
