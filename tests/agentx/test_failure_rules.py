"""Table-driven tests for lmms_agentic.tasks.agentx.core.failure_rules: every rule of the failure taxonomy.

Records are prediction-file records ({"query", "filename", **model_json}).  Keyword checks force the documented
approximation (use_spacy=False) so the results do not depend on what is installed.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from lmms_agentic.tasks.agentx.core.failure_rules import (
    CATEGORIES,
    STOP_WORDS,
    classify,
    extract_keywords,
    invalid_json_format,
    is_empty_value,
)
from lmms_agentic.tasks.agentx.core.release_data import LEGACY_ALIASES, TOOL_NAMES
from lmms_agentic.tasks.agentx.core.trace import parse_trace

ANSWER = {"value": "The red line", "justification": "The red line rises fastest and overtakes the others."}


def step(n: int = 1, tool_used: object = "OCR", **changes: object) -> dict[str, Any]:
    out: dict[str, Any] = {"step": n, "task": f"task {n}", "tool_used": tool_used, "tool_output": f"output {n}",
                           "thought": f"thought {n}"}
    out.update(changes)
    return {key: value for key, value in out.items() if value is not DROP}


DROP = object()


def rec(steps: object = DROP, final: object = DROP, **top: object) -> dict[str, Any]:
    out: dict[str, Any] = {"query": "q", "filename": "VCA_1.jpg",
                           "reasoning_steps": [step(1, "OCR"), step(2, "Calculator")] if steps is DROP else steps,
                           "final_answer": ANSWER if final is DROP else final}
    out.update(top)
    return {key: value for key, value in out.items() if value is not DROP}


def flags(record: dict[str, Any], gt: dict[str, str] | None = None, gt_steps: object = None) -> dict[str, bool]:
    return classify(record, gt, TOOL_NAMES, gt_steps=gt_steps, use_spacy=False)


# (id, record, expected flags: a subset of classify's keys)
CLASSIFY_CASES: list[tuple[str, dict[str, Any], dict[str, bool]]] = [
    ("good__nothing", rec(),
     {"no_action_no_response": False, "whole_response_is_thought": False, "tool_conflict_or_repetition": False,
      "invalid_json_format": False, "answer_without_format": False}),
    ("empty_record__no_action", rec("", {"value": "", "justification": ""}),
     {"no_action_no_response": True, "whole_response_is_thought": False, "invalid_json_format": True,
      "answer_without_format": False}),
    ("steps_missing_answer_missing__no_action", rec(DROP, DROP, reasoning_steps=None, final_answer=None),
     {"no_action_no_response": True, "invalid_json_format": True, "answer_without_format": False}),
    ("no_steps_bare_string_answer__no_action", rec([], "Red"),
     {"no_action_no_response": True, "whole_response_is_thought": False, "invalid_json_format": True,
      "answer_without_format": True}),
    ("no_steps_answer_present__whole_thought", rec([], ANSWER),
     {"no_action_no_response": False, "whole_response_is_thought": True, "invalid_json_format": False}),
    ("steps_but_no_answer__not_no_action", rec(final={"value": "", "justification": ""}),
     {"no_action_no_response": False, "whole_response_is_thought": False, "invalid_json_format": False}),
    ("tool_vs_tool_used__conflict", rec([step(1, "Calculator", tool="OCR")]), {"tool_conflict_or_repetition": True}),
    ("tool_vs_tool_used_case_only__no_conflict", rec([step(1, "OCR ", tool="ocr")]),
     {"tool_conflict_or_repetition": False}),
    ("tool_used_empty_tool_set__no_conflict", rec([step(1, "", tool="OCR")]), {"tool_conflict_or_repetition": False}),
    ("consecutive_repeat__repetition", rec([step(1, "OCR"), step(2, "ocr")]), {"tool_conflict_or_repetition": True}),
    ("repeat_across_keys__repetition", rec([step(1, DROP, tool="OCR"), step(2, "OCR")]),
     {"tool_conflict_or_repetition": True}),
    ("non_consecutive_repeat__fine", rec([step(1, "OCR"), step(2, "Calculator"), step(3, "OCR")]),
     {"tool_conflict_or_repetition": False}),
    ("empty_tools_repeated__fine", rec([step(1, ""), step(2, "")]), {"tool_conflict_or_repetition": False}),
    ("missing_query__invalid", rec(query=DROP), {"invalid_json_format": True, "answer_without_format": True}),
    ("missing_filename__invalid", rec(filename=DROP), {"invalid_json_format": True}),
    ("answer_without_justification__invalid", rec(final={"value": "Red"}),
     {"invalid_json_format": True, "answer_without_format": True}),
    ("answer_without_value__invalid", rec(final={"justification": "j"}),
     {"invalid_json_format": True, "answer_without_format": False}),
    ("steps_not_a_list__invalid", rec({"step": 1}), {"invalid_json_format": True}),
    ("step_missing_thought__invalid", rec([step(1, thought=DROP)]), {"invalid_json_format": True}),
    ("step_uses_tool_key__invalid", rec([step(1, DROP, tool="OCR")]), {"invalid_json_format": True}),
    ("step_uses_output_key__invalid", rec([step(1, tool_output=DROP, output="o")]), {"invalid_json_format": True}),
    ("wrapped_steps__invalid", rec([[step(1)]]), {"invalid_json_format": True, "no_action_no_response": False}),
    ("string_step__invalid", rec(["used OCR"]), {"invalid_json_format": True}),
    ("extra_keys__still_valid", rec([step(1, input="<image>")], extra="x"), {"invalid_json_format": False}),
]


@pytest.mark.parametrize(("record", "expected"), [(c[1], c[2]) for c in CLASSIFY_CASES],
                         ids=[c[0] for c in CLASSIFY_CASES])
def test_classify_table(record: dict[str, Any], expected: dict[str, bool]) -> None:
    got = flags(record)
    assert {key: got[key] for key in expected} == expected
    assert "misinterpreting_visual_content" not in got and "step_keyword_mismatch" not in got


def test_categories() -> None:
    assert CATEGORIES == {
        "planning": ("no_action_no_response", "whole_response_is_thought", "tool_conflict_or_repetition"),
        "formatting": ("invalid_json_format", "answer_without_format"),
        "reasoning": ("misinterpreting_visual_content", "step_keyword_mismatch"),
    }
    got = flags(rec(), gt=ANSWER, gt_steps=[])
    assert set(got) == {key for keys in CATEGORIES.values() for key in keys}
    assert all(isinstance(value, bool) for value in got.values())


GT_STEPS = [{"task": "Count the umbrellas", "tool": "ObjectCounter", "output": "5 red umbrellas",
             "thought": "Five umbrellas hang in the trees"}]


@pytest.mark.parametrize(("predicted", "gt", "expected"), [
    ({"value": "Red line", "justification": ""}, ANSWER, False),
    ({"value": "the RED one", "justification": ""}, ANSWER, False),
    ({"value": "Blue bars", "justification": "They are tall."}, ANSWER, True),
    ({"value": "", "justification": ""}, ANSWER, True),
    ("red line", ANSWER, False),  # a bare-string answer is read as the value
    ({"value": "anything", "justification": ""}, {"value": "", "justification": ""}, True),  # any([]) is False
    ({"value": "5 umbrellas", "justification": ""}, {"value": "There are 5 umbrellas.", "justification": ""}, False),
])
def test_misinterpreting_visual_content(predicted: object, gt: dict[str, str], expected: bool) -> None:
    assert flags(rec(final=predicted), gt=gt)["misinterpreting_visual_content"] is expected


@pytest.mark.parametrize(("steps", "expected"), [
    ([step(1, "ObjectCounter", task="count", tool_output="3")], False),
    ([step(1, "OCR", task="read text", tool_output="none", thought="umbrellas everywhere")], False),
    ([{"task": "count", "tool": "objectcounter", "output": "3", "thought": ""}], False),  # tool / output keys
    ([[step(1, "ObjectCounter")]], False),  # [[...]] unwrapped
    ([step(1, "WebSearch", task="weather", tool_output="sunny", thought="fine")], True),
    ("", True),
])
def test_step_keyword_mismatch(steps: object, expected: bool) -> None:
    assert flags(rec(steps), gt_steps=GT_STEPS)["step_keyword_mismatch"] is expected


def test_step_check_uses_steps_not_the_answer_keywords() -> None:
    """The notebook's bug (the final-answer keywords fed to the step check) is not reproduced: the two reasoning
    checks are independent."""
    gt_answer = {"value": "five red umbrellas", "justification": ""}
    steps_match = rec([step(1, "ObjectCounter", tool_output="5 red umbrellas")], {"value": "blue", "justification": ""})
    got = flags(steps_match, gt=gt_answer, gt_steps=GT_STEPS)
    assert got["misinterpreting_visual_content"] is True and got["step_keyword_mismatch"] is False
    answer_matches = rec([step(1, "WebSearch", task="search", tool_output="nothing", thought="no")], gt_answer)
    got = flags(answer_matches, gt=gt_answer, gt_steps=GT_STEPS)
    assert got["misinterpreting_visual_content"] is False and got["step_keyword_mismatch"] is True


def test_extract_keywords_approximation() -> None:
    text = "Three red umbrellas hang in the trees. The red umbrellas are counted; count is 3."
    keywords = extract_keywords(text, use_spacy=False)
    assert keywords[:3] == ["red", "red umbrellas", "umbrella"]  # ties keep first-occurrence order
    assert "tree" in keywords and "hang" in keywords
    assert not {"the", "in", "three", "3", "is"} & set(keywords)
    assert extract_keywords(text, top_k=2, use_spacy=False) == ["red", "red umbrellas"]
    assert extract_keywords("", use_spacy=False) == []
    assert len(extract_keywords(" ".join(f"word{i}x" for i in range(50)), use_spacy=False)) == 21
    assert extract_keywords("Cities and boxes, glasses, buses", use_spacy=False)[:2] == ["city", "box"]
    assert {"the", "and", "which"} <= STOP_WORDS


@pytest.mark.skipif(importlib.util.find_spec("spacy") is not None, reason="spacy is installed")
def test_use_spacy_true_requires_spacy() -> None:
    with pytest.raises(RuntimeError, match="en_core_web_sm"):
        extract_keywords("red umbrellas", use_spacy=True)


@pytest.mark.parametrize(("value", "empty"), [
    (None, True), ("", True), ("  ", True), ("null", True), ("NULL", True), (0, True), (0.0, True), (False, True),
    ([], True), ({}, True), ("0", False), ("none", False), (3, False), ("x", False), ([0], False), (True, False),
])
def test_is_empty_value(value: object, empty: bool) -> None:
    assert is_empty_value(value) is empty


def test_invalid_json_format_on_the_parser_records() -> None:
    good = '{"reasoning_steps": [{"step": 1, "task": "t", "tool_used": "OCR", "tool_output": "o", "thought": "x"}],' \
           ' "final_answer": {"value": "Red", "justification": "j"}}'
    trace = parse_trace(good, TOOL_NAMES, LEGACY_ALIASES)
    assert not invalid_json_format(trace.notebook_record("q", "f.jpg")) and trace.format_ok
    failed = parse_trace("no json", TOOL_NAMES, LEGACY_ALIASES).notebook_record("q", "f.jpg")
    assert invalid_json_format(failed)
    assert flags(failed)["no_action_no_response"] is True
    assert invalid_json_format({"final_answer": ANSWER, "reasoning_steps": []})  # model JSON without the wrapper
