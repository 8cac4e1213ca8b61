"""AgentVQA reader: the release schema (field map, label aliases, answer formats, user overrides), the column
check naming missing/unexpected columns, row validation."""

from __future__ import annotations

from typing import Any

import datasets
import pytest

from lmms_agentic.adapters.core.schema import McqDoc, RecordError
from lmms_agentic.adapters.release_schema import ResolvedSchema, resolve
from lmms_agentic.tasks.agentvqa import release as agentvqa
from lmms_agentic.tasks.agentvqa.core import records
from lmms_agentic.tasks.agentvqa.core.sources import adapter_for

DEFAULTS = resolve(agentvqa.SCHEMA, environ={})


def _normalise(row: dict[str, Any], n_images: int, schema: ResolvedSchema = DEFAULTS) -> McqDoc:
    """What the loader does with one raw row: rename fields to canonical names, then normalise."""
    canonical = {name: row[raw] for name, raw in schema.fields.items() if isinstance(raw, str) and raw in row}
    return agentvqa.normalise(canonical, n_images, schema)


def _table(columns: list[str]) -> datasets.Dataset:
    """A one-row raw table with these columns (the column check reads the raw table, before any renaming)."""
    row = {**_row(), "images": [], "source": "x", "new_column": 1}
    return datasets.Dataset.from_list([{c: row[c] for c in columns}])


def _row(**changes: Any) -> dict[str, Any]:
    row = {"id": "aitw_1", "domain": "Web Agents", "source_dataset": "android-in-the-wild", "question": "Next?",
           "options": ["tap (540, 1010)", "tap (212, 880)", "swipe up", "press back"], "answer": "A",
           "video": None, "action_history": ["PRESS_HOME", "SCROLL_UP"], "input_type": "image",
           "option_coordinates": [[540, 1010], [212, 880], None, None], "image_width": 720, "image_height": 1280,
           "coordinate_format": "point_xy_abs"}
    row.update(changes)
    return row


def test_valid_row_maps_labels_to_canonical_slugs() -> None:
    doc = _normalise(_row(), n_images=1)
    assert (doc.domain, doc.source, doc.gold_letter, doc.context) == ("web_agents", "aitw", "A",
                                                                       "PRESS_HOME\nSCROLL_UP")
    assert doc.metadata["source_label"] == "android-in-the-wild"


@pytest.mark.parametrize(("label", "slug"), [
    ("Web Agents", "web_agents"), ("web_agents", "web_agents"), ("EGOCENTRIC VIDEOS", "egocentric_videos"),
    ("Spatial-Planning", "spatial_planning"), ("robotics", "robotics"), ("Games", "games"),
    # the legacy dataset card's names, accepted out of the box
    ("Spatial Reasoning", "spatial_planning"), ("Game Understanding", "games"), ("GUI Interaction", "web_agents"),
    ("Robot Manipulation", "robotics"), ("Video Perception", "egocentric_videos"),
])
def test_domain_aliases(label: str, slug: str) -> None:
    assert DEFAULTS.resolver("domain").get(label) == slug


@pytest.mark.parametrize(("label", "slug"), [
    ("android-in-the-wild", "aitw"), ("AitW", "aitw"), ("screenspot-pro", "screenspot_pro"),
    ("ScreenSpot-Pro", "screenspot_pro"), ("embspatial-bench", "embspatial_bench"), ("space-10", "space_10"),
    ("VSI-Bench", "vsi_bench"), ("3DSRBench", "3dsrbench"), ("Brand New Source", "brand_new_source"),
])
def test_source_aliases(label: str, slug: str) -> None:
    assert records.canonical_source(label) == slug


@pytest.mark.parametrize(("changes", "field", "problem"), [
    ({"question": ""}, "question", "non-empty string"),
    ({"options": ["a", "b", "c"]}, "options", "list of 4"),
    ({"options": ["a", "b", "c", ""]}, "options", "empty or non-string"),
    ({"options": ["a", "b", "c", "a"]}, "options", "duplicate"),
    ({"answer": "E"}, "answer", "not a letter A-D or an index 0-3"),
    ({"answer": 4}, "answer", "not a letter A-D or an index 0-3"),
    ({"answer": True}, "answer", "not a letter A-D or an index 0-3"),
    ({"domain": "Cooking"}, "domain", "is not one of"),
    ({"source_dataset": "ScreenSpot"}, "source_dataset", "belongs to web_agents, not robotics"),
    ({"action_history": [1, 2]}, "action_history", "list of strings"),
    ({"video": 3}, "video", "relative path"),
], ids=["empty-question", "three-options", "empty-option", "duplicate-option", "answer-E", "answer-4",
        "answer-bool", "unknown-domain", "source-in-wrong-domain", "history-ints", "video-int"])
def test_malformed_rows_name_record_and_field(changes: dict[str, Any], field: str, problem: str) -> None:
    row = _row(**changes)
    if field == "source_dataset":
        row["domain"] = "Robotics"
    with pytest.raises(RecordError) as error:
        _normalise(row, n_images=1)
    assert error.value.record_id == "aitw_1" and error.value.field_name == field and problem in str(error.value)


def test_item_without_images_or_video() -> None:
    with pytest.raises(RecordError, match="neither images nor a video"):
        _normalise(_row(), n_images=0)


