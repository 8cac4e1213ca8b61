"""Table-driven tests of the strict judge-reply parsers (score, yes/no, letter, JSON rubric, refusals).

Case ids read "<what>__<expected>"; an expected value of FAIL means the reply must not parse."""

from __future__ import annotations

import pytest

from lmms_agentic.judges import (
    AnyOf,
    Choice,
    ChoiceParser,
    JsonObjectParser,
    Number,
    ReplyParser,
    ScoreParser,
    Text,
    YesNoParser,
    looks_like_refusal,
)

FAIL = object()
S15 = ScoreParser(1, 5)
S15_REAL = ScoreParser(1, 5, integer=False)
S01 = ScoreParser(0, 1, integer=False)
S_HALVES = ScoreParser(0, 1, integer=False, allowed=(0, 0.5, 1))
YN = YesNoParser()
CORRECT = YesNoParser(yes=("correct",), no=("incorrect",))
ABCD = ChoiceParser("ABCD")
AGENTX = JsonObjectParser({"Score": Number(0, 1), "Justification": Text()}, score="Score",
                          numeric_strings=True, python_literals=True)
STRICT_JSON = JsonObjectParser({"Score": Number(0, 1), "Justification": Text()}, score="Score")
RUBRIC = JsonObjectParser({"grounding": Number(0, 1), "tool_choice": Number(0, 1),
                           "verdict": Choice(("pass", "fail"))}, optional={"note": Text()})
INT_RUBRIC = JsonObjectParser({"clarity": Number(1, 5, integer=True)})

SCORE_CASES: list[tuple[str, ReplyParser, str, object]] = [
    ("plain__4", S15, "Score: 4", 4.0),
    ("bold_label__5", S15, "**Score:** 5", 5.0),
    ("lower_equals__2", S15, "score = 2", 2.0),
    ("after_prose__3", S15, "The answer is mostly right but misses a step.\nScore: 3", 3.0),
    ("final_score_label__3", S15, "Final score: 3.", 3.0),
    ("zero_below_scale__FAIL", S15, "Score: 0", FAIL),
    ("six_above_scale__FAIL", S15, "Score: 6", FAIL),
    ("fraction_not_declared__FAIL", S15, "Score: 4.5", FAIL),
    ("fraction_declared__4.5", S15_REAL, "Score: 4.5", 4.5),
    ("two_different_scores__FAIL", S15, "Score: 3\nOn reflection, Score: 4", FAIL),
    ("same_score_twice__3", S15, "Score: 3 ... so, Score: 3", 3.0),
    ("digit_in_prose_only__FAIL", S15, "I would give this a 4 out of 5.", FAIL),
    ("over_max__4", S15, "Score: 4/5", 4.0),
    ("out_of_max__4", S15, "Score: 4 out of 5", 4.0),
    ("wrong_denominator__FAIL", S15, "Score: 4/10", FAIL),
    ("range__FAIL", S15, "Score: 3-4", FAIL),
    ("percent__FAIL", S15, "Score: 80%", FAIL),
    ("decimal_comma__FAIL", S15, "Score: 4,5", FAIL),
    ("word_number__FAIL", S15, "Score: four", FAIL),
    ("template_placeholder__FAIL", S15, "Score: <1-5>", FAIL),
    ("plural_label__FAIL", S15, "Scores: 4", FAIL),
    ("subscore_label__FAIL", S15, "subscore: 4", FAIL),
    ("empty__FAIL", S15, "", FAIL),
    ("think_block_ignored__4", S15, "<think>Score: 1 maybe</think>\nScore: 4", 4.0),
    ("quoted_python_dict__0.75", S01, "{'Score': '0.75', 'Justification': 'ok'}", 0.75),
    ("allowed_half__0.5", S_HALVES, "Score: 0.5", 0.5),
    ("not_allowed_0.7__FAIL", S_HALVES, "Score: 0.7", FAIL),
]

YES_NO_CASES: list[tuple[str, ReplyParser, str, object]] = [
    ("yes__1", YN, "Yes", 1.0),
    ("no_dot__0", YN, "no.", 0.0),
    ("bold_upper_yes__1", YN, "**YES**", 1.0),
    ("verdict_label__0", YN, "Verdict: no", 0.0),
    ("yes_then_explanation_line__1", YN, "Yes.\nThe response names the right object.", 1.0),
    ("explanation_then_yes__1", YN, "The response names the right object.\nYes", 1.0),
    ("yes_and_no__FAIL", YN, "yes and no", FAIL),
    ("not_yes__FAIL", YN, "not yes", FAIL),
    ("ten__FAIL", YN, "10", FAIL),
    ("zero_point_one__FAIL", YN, "0.1", FAIL),
    ("one__FAIL", YN, "1", FAIL),
    ("yes_comma_but__FAIL", YN, "Yes, but the units are wrong", FAIL),
    ("yes_line_and_no_line__FAIL", YN, "Yes\nNo", FAIL),
    ("yes_inside_sentence__FAIL", YN, "The answer is yes", FAIL),
    ("labelled_garbage__FAIL", YN, "Verdict: probably", FAIL),
    ("incorrect__0", CORRECT, "incorrect", 0.0),
    ("Correct_dot__1", CORRECT, "Correct.", 1.0),
    ("not_correct__FAIL", CORRECT, "not correct", FAIL),
    ("incorrect_is_not_a_yes_in_default_vocab__FAIL", YN, "incorrect", FAIL),
]

