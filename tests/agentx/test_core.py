"""Agent-X's harness-neutral core (tasks/agentx/core/): its import rule, and table-driven tests of the public functions
the hook and e2e tests only reach indirectly (records, prompt, scoring, judging with a judge passed in, metrics)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from PIL import Image

from lmms_agentic.adapters.core.schema import RecordError
from lmms_agentic.tasks.agentx.core import judging, metrics, prompt, records, release_data, scoring
from lmms_agentic.tasks.agentx.core.judge_prompts import SYSTEM_PROMPTS
from lmms_agentic.tasks.agentx.core.trace import parse_trace

FORBIDDEN_ROOTS = ("datasets", "pyarrow", "yaml", "httpx", "lmms_eval", "lm_eval", "torch", "scipy", "matplotlib")


def test_core_imports_only_the_standard_library_pillow_numpy_and_adapters_core() -> None:
    code = ("import sys, lmms_agentic.tasks.agentx.core\n"
            f"roots = {FORBIDDEN_ROOTS!r}\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in roots or m.startswith('lmms_agentic.judges')"
            " or (m.startswith('lmms_agentic.adapters.') and not m.startswith('lmms_agentic.adapters.core'))"
            " or m in ('lmms_agentic.tasks.agentx.hooks', 'lmms_agentic.tasks.agentx.judge',"
            " 'lmms_agentic.tasks.agentx.release', 'lmms_agentic.tasks.agentx.aggregations'))\n"
            "print(bad)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]", done.stdout


# ---------------------------------------------------------------- records
RECORD = {"query": "How many?", "file_path": "a.jpg, b.jpg", "query_type": "objective",
          "tool_metadata": {"OCR": {}}, "reasoning_steps": [[{"tool": "OCR"}, "oops"]],
          "final_answer": {"value": "2", "justification": "seen"}}


@pytest.mark.parametrize(("value", "expected"), [
    ([RECORD], True), ([], False), ([RECORD, RECORD], False), (RECORD, False), (["text"], False), (None, False),
])
def test_is_record_shaped(value: object, expected: bool) -> None:
    assert records.is_record_shaped(value) is expected


@pytest.mark.parametrize(("steps", "expected"), [
    ([{"a": 1}, "x", {"b": 2}], ([{"a": 1}, {"b": 2}], [2])),
    ([[{"a": 1}, None]], ([{"a": 1}], [2])),
    ([[{"a": 1}], [{"b": 2}]], ([], [1, 2])),
    ([], ([], [])),
    ("steps", None),
])
def test_unwrap_steps(steps: object, expected: object) -> None:
    assert records.unwrap_steps(steps) == expected


@pytest.mark.parametrize(("answer", "expected"), [
    ("yes", {"value": "yes", "justification": ""}),
    ({"value": 3}, {"value": 3, "justification": ""}),
    ({"value": "a", "justification": "b", "x": 1}, {"value": "a", "justification": "b"}),
    ({"answer": "a"}, None),
    (None, None),
])
def test_final_answer_fields(answer: object, expected: object) -> None:
    assert records.final_answer_fields(answer) == expected


@pytest.mark.parametrize(("file_path", "paths", "kind"), [
    ("a.jpg", ["a.jpg"], "image"),
    ("a.jpg, b.png,", ["a.jpg", "b.png"], "multi_image"),
    ("clip.MP4", ["clip.MP4"], "video"),
    ("clip.mp4, a.jpg", ["clip.mp4", "a.jpg"], "multi_image"),
])
def test_media_paths_and_type(file_path: str, paths: list[str], kind: str) -> None:
    assert records.media_paths(file_path) == paths and records.media_type(paths) == kind


def test_normalise_reads_renamed_keys_and_names_them_in_errors() -> None:
    renamed = {("question" if key == "query" else key): value for key, value in RECORD.items()}
    keys = {**records.PUBLISHED_KEYS, "query": "question"}
    row = records.normalise("1", [renamed], {"1"}, keys)
    assert row == records.normalise("1", [RECORD], {"1"})
    assert (row["is_generative"], row["media_type"], row["gt_tools"], row["skipped_steps"]) == (
        True, "multi_image", ["OCR"], [2])
    with pytest.raises(RecordError, match=r"query \(data.json key 'question'\)"):
        records.normalise("1", [{**renamed, "question": " "}], set(), keys)
    with pytest.raises(RecordError, match="one-element list"):
        records.normalise("1", RECORD, set())


@pytest.mark.parametrize(("ids", "order"), [(["10", "2", "1"], ["1", "2", "10"]), (["b", "a"], ["a", "b"])])
def test_row_order_is_numeric_key_order(ids: list[str], order: list[str]) -> None:
    assert [row["id"] for row in sorted(({"id": i} for i in ids), key=records.row_order)] == order


# ---------------------------------------------------------------- prompt
IMAGE = Image.new("RGB", (4, 4))


@pytest.mark.parametrize(("visuals", "frames", "expected"), [
    ([IMAGE, IMAGE], False, [IMAGE, IMAGE, "Query: q "]),
    ([IMAGE, IMAGE], True, ["Frame1:", IMAGE, "Frame2:", IMAGE, "Query: q "]),
    (prompt.VideoFile("/v.mp4"), False, [prompt.VideoFile("/v.mp4"), "Query: q "]),
    ([], False, ["Query: q "]),
])
def test_build_prompt(visuals: Any, frames: bool, expected: list[Any]) -> None:
    built = prompt.build_prompt("q ", visuals, frames=frames)
    assert built.system == release_data.system_message() and list(built.segments) == expected


def test_simple_text_is_the_system_message_then_the_query_line() -> None:
    assert prompt.simple_text(" q") == release_data.system_message() + "Query:  q" == (
        release_data.system_message() + prompt.query_line(" q"))


# ---------------------------------------------------------------- scoring
@pytest.mark.parametrize(("predicted", "gold", "query_type", "expected"), [
    ("The Cat.", "cat", "objective", True),
    ("a dog", "cat", "Objective ", False),
    ("  Answer:  42. ", "answer 42", "objective", True),
    ("3,000", "3000", "objective", False),  # the comma becomes a space first
    ("cat", "cat", "subjective", None),
    ("cat", " ", "objective", None),
])
def test_exact_match(predicted: str, gold: str, query_type: str, expected: bool | None) -> None:
    assert scoring.exact_match(predicted, gold, query_type) is expected


def doc(tool_metadata: object = None, gt_tools: Sequence[str] = ("OCR",), answer: object = "2") -> dict[str, Any]:
    return {"id": "0", "query": "How many?", "query_type": "objective", "media": ["a.jpg"],
            "tool_metadata_json": json.dumps(tool_metadata), "gt_tools": list(gt_tools),
            "gt_steps_json": json.dumps([[{"tool": "OCR", "task": "read"}]]),
            "gt_steps_flat_json": json.dumps([{"tool": "OCR", "task": "read"}]),
            "gt_final_answer_json": json.dumps(answer)}


@pytest.mark.parametrize(("document", "expected"), [
    (doc({"DrawBox": {}, "Calculator": {}}), ["DrawBoundingBox", "Calculator"]),
    (doc({}), ["OCR"]),
    (doc("not an object", ["TextToBbox", "nonsense"]), ["LocateObjectByText"]),
])
def test_gold_tools(document: Mapping[str, Any], expected: list[str]) -> None:
    assert scoring.gold_tools(document) == expected


@pytest.mark.parametrize(("answer", "expected"), [
    ("2", {"value": "2", "justification": ""}),
    ({"value": "2", "justification": "j"}, {"value": "2", "justification": "j"}),
    (None, {"value": "", "justification": ""}),
])
def test_gt_answer(answer: object, expected: dict[str, Any]) -> None:
    assert scoring.gt_answer(doc(answer=answer)) == expected


def test_judge_gt_is_the_release_as_is() -> None:
    assert scoring.judge_gt(doc(answer={"value": "2"})) == {
        "query": "How many?", "GT reasoning steps": [[{"tool": "OCR", "task": "read"}]],
        "GT final answer": {"value": "2"}}


@pytest.mark.parametrize(("reply", "expected"), [
    ('{"reasoning_steps": [{"tool_used": "OCR"}], "final_answer": {"value": "2", "justification": ""}}',
     {"parse_failure": None, "toolset_f1_prog": 1.0, "exact_match": True, "n_steps": 1}),
    ("no trace here", {"parse_failure": "invalid_json", "toolset_f1_prog": 0.0, "exact_match": False, "n_steps": 0}),
    ('{"reasoning_steps": [{"tool_used": "Calculator"}]}',
     {"parse_failure": None, "toolset_f1_prog": 0.0, "exact_match": False, "n_steps": 1}),
])
def test_score_trace(reply: str, expected: dict[str, Any]) -> None:
    trace = parse_trace(reply, release_data.TOOL_NAMES, release_data.LEGACY_ALIASES)
    fields = scoring.score_trace(doc({"OCR": {}}), trace)
    assert {key: fields[key] for key in expected} == expected
    assert list(fields) == ["format_ok", "parse_failure", "trace_issues", "parse_path", "n_steps", "toolset_f1_prog",
                            "toolset_precision_prog", "toolset_recall_prog", "exact_match", "errors", "prediction"]
    assert fields["prediction"] == trace.prediction_record()


# ---------------------------------------------------------------- judging
@pytest.mark.parametrize(("model", "style"), [("Qwen/Qwen3-14B", "qwen"), ("gpt-4o-2024-08-06", "gpt"), (None, "gpt")])
def test_style_for_model(model: str | None, style: str) -> None:
    assert judging.style_for_model(model) == style


@pytest.mark.parametrize(("metrics_asked", "generative", "expected"), [
    (judging.REPORTED_NAMES, True, [n for n in judging.REPORTED_NAMES if n != "goal_acc"]),
    (["goal_acc", "ground_s", "goal_acc"], False, ["goal_acc", "ground_s"]),
    (["goal_acc"], True, []),
])
def test_judged_metric_names(metrics_asked: Sequence[str], generative: bool, expected: list[str]) -> None:
    assert judging.judged_metric_names(metrics_asked, generative) == expected


def test_judged_metric_names_and_styles_reject_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown Agent-X metrics"):
        judging.judged_metric_names(["acc"], False)
    with pytest.raises(ValueError, match="style"):
        judging.check_style("claude")
    with pytest.raises(KeyError, match="unknown Agent-X judge metric"):
        judging.user_template("coherence", "gpt")


GT = {"query": "q", "GT reasoning steps": [], "GT final answer": {"value": "2"}}


def test_judge_item_passes_the_calls_to_the_judge_and_keys_the_answers_by_metric() -> None:
    seen: list[judging.JudgeCall] = []

    def judge(calls: Sequence[judging.JudgeCall]) -> list[dict[str, Any]]:
        seen.extend(calls)
        return [{"score": index / 10, "unscored_reason": None} for index, _ in enumerate(calls)]

    out = judging.judge_item("7", GT, {}, judge, query_type="objective", is_generative=False, style="gpt",
                             tool_metadata={}, metrics=["goal_acc", "tool_acc"])
    assert out == {"goal_acc": {"score": 0.0, "unscored_reason": None},
                   "tool_acc": {"score": 0.1, "unscored_reason": None}}
    goal, tool = seen
    assert (goal.code_key, goal.style, goal.item_id, judging.template_id(goal.code_key)) == (
        "goal_accuray", "gpt", "7", "agentx/goal_accuray")
    assert goal.values == {"gt_final_answer": "{'value': '2'}", "query_type": "objective", "pred_final_answer": "[]"}
    assert tool.values == {"gt_tool_metadata": "{}", "pred_steps": "[]"}
    assert tool.system == SYSTEM_PROMPTS["tool_accuray"]
    assert judging.judge_item("7", GT, {}, judge, query_type="", is_generative=True, style="qwen",
                              metrics=["goal_acc"]) == {}
    assert len(seen) == 2  # no calls: the judge is not asked


def test_judge_calls_name_the_missing_gt_field() -> None:
    with pytest.raises(KeyError, match="item 3: the GT record lacks 'tool_metadata'"):
        judging.judge_calls("3", GT, {}, query_type="", is_generative=False, style="gpt", metrics=["tool_acc"])


# ---------------------------------------------------------------- metrics
@pytest.mark.parametrize(("views", "mean", "share"), [
    ([{"score": 1.0}, {"unscored_reason": "x"}, {"score": 0.5, "unscored_reason": None}], 0.75, 2 / 3),
    ([0.25, {"unscored_reason": "missing", "score": None}], 0.25, 0.5),
    ([], math.nan, 0.0),
])
def test_scored_mean_and_share(views: list[Any], mean: float, share: float) -> None:
    got = metrics.scored_mean("m", views)
    assert (math.isnan(got) if math.isnan(mean) else got == pytest.approx(mean))
    assert metrics.scored_share(views) == pytest.approx(share)


def test_scored_mean_rejects_a_scored_view_without_a_number() -> None:
    with pytest.raises(ValueError, match="no numeric score"):
        metrics.scored_mean("m", [{"score": None}])


def test_aggregate_uses_the_judged_mean_passed_in_and_knows_every_metric() -> None:
    items = [{"id": "0", "judge": {"ground_s": {"score": 1.0, "unscored_reason": None}}, "format_ok": False}]
    asked: list[tuple[str, list[Any]]] = []

    def judged_mean(metric: str, views: list[Any]) -> float:
        asked.append((metric, views))
        return 0.5

    assert metrics.aggregate("ground_s", items, judged_mean) == 0.5
    assert asked == [("ground_s", [{"score": 1.0}])]
    assert metrics.aggregate("ground_s", items) == 1.0 and metrics.aggregate("cov_ground", items) == 1.0
    assert metrics.aggregate("format_error_rate", items) == 1.0
    assert set(metrics.summary(items)) == set(metrics.METRICS)
    with pytest.raises(KeyError, match="unknown Agent-X metric"):
        metrics.aggregate("acc", items)
