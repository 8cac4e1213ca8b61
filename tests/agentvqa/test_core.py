"""AgentVQA's harness-neutral core (`tasks/agentvqa/core/`): its import rule, and each public function directly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import lmms_agentic
from lmms_agentic.adapters.core.schema import McqDoc, RecordError, Visuals
from lmms_agentic.tasks.agentvqa.core import metrics, prompt, records, scoring
from lmms_agentic.tasks.agentvqa.core.sources import RenderedOptions

TASKS = Path(lmms_agentic.tasks_dir()) / "agentvqa"
FORBIDDEN_ROOTS = ("datasets", "pyarrow", "yaml", "httpx", "lmms_eval", "lm_eval", "torch", "transformers", "scipy",
                   "matplotlib", "av", "decord")
SETTINGS = {"history_header": "Previous actions:", "post_prompt": "Answer with the letter."}


def test_core_imports_nothing_but_the_standard_library_pillow_and_the_shared_core() -> None:
    """In a fresh interpreter: importing the core loads no harness, data library, judge or plugin module."""
    script = (
        "import sys, json, lmms_agentic.tasks.agentvqa.core\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = json.loads(subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                                       text=True).stdout)
    forbidden = [m for m in loaded if m.split(".")[0] in FORBIDDEN_ROOTS or m.startswith("lmms_agentic.judges")
                 or (m.startswith("lmms_agentic.adapters.") and not m.startswith("lmms_agentic.adapters.core"))
                 or (m.startswith("lmms_agentic.tasks.agentvqa.")
                     and not m.startswith("lmms_agentic.tasks.agentvqa.core"))]
    assert forbidden == []


# --------------------------------------------------------------------------- records

def _release_row(**changes: Any) -> dict[str, Any]:
    """A row as the release publishes it (FIELD_MAP's column names)."""
    row = {"id": "screenspot_1", "domain": "GUI Interaction", "source_dataset": "ScreenSpot", "question": "Where?",
           "options": ["click (10, 20)", "click (30, 40)", "scroll", "back"], "answer": 1, "images": ["cell"],
           "option_coordinates": [[10, 20], [30, 40], None, None], "coordinate_format": "point_xy_abs"}
    row.update(changes)
    return row


def _canonical(release_row: dict[str, Any]) -> dict[str, Any]:
    return {canonical: release_row[column] for canonical, column in records.FIELD_MAP.items() if column in release_row}


def test_normalise_reads_a_published_row_under_the_canonical_names() -> None:
    doc = records.normalise(_canonical(_release_row()), 1)
    assert (doc.domain, doc.source, doc.gold_letter, doc.visuals) == ("web_agents", "screenspot", "B", Visuals(1))
    assert doc.metadata["input_type"] == "image" and doc.metadata["option_coordinates"] == [[10, 20], [30, 40],
                                                                                            None, None]


@pytest.mark.parametrize(("columns", "changes", "field"), [
    (records.FIELD_MAP, {"source_dataset": ""}, "source_dataset"),
    ({**records.FIELD_MAP, "source": "src"}, {"source_dataset": ""}, "src"),
    ({**records.FIELD_MAP, "options": ("a", "b", "c", "d")}, {"options": ["x"]}, "options"),
    ({**records.FIELD_MAP, "images": "frames"}, {"images": []}, "frames/video"),
], ids=["published-name", "override-name", "gathered-columns", "media-pair"])
def test_errors_name_the_column_the_field_was_read_from(columns: dict[str, Any], changes: dict[str, Any],
                                                        field: str) -> None:
    row = _canonical(_release_row(**changes))
    with pytest.raises(RecordError) as error:
        records.normalise(row, len(row.get("images", [])), columns=columns)
    assert (error.value.record_id, error.value.field_name) == ("screenspot_1", field)


@pytest.mark.parametrize(("answer_format", "answer", "letter"), [
    ("auto", "b", "B"), ("auto", 1, "B"), ("letter", "B", "B"), ("index0", 1, "B"), ("index1", 2, "B"),
    ("text", "click (30, 40)", "B"),
])
def test_answer_formats(answer_format: str, answer: Any, letter: str) -> None:
    doc = records.normalise(_canonical(_release_row(answer=answer)), 1, answer_format=answer_format)
    assert doc.gold_letter == letter


@pytest.mark.parametrize(("label", "slug"), [
    ("Web Agents", "web_agents"), ("web-agents", "web_agents"), ("Video Perception", "egocentric_videos"),
    ("Spatial Reasoning", "spatial_planning"), ("GAMES", "games"), ("Cooking", None),
])
def test_canonical_domain(label: str, slug: str | None) -> None:
    assert records.canonical_domain(label) == slug


@pytest.mark.parametrize(("label", "key"), [("VSI-Bench", "vsibench"), ("Open Datasets", "opendatasets"),
                                            ("3DSR bench", "3dsrbench"), ("--", "")])
def test_label_key(label: str, key: str) -> None:
    assert records.label_key(label) == key


# --------------------------------------------------------------------------- prompt

def _doc(history: bool = True, convention: str = "pixel_xy", **changes: Any) -> dict[str, Any]:
    """A canonical row with the variant's settings, as the plugin hands it to the core."""
    fields: dict[str, Any] = {
        "id": "aitw_1", "benchmark": "agentvqa", "domain": "web_agents", "source": "aitw", "question": "Next?",
        "options": ("tap (100, 50)", "swipe up", "press back", "type hello"), "gold_index": 0,
        "visuals": Visuals(n_images=2), "context": "PRESS_HOME\nSCROLL_UP",
        "metadata": {"input_type": "multi_image", "option_coordinates": [[100, 50], None, None, None],
                     "image_width": 200, "image_height": 100, "coordinate_format": "point_xy_abs"},
    }
    fields.update(changes)
    return {**McqDoc(**fields).to_row(), "coord_convention": convention, "with_history": history}


@pytest.mark.parametrize(("doc", "shown"), [
    (_doc(history=True), True), (_doc(history=False), False), (_doc(history=True, context=""), False),
])
def test_shows_history(doc: dict[str, Any], shown: bool) -> None:
    assert prompt.shows_history(doc) is shown


@pytest.mark.parametrize(("doc", "expected"), [
    (_doc(), "Next?\nPrevious actions:\nPRESS_HOME\nSCROLL_UP\nOptions:\nA. tap (100, 50)\nB. swipe up\n"
             "C. press back\nD. type hello\nAnswer with the letter."),
    (_doc(history=False, convention="norm1000_yx"),
     "Next?\nOptions:\nA. tap (500, 500)\nB. swipe up\nC. press back\nD. type hello\nAnswer with the letter."),
], ids=["pixels-with-history", "gemini-without-history"])
def test_prompt_text(doc: dict[str, Any], expected: str) -> None:
    assert prompt.prompt_text(doc, SETTINGS) == expected


@pytest.mark.parametrize(("convention", "texts", "status"), [
    ("pixel_xy", ("tap (100, 50)", "swipe up", "press back", "type hello"), "rerendered"),
    ("norm1000_xy", ("tap (500, 500)", "swipe up", "press back", "type hello"), "rerendered"),
])
def test_rendered_options_follow_the_rows_convention(convention: str, texts: tuple[str, ...], status: str) -> None:
    rendered = prompt.rendered_options(_doc(convention=convention))
    assert (rendered.texts, rendered.convention, rendered.status) == (texts, convention, status)


RED, BLUE, FRAME = (Image.new("RGB", (4, 4), colour) for colour in ("red", "blue", "gray"))


@pytest.mark.parametrize(("images", "video", "expected"), [
    ([RED, BLUE], None, [RED, BLUE]),
    ([RED], [FRAME, FRAME], [RED, FRAME, FRAME]),
    ([], "/data/videos/clip.mp4", ["/data/videos/clip.mp4"]),
    ([RED], "/data/videos/clip.mp4", [RED, "/data/videos/clip.mp4"]),
], ids=["images", "images-then-frames", "native-video", "image-then-native-video"])
def test_ordered_visuals(images: list[Image.Image], video: Any, expected: list[Any]) -> None:
    assert prompt.ordered_visuals(images, video) == expected


def test_prompt_messages_are_one_user_turn_visuals_first() -> None:
    messages = prompt.Prompt([RED, "/v.mp4"], "text").messages()
    assert messages == [{"role": "user", "content": [{"type": "image", "url": RED}, {"type": "video", "url": "/v.mp4"},
                                                     {"type": "text", "text": "text"}]}]


# --------------------------------------------------------------------------- scoring and metrics (more in test_task.py)

def test_item_fields() -> None:
    rendered = RenderedOptions(("a", "b", "c", "d"), "norm1000_yx", "as_released", "no image size")
    assert scoring.item_fields(_doc(history=False, convention="norm1000_yx"), rendered) == {
        "input_type": "multi_image", "coord_convention": "norm1000_yx", "coords_status": "as_released",
        "coords_note": "no image size", "with_history": False}


@pytest.mark.parametrize(("status", "value"), [("not_applicable", None), ("rerendered", False),
                                               ("as_released", True)])
def test_coords_shown_as_released(status: str, value: bool | None) -> None:
    assert metrics.coords_shown_as_released({"coords_status": status}) is value