CHOICE_CASES: list[tuple[str, ReplyParser, str, object]] = [
    ("bare_B__B", ABCD, "B", "B"),
    ("paren_lower_c__C", ABCD, "(c)", "C"),
    ("answer_label__D", ABCD, "Answer: D", "D"),
    ("bold_A__A", ABCD, "**A**", "A"),
    ("option_B_dot__B", ABCD, "Option B.", "B"),
    ("none__NONE", ABCD, "NONE", "NONE"),
    ("none_lower_dot__NONE", ABCD, "none.", "NONE"),
    ("letter_out_of_range__FAIL", ABCD, "E", FAIL),
    ("two_letters__FAIL", ABCD, "B or C", FAIL),
    ("sentence__FAIL", ABCD, "The answer is B", FAIL),
    ("empty__FAIL", ABCD, "   ", FAIL),
]

JSON_CASES: list[tuple[str, ReplyParser, str, object]] = [
    ("plain_json__0.75", STRICT_JSON, '{"Score": 0.75, "Justification": "mostly grounded"}', 0.75),
    ("fenced_with_prose__0.5", STRICT_JSON,
     'Here is my evaluation:\n```json\n{"Score": 0.5, "Justification": "half"}\n```\nThanks.', 0.5),
    ("two_objects__FAIL", STRICT_JSON, '{"Score": 1, "Justification": "a"} or {"Score": 0, "Justification": "b"}',
     FAIL),
    ("fence_plus_repeat__FAIL", STRICT_JSON,
     '```json\n{"Score": 1, "Justification": "a"}\n```\nSo: {"Score": 1, "Justification": "a"}', FAIL),
    ("missing_key__FAIL", STRICT_JSON, '{"Score": 0.5}', FAIL),
    ("out_of_range__FAIL", STRICT_JSON, '{"Score": 1.5, "Justification": "x"}', FAIL),
    ("bool_is_not_number__FAIL", STRICT_JSON, '{"Score": true, "Justification": "x"}', FAIL),
    ("nan__FAIL", STRICT_JSON, '{"Score": NaN, "Justification": "x"}', FAIL),
    ("numeric_string_not_allowed__FAIL", STRICT_JSON, '{"Score": "0.75", "Justification": "x"}', FAIL),
    ("numeric_string_allowed__0.75", AGENTX, '{"Score": "0.75", "Justification": "x"}', 0.75),
    ("python_literal_allowed__0.5", AGENTX, "```python\n{'Score': '0.5', 'Justification': 'partly'}\n```", 0.5),
    ("python_literal_not_allowed__FAIL", STRICT_JSON, "{'Score': 0.5, 'Justification': 'partly'}", FAIL),
    ("non_numeric_string__FAIL", AGENTX, "{'Score': 'high', 'Justification': 'x'}", FAIL),
    ("truncated_object__FAIL", STRICT_JSON, '{"Score": 0.5, "Justification": "cut', FAIL),
    ("prose_braces_and_one_object__1", STRICT_JSON,
     'Sets {A, B} differ. {"Score": 1, "Justification": "exact"}', 1.0),
    ("rubric_mean__0.75", RUBRIC, '{"grounding": 0.5, "tool_choice": 1, "verdict": "PASS", "note": "ok"}', 0.75),
    ("rubric_bad_choice__FAIL", RUBRIC, '{"grounding": 0.5, "tool_choice": 1, "verdict": "maybe"}', FAIL),
    ("int_rubric_fraction__FAIL", INT_RUBRIC, '{"clarity": 3.5}', FAIL),
    ("int_rubric__4", INT_RUBRIC, '{"clarity": 4}', 4.0),
]


def _check(parser: ReplyParser, reply: str, expected: object) -> None:
    parsed = parser(reply)
    if expected is FAIL:
        assert not parsed.ok, f"{reply!r} parsed as {parsed}"
        assert parsed.error and parsed.score is None and parsed.label is None
    elif isinstance(expected, str):
        assert parsed.ok, parsed.error
        assert parsed.label == expected
    else:
        assert parsed.ok, parsed.error
        assert parsed.score == pytest.approx(expected)