@pytest.mark.parametrize(("answer", "letter"), [("B", "B"), (" c ", "C"), (3, "D"), (0, "A")])
def test_answer_as_letter_or_index(answer: Any, letter: str) -> None:
    assert _normalise(_row(answer=answer), n_images=1).gold_letter == letter


def test_check_columns_names_missing_and_unexpected_fields() -> None:
    columns = [c for c in _row() if c != "source_dataset"] + ["images", "source"]
    with pytest.raises(agentvqa.SchemaError) as error:
        agentvqa.check_columns(_table(columns), DEFAULTS)
    text = str(error.value)
    assert "missing source (column 'source_dataset')" in text and "unexpected ['source']" in text
    assert "First record: id='aitw_1'" in text and "schema override" in text and "source: <the raw column>" in text


def test_unknown_extra_columns_only_warn(caplog: pytest.LogCaptureFixture) -> None:
    agentvqa.check_columns(_table([*_row(), "images", "new_column"]), DEFAULTS)
    assert "new_column" in caplog.text


@pytest.mark.parametrize(("answer_format", "answer", "letter"), [
    ("letter", "c", "C"), ("index0", 2, "C"), ("index1", 3, "C"), ("text", "swipe up", "C"),
])
def test_answer_format_from_a_schema_override(tmp_path: Any, answer_format: str, answer: Any, letter: str) -> None:
    (tmp_path / "lmms_agentic_schema.yaml").write_text(f"answer: {answer_format}\n")
    schema = resolve(agentvqa.SCHEMA, tmp_path, environ={})
    assert schema.source.endswith("lmms_agentic_schema.yaml")
    assert _normalise(_row(answer=answer), 1, schema).gold_letter == letter
    with pytest.raises(RecordError, match=f"answer format '{answer_format}'"):
        _normalise(_row(answer="Z" if answer_format != "index0" else 7), 1, schema)


@pytest.mark.parametrize(("label", "domain"), [("Mobile GUI", "web_agents"), ("Games", "robotics"),
                                             ("Web Agents", "web_agents")])
def test_domain_spellings_of_a_schema_override_reach_the_core_as_canonical_labels(tmp_path: Any, label: str,
                                                                                  domain: str) -> None:
    (tmp_path / "lmms_agentic_schema.yaml").write_text(
        'remap_known_labels: true\nlabels:\n  domain:\n    "Mobile GUI": web_agents\n    "Games": robotics\n')
    schema = resolve(agentvqa.SCHEMA, tmp_path, environ={})
    source = "AitW" if domain == "web_agents" else "ERQA"
    assert _normalise(_row(domain=label, source_dataset=source), 1, schema).domain == domain


@pytest.mark.parametrize(("convention", "expected"), [
    ("pixel_xy", ("tap (540, 1010)", "tap (212, 880)", "swipe up", "press back")),
    ("norm1000_yx", ("tap (789, 750)", "tap (688, 294)", "swipe up", "press back")),
    ("norm1000_xy", ("tap (750, 789)", "tap (294, 688)", "swipe up", "press back")),
])
def test_ui_action_options_rendered_per_convention(convention: str, expected: tuple[str, ...]) -> None:
    doc = _normalise(_row(), n_images=1)
    rendered = adapter_for(doc.source).render(doc.options, dict(doc.metadata), convention, None)
    assert rendered.texts == expected and rendered.rerendered


@pytest.mark.parametrize(("changes", "why"), [
    ({"options": ["tap the OK button", "tap (212, 880)", "swipe up", "press back"]}, "option 0: the literal"),
    ({"option_coordinates": [[540, 1010], [212, 9999], None, None],
      "options": ["tap (540, 1010)", "tap (212, 9999)", "swipe up", "press back"]}, "option 1: y=9999 lies outside"),
    ({"image_width": None, "image_height": None}, "no image size"),
    ({"coordinate_format": "normalized_0_1"}, "is not absolute pixels"),
], ids=["literal-missing", "outside-the-image", "no-size", "not-pixels"])
def test_one_bad_coordinate_shows_the_whole_item_as_released_and_flags_it(changes: dict[str, Any],
                                                                          why: str) -> None:
    """All or nothing: the model never sees options in two conventions."""
    doc = _normalise(_row(**changes), 1)
    rendered = adapter_for(doc.source).render(doc.options, dict(doc.metadata), "norm1000_yx", None)
    assert rendered.texts == doc.options and rendered.status == "as_released" and why in rendered.note


@pytest.mark.parametrize(("coordinates", "problem"), [
    ([[540, 1010], [212, 880], None], "has 3 entries for 4 options"),
    ([[540, 1010], [212], None, None], "entry 1: cannot read coordinates [212]"),
    ("540,1010", "expected a list with one entry per option"),
], ids=["too-few", "malformed-point", "not-a-list"])
def test_unusable_coordinates_name_the_record_and_field(coordinates: Any, problem: str) -> None:
    with pytest.raises(RecordError) as error:
        _normalise(_row(option_coordinates=coordinates), 1)
    assert error.value.field_name == "option_coordinates" and error.value.record_id == "aitw_1"
    assert problem in str(error.value)


def test_text_sources_ignore_the_convention_but_reject_unknown_names() -> None:
    doc = _normalise(_row(source_dataset="MONDAY", option_coordinates=None), n_images=1)
    assert adapter_for("gameqa").render(doc.options, {}, "norm1000_yx", None).texts == doc.options
    with pytest.raises(ValueError, match="unknown coordinate convention"):
        adapter_for("gameqa").render(doc.options, {}, "gemini", None)
