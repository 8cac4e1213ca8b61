"""RoboVista's harness-neutral core (`tasks/robovista/core/`) called directly: the published-schema normaliser, the
prompt structure, the per-item fields and the aggregations; the metric names against the task YAMLs; and the import
rule (standard library, numpy, Pillow and `adapters.core` only), checked in a fresh interpreter."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from lmms_agentic.adapters.core.schema import RecordError
from lmms_agentic.adapters.interface import check_metric_names
from lmms_agentic.adapters.release_schema import resolve
from lmms_agentic.adapters.samples import LOOP_VIEWS
from lmms_agentic.tasks.robovista import METRICS as PACKAGE_METRICS
from lmms_agentic.tasks.robovista import release
from lmms_agentic.tasks.robovista.core import metrics, prompt, records, scoring

TASKS = Path(__file__).resolve().parents[2] / "tasks" / "robovista"


def _row(**changes: Any) -> dict[str, Any]:
    row = {"id": "q_1", "question": "Which block?", "choices": ["red", "green", "blue", "yellow", "purple"],
           "correct_answer": "B", "reasoning": "because", "domain": "domestic", "task": "tidying",
           "ability_type": "scene_understanding", "ability_subcategory": "grasp", "publication_source": "paper"}
    row.update(changes)
    return row


def _doc(**changes: Any) -> dict[str, Any]:
    return {**records.normalise(_row(), n_images=1).to_row(), **changes}


# --------------------------------------------------------------------------- records (published schema)

@pytest.mark.parametrize(("changes", "domain", "ability_split"), [
    ({}, "domestic", "SC"),
    ({"domain": " surgical_robotics "}, "surgical_robotics", "SC"),
    ({"domain": "", "ability_type": ""}, "unknown", "unknown"),
    ({"domain": None, "ability_type": None}, "unknown", "unknown"),
    ({"ability_type": "physical_interaction"}, "domestic", "PL"),
], ids=["slugs", "padded-slug", "empty-labels", "null-labels", "planning"])
def test_core_normalises_published_labels(changes: dict[str, Any], domain: str, ability_split: str) -> None:
    doc = records.normalise(_row(**changes), n_images=1)
    assert (doc.domain, doc.metadata["ability_split"]) == (domain, ability_split)


@pytest.mark.parametrize(("changes", "field"), [
    ({"domain": "Driving"}, "domain"),
    ({"domain": "home"}, "domain"),
    ({"ability_type": "Scene Understanding"}, "ability_type"),
], ids=["display-name", "readme-word", "spaced-ability"])
def test_core_takes_only_published_spellings_the_release_schema_maps_the_rest(changes: dict[str, Any],
                                                                              field: str) -> None:
    with pytest.raises(RecordError) as error:
        records.normalise(_row(**changes), n_images=1)
    assert error.value.field_name == field
    mapped = release.normalise(_row(**changes), 1, resolve(release.SCHEMA, environ={}))
    assert mapped == records.normalise(release.published_labels(_row(**changes), resolve(release.SCHEMA,
                                                                                          environ={})), 1)


@pytest.mark.parametrize(("label", "published"), [
    ("Driving", "autonomous_driving"), ("  home ", "domestic"), ("", ""), ("   ", "   "), ("space", "space"),
    (5, 5), (None, None),
], ids=["display-name", "padded-word", "empty", "blank", "unknown", "not-a-string", "null"])
def test_published_labels_maps_only_what_the_schema_knows(label: object, published: object) -> None:
    out = release.published_labels(_row(domain=label), resolve(release.SCHEMA, environ={}))
    assert out["domain"] == published and out["ability_type"] == "scene_understanding"


def test_published_labels_leaves_a_missing_label_missing() -> None:
    row = _row()
    del row["domain"]
    assert "domain" not in release.published_labels(row, resolve(release.SCHEMA, environ={}))


# --------------------------------------------------------------------------- prompt

TEXTS = {"protocol": "zero_shot", "system_prompt": "SYS", "suffix": "Answer with a letter.",
         "icl_system_prompt": "ICL-SYS", "icl_reasoning": False, "confidence_request": ""}
OPTIONS_TEXT = "Options:\nA. red\nB. green\nC. blue\nD. yellow\nE. purple"


@pytest.mark.parametrize(("texts", "expected"), [
    (TEXTS, f"Which block?\n\n{OPTIONS_TEXT}\n\nAnswer with a letter."),
    ({**TEXTS, "confidence_request": "Confidence?"}, f"Which block?\n\n{OPTIONS_TEXT}\n\nAnswer with a letter.\n"
                                                     "Confidence?"),
], ids=["plain", "confidence"])
def test_user_text(texts: dict[str, Any], expected: str) -> None:
    assert prompt.user_text(_doc(), texts) == expected


ICL_DOC = {"icl_example_id": "q_2", "icl_question": "Which cup?", "icl_options": ["left", "", "right"],
           "icl_answer": "C", "icl_reasoning": "it is right"}


@pytest.mark.parametrize(("protocol", "example_id", "shows"), [
    ("zero_shot", "q_2", False), ("icl", "q_2", True), ("icl", "", False), ("cot", "", False),
])
def test_shows_example(protocol: str, example_id: str, shows: bool) -> None:
    assert prompt.shows_example(_doc(icl_example_id=example_id), {**TEXTS, "protocol": protocol}) is shows


def test_build_zero_shot_puts_all_images_first() -> None:
    images = [Image.new("RGB", (4, 4)), Image.new("RGB", (4, 4))]
    system, segments = prompt.build(_doc(), TEXTS, images, [])
    assert system == "SYS" and segments == [images, prompt.user_text(_doc(), TEXTS)]


@pytest.mark.parametrize(("icl_reasoning", "example_tail"), [
    (False, "Answer: C"), (True, "Answer: C\nReasoning: it is right"),
], ids=["answer-only", "with-reasoning"])
def test_build_icl_layout(icl_reasoning: bool, example_tail: str) -> None:
    texts = {**TEXTS, "protocol": "icl", "icl_reasoning": icl_reasoning}
    item, example = [Image.new("RGB", (4, 4))], [Image.new("RGB", (2, 2))]
    system, segments = prompt.build(_doc(**ICL_DOC), texts, item, example)
    assert system == "ICL-SYS"
    assert segments == [
        "=== EXAMPLE ===\n[Image 1: Example image]\n", example,
        f"\nQuestion: Which cup?\nOptions: A. left\nC. right\n{example_tail}\n\n\n=== YOUR QUESTION ===\n"
        "[Image 2: Your image]\n", item,
        prompt.user_text(_doc(), texts),
    ]


def test_build_icl_without_an_example_is_zero_shot() -> None:
    texts = {**TEXTS, "protocol": "icl"}
    assert prompt.build(_doc(**{**ICL_DOC, "icl_example_id": ""}), texts, [], [Image.new("RGB", (2, 2))]) == (
        "SYS", [[], prompt.user_text(_doc(), texts)])


def test_incontext_examples_share_task_and_domain_and_are_never_the_item() -> None:
    ids = ["a", "b", "c", "d"]
    metadata = [json.dumps({"task": task}) for task in ("sort", "sort", "sort", "fold")]
    domains = ["domestic", "domestic", "agriculture", "domestic"]
    for seed in range(5):
        chosen = prompt.choose_incontext_examples(ids, metadata, domains, seed)
        assert chosen[0] == 1 and chosen[1] == 0 and chosen[2] is None and chosen[3] is None


# --------------------------------------------------------------------------- scoring

@pytest.mark.parametrize(("response", "mode", "read"), [
    ("The  answer\n\nis B", "parity_20260706", "The answer is B"),
    ("The  answer\n\nis B", "parity_20260714", "The  answer\n\nis B"),
    (None, "parity_20260706", None),
])
def test_as_runner_read_it(response: object, mode: str, read: object) -> None:
    assert scoring.as_runner_read_it(response, mode) == read


@pytest.mark.parametrize(("response", "fields"), [
    ("B", {"pred_parity": "B", "rule_parity": "c_bare", "correct_parity": True, "confidence": None}),
    ("A robot arm picks it, so B", {"pred_parity": "A", "rule_parity": "first_char", "correct_parity": False}),
    ("<think>maybe C</think>\nAnswer: B\nConfidence: 85%", {"pred_parity": "B", "correct_parity": True,
                                                            "confidence": 0.85}),
    (None, {"pred_parity": None, "rule_parity": "none", "correct_parity": False, "confidence": None}),
], ids=["letter", "article", "think-and-confidence", "no-reply"])
def test_score_item(response: object, fields: dict[str, Any]) -> None:
    item = scoring.score_item(_doc(), response)
    assert {key: item[key] for key in fields} == fields
    assert item["parity_mode"] == "parity_20260706" and set(item["parsers"]) == {"parity_20260706", "parity_20260714"}
    assert (item["task"], item["ability_type"], item["ability_split"]) == ("tidying", "scene_understanding", "SC")
    assert item["icl_example_id"] is None


def test_the_second_parser_rereads_an_answer_inside_the_think_block() -> None:
    item = scoring.score_item(_doc(), "<think>the best option is B.</think>")
    assert item["parsers"]["parity_20260706"]["letter"] is None
    assert item["parsers"]["parity_20260714"] == {"letter": "B", "rule": "reread_final_is", "correct": True}


# --------------------------------------------------------------------------- metrics

@pytest.mark.parametrize(("items", "default", "hle"), [
    ([{"confidence": 0.8, "correct": True}, None, {"confidence": 0.8, "correct": True}], 20.0, 0.0),
    ([{"confidence": 0.5, "correct": i % 2 == 0} for i in range(150)] + [{"confidence": 1.0, "correct": False}] * 50,
     25.0, 17.67766952966369),
], ids=["one-bin", "two-bins"])
def test_calibration_aggregations(items: list[dict[str, Any] | None], default: float, hle: float) -> None:
    assert math.isclose(metrics.calibration_error(items), default, abs_tol=1e-9)
    assert math.isclose(metrics.hle_compat_calibration(items), hle, abs_tol=1e-9)


def test_calibration_without_items_is_nan() -> None:
    assert math.isnan(metrics.calibration_error([None]))


def _yaml_metric_names(path: Path) -> list[str]:
    return re.findall(r"\{metric: (\w+),", path.read_text(encoding="utf-8"))


def test_metrics_are_the_names_the_task_yamls_report() -> None:
    assert check_metric_names("robovista", PACKAGE_METRICS) == PACKAGE_METRICS
    assert (*metrics.METRICS, *LOOP_VIEWS) == PACKAGE_METRICS
    reported = {name for path in [*TASKS.glob("*.yaml"), *TASKS.glob("_*_yaml")] for name in _yaml_metric_names(path)}
    assert reported == set(PACKAGE_METRICS)


FORBIDDEN_CHECK = """
import sys
import lmms_agentic.tasks.robovista.core
heavy = {"datasets", "pyarrow", "yaml", "httpx", "lmms_eval", "lm_eval", "torch", "scipy", "matplotlib"}
ours = ("lmms_agentic.adapters.", "lmms_agentic.judges", "lmms_agentic.tasks.")
allowed = ("lmms_agentic.adapters.core", "lmms_agentic.tasks.robovista.core")
print(sorted(m for m in sys.modules if m.split(".")[0] in heavy
             or (m.startswith(ours) and not m.startswith(allowed) and m != "lmms_agentic.tasks.robovista")))
"""


def test_core_imports_only_the_standard_library_numpy_pillow_and_adapters_core() -> None:
    out = subprocess.run([sys.executable, "-c", FORBIDDEN_CHECK], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