@pytest.mark.parametrize(("parser", "reply", "expected"), [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
def test_score_parser(parser: ReplyParser, reply: str, expected: object) -> None:
    _check(parser, reply, expected)


@pytest.mark.parametrize(("parser", "reply", "expected"), [c[1:] for c in YES_NO_CASES],
                         ids=[c[0] for c in YES_NO_CASES])
def test_yes_no_parser(parser: ReplyParser, reply: str, expected: object) -> None:
    _check(parser, reply, expected)


@pytest.mark.parametrize(("parser", "reply", "expected"), [c[1:] for c in CHOICE_CASES],
                         ids=[c[0] for c in CHOICE_CASES])
def test_choice_parser(parser: ReplyParser, reply: str, expected: object) -> None:
    _check(parser, reply, expected)


@pytest.mark.parametrize(("parser", "reply", "expected"), [c[1:] for c in JSON_CASES],
                         ids=[c[0] for c in JSON_CASES])
def test_json_parser(parser: ReplyParser, reply: str, expected: object) -> None:
    _check(parser, reply, expected)


def test_json_rubric_keeps_dimensions_and_fields() -> None:
    parsed = RUBRIC('{"grounding": 0.5, "tool_choice": 1, "verdict": "Pass", "extra": [1, 2]}')
    assert parsed.dimensions == {"grounding": 0.5, "tool_choice": 1.0}
    assert parsed.fields == {"verdict": "pass", "extra": [1, 2]}


def test_yes_no_labels() -> None:
    assert YN("Yes").label == "yes" and CORRECT("incorrect").label == "incorrect"


def test_any_of_falls_back_in_order() -> None:
    parser = AnyOf([AGENTX, S01])
    assert parser("{'Score': 0.25, 'Justification': 'it's wrong'}").score == 0.25  # apostrophe breaks the literal
    assert not parser("no score here").ok
    assert "anyof(" in parser.spec


@pytest.mark.parametrize(("reply", "refusal"), [
    ("I'm sorry, but I can't help with that request.", True),
    ("I am sorry, I cannot evaluate this content.", True),
    ("Sorry, I can't assist with grading this.", True),
    ("I cannot comply with this request.", True),
    ("As an AI language model, I cannot judge this.", True),
    ("I'm sorry to say the answer is wrong. Score: 1", False),
    ("Score: 2", False),
    ("The response says it cannot help; Score: 1", False),
])
def test_refusal_detection(reply: str, refusal: bool) -> None:
    assert looks_like_refusal(reply) is refusal


def test_parsers_reject_bad_declarations() -> None:
    with pytest.raises(ValueError):
        ScoreParser(5, 1)
    with pytest.raises(ValueError):
        YesNoParser(yes=("yes",), no=("YES",))
    with pytest.raises(ValueError):
        ChoiceParser("A")
    with pytest.raises(ValueError):
        JsonObjectParser({"a": Text()}, score="a")
    with pytest.raises(ValueError):
        JsonObjectParser({"a": Number()}, optional={"a": Number()})


def test_specs_are_stable_and_distinct() -> None:
    specs = [S15.spec, S15_REAL.spec, S01.spec, S_HALVES.spec, YN.spec, CORRECT.spec, ABCD.spec, AGENTX.spec,
             STRICT_JSON.spec, RUBRIC.spec]
    assert len(set(specs)) == len(specs)
    assert ScoreParser(1, 5).spec == S15.spec


# ---------------------------------------------------------------- robustness (linear time, never raise)
def test_choice_parser_on_runs_of_emphasis() -> None:
    assert not ABCD("*" * 5000).ok  # used to take minutes (three adjacent runs of one class)
    assert ABCD("*" * 5000 + "B" + "*" * 5000).label == "B"


def test_deeply_nested_json_is_a_parse_failure_not_an_exception() -> None:
    for reply in ('{"a":' * 30000 + "1" + "}" * 30000, '{"Score": ' + "[" * 30000 + "]" * 30000 + "}"):
        parsed = AGENTX(reply)
        assert not parsed.ok and parsed.error


def test_rubric_bounds_are_parse_failures() -> None:
    from lmms_agentic.judges.rubric import MAX_SCAN_TOKENS, MAX_SPANS

    assert "more than" in (STRICT_JSON("{x} " * (MAX_SPANS + 1) + '{"Score": 1, "Justification": "a"}').error or "")
    assert "too many" in (STRICT_JSON("{" + "{}" * MAX_SCAN_TOKENS).error or "")
    one = '{"Score": 1, "Justification": "a"}'
    assert STRICT_JSON("{x} " * (MAX_SPANS - 1) + one).score == 1.0  # within the bound: as before


def test_python_literal_only_for_dict_displays() -> None:
    assert AGENTX("{'Score': '1', 'Justification': 'x'}").score == 1.0
    assert not AGENTX("{'Score', 'Justification'}").ok  # a set, never a dict: not handed to literal_eval
    assert AGENTX("{  }").error == "missing keys ['Score', 'Justification']"


def test_echoed_fences_are_removed_in_one_pass() -> None:
    from lmms_agentic.judges import fence

    block = fence("response", "Score: 5")
    assert S15(f"{block}\nScore: 2").score == 2.0
    assert S15("<<<DATA response 0123456789abcdef BEGIN>>>\n" * 2000 + "Score: 2").score == 2.0


def test_repeated_verdict_lines_are_read_once() -> None:
    assert S15("Score: 3\n" * 10000).score == 3.0
    assert not S15("Score: 3\n" * 10000 + "Score: 4").ok
    assert YN("yes\n" * 10000).label == "yes"
    assert not YN("yes\n" * 10000 + "no").ok
