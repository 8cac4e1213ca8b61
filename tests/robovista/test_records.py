"""RoboVista reader: valid rows become McqDoc (choices verbatim, as the runner uses them; label spellings of the
paper and the runner README accepted); malformed rows name the record and the field; unknown labels are listed
together with the override that maps them."""

from __future__ import annotations

from typing import Any

import pytest

from lmms_agentic.adapters.core.schema import McqDoc, RecordError
from lmms_agentic.adapters.release_schema import UnknownLabelsError, resolve
from lmms_agentic.tasks.robovista import release

DEFAULTS = resolve(release.SCHEMA, environ={})


def normalise(row: dict[str, Any], n_images: int) -> McqDoc:
    return release.normalise(row, n_images, DEFAULTS)


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
    ({"domain": "space"}, "domain", "is not a known domain"),
    ({"ability_type": "telepathy"}, "ability_type", "is not a known ability type"),
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


def test_choices_are_used_verbatim_like_the_runner() -> None:
    """The runner shows `if text` choices as given: padding kept, a whitespace-only choice shown, an empty one not."""
    doc = normalise(_row(choices=["  red ", "green", " ", "", "purple"], correct_answer="A"), n_images=1)
    assert doc.options == ("  red ", "green", " ", "", "purple")
    assert [letter for letter, _ in doc.shown_options()] == ["A", "B", "C", "E"]


@pytest.mark.parametrize(("label", "domain"), [
    ("driving", "autonomous_driving"), ("surgical", "surgical_robotics"), ("industrial", "industrial_manufacturing"),
    ("open datasets", "open_datasets"), ("Open Datasets", "open_datasets"), ("Home", "domestic"),
    ("Driving", "autonomous_driving"), ("Industry", "industrial_manufacturing"), ("Surgery", "surgical_robotics"),
    ("agriculture", "agriculture"), ("", "unknown"),
])
def test_domain_spellings_of_the_paper_and_the_runner_readme(label: str, domain: str) -> None:
    assert normalise(_row(domain=label), n_images=1).domain == domain


def test_unknown_labels_are_reported_together_with_counts_and_the_fix() -> None:
    resolver = DEFAULTS.resolver("domain")
    with pytest.raises(UnknownLabelsError) as error:
        resolver.check(["driving", "Field robotics", "lab", "Field robotics", "domestic"])
    text = str(error.value)
    assert "'Field robotics' (2 rows), 'lab' (1 row)" in text
    assert 'labels:\n  domain:\n    "Field robotics": <one of: agriculture' in text
    assert "lmms_agentic_schema.yaml" in text
