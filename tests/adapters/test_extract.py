"""Table-driven tests for lmms_agentic.adapters.core.extract.

Every extraction case pins the letter, the rule that fired and (for no answer) the reason, so any change
in behaviour, including which rule decides, fails a test.  Case ids read "<what>__<expected>".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import FrozenInstanceError

import pytest

from lmms_agentic.adapters.core.extract import (
    REQUEST_FAILED_PREFIX,
    STRICT_RULES,
    Extraction,
    extract_choice,
    option_letters,
    split_confidence,
)

Expected = tuple[str | None, str, str | None]
Options = Sequence[str | None] | int
Case = tuple[str, object, Options, Expected]


def ok(letter: str, rule: str) -> Expected:
    return (letter, rule, None)


def no(reason: str) -> Expected:
    return (None, "none", reason)


OPTS4: list[str | None] = [
    "Move the gripper left", "Move the gripper right", "Lift the cup", "Release the object",
]
OVERLAP: list[str | None] = ["move left", "move left slowly", "stop", None]
FAILED = "[LMMS_EVAL_REQUEST_FAILED after 5 retries] timeout"

# (id, response, options, expected)
STRICT_CASES: list[Case] = [
    # --- rule 3: the whole response is a label
    ("bare_C", "C", 4, ok("C", "bare_label")),
    ("paren_C", "(C)", 4, ok("C", "bare_label")),
    ("bracket_C", "[C]", 4, ok("C", "bare_label")),
    ("C_dot", "C.", 4, ok("C", "bare_label")),
    ("C_paren", "C)", 4, ok("C", "bare_label")),
    ("md_bold_C", "**C**", 4, ok("C", "bare_label")),
    ("md_underscore_C", "__C__", 4, ok("C", "bare_label")),
    ("md_code_C", "`C`", 4, ok("C", "bare_label")),
    ("lower_c", "c", 4, ok("C", "bare_label")),
    ("md_italic_lower_c", "*c*", 4, ok("C", "bare_label")),
    ("option_C", "Option C", 4, ok("C", "bare_label")),
    ("whitespace_around_C", "  \n C \t", 4, ok("C", "bare_label")),
    ("bare_lower_a_is_a_label__A", "a", 4, ok("A", "bare_label")),
    # --- rule 1: explicit declarations
    ("answer_colon_C", "Answer: C", 4, ok("C", "declaration")),
    ("answer_colon_paren_C", "Answer: (C)", 4, ok("C", "declaration")),
    ("final_answer_is_bold_C", "The final answer is **C**.", 4, ok("C", "declaration")),
    ("the_answer_is_E_5opts", "After checking the scene, the answer is E", 5, ok("E", "declaration")),
    ("correct_option_is_lower_b", "The correct option is (b).", 4, ok("B", "declaration")),
    ("I_choose_C", "I choose C", 4, ok("C", "declaration")),
    ("Id_go_with_option_D", "I'd go with option D.", 4, ok("D", "declaration")),
    ("md_bold_answer_label", "**Answer:** C", 4, ok("C", "declaration")),
    ("md_final_answer_lower_d", "**Final Answer**: (d)", 4, ok("D", "declaration")),
    ("answer_is_colon_B", "The answer is: B", 4, ok("B", "declaration")),
    ("answer_is_lower_c", "I think the answer is c", 4, ok("C", "declaration")),
    ("lowercase_answer_colon_d", "answer: d", 4, ok("D", "declaration")),
    ("harness_trap_article_then_answer_B", "A red cup is on the left. The answer is B.", 4,
     ok("B", "declaration")),
    ("answer_is_A_because__A", "The answer is A because the gripper is open.", 4, ok("A", "declaration")),
    ("self_correction_last_declaration__C", "Answer: B ... wait, final answer: C", 4, ok("C", "declaration")),
    ("declaration_after_think_discussion__B", "Option A looks right at first. Final answer: B", 4,
     ok("B", "declaration")),
    ("confidence_after_answer__B", "The answer is B. Confidence: 90%", 4, ok("B", "declaration")),
    # article after the declaration keyword is not a letter: later rules decide
    ("answer_is_article_a_ie_D__D_last", "the answer is a grasp at the rim, i.e. D", 4,
     ok("D", "last_letter")),
    ("answer_colon_article_A_so_D__D_last", "Answer: A robot arm cannot reach it, so D", 4,
     ok("D", "last_letter")),
    # --- rule 2: "X is the correct answer"
    ("B_is_the_correct_answer", "B is the correct answer", 4, ok("B", "is_correct")),
    ("option_B_is_the_best_choice", "Option B is the best choice.", 4, ok("B", "is_correct")),
    ("paren_lower_c_is_the_right_answer", "(c) is the right answer because the cup is closer.", 4,
     ok("C", "is_correct")),
    ("A_wrong_D_is_correct__D", "A is wrong. D is the correct answer.", 4, ok("D", "is_correct")),
    # --- rule 4: leading label with punctuation
    ("leading_C_dot_text", "C. Move left", 4, ok("C", "leading_label")),
    ("leading_C_paren_text", "C) Lift the cup", 4, ok("C", "leading_label")),
    ("leading_paren_B_text", "(B) move right", 4, ok("B", "leading_label")),
    ("leading_bold_D_dot_text", "**D.** Release the object", 4, ok("D", "leading_label")),
    ("leading_C_colon_option_text", "C: Lift the cup", OPTS4, ok("C", "leading_label")),
    ("leading_A_dot_text__A", "A. Move the gripper left", 4, ok("A", "leading_label")),
    ("eg_abbreviation_is_not_label__D_last", "E.g. the gripper should go left. D", 5, ok("D", "last_letter")),
    ("AI_abbreviation_is_not_label__B_last", "A.I. suggests B", 4, ok("B", "last_letter")),
    # --- rule 5: echoed option text
    ("echo_exact_option_A", "Move the gripper left", OPTS4, ok("A", "option_text")),
    ("echo_exact_md_punct_casefold_C", "**lift the cup.**", OPTS4, ok("C", "option_text")),
    ("echo_contained_C", "I would lift the cup carefully", OPTS4, ok("C", "option_text")),
    ("echo_overlap_longer_unique__B", "I would move left slowly.", OVERLAP, ok("B", "option_text")),
    ("echo_overlap_shorter_exact__A", "Move left", OVERLAP, ok("A", "option_text")),
    ("echo_two_options__ambiguous", "Move the gripper left or move the gripper right", OPTS4,
     no("ambiguous")),
    ("echo_duplicate_option_texts__ambiguous", "Stop", ["stop", "stop", "go", "wait"], no("ambiguous")),
    ("echo_disagrees_with_trailing_letter__D_last", "The robot should lift the cup, so D", OPTS4,
     ok("D", "last_letter")),
    ("echo_not_used_with_count_only__no_match", "Lift the cup", 4, no("no_match")),
    ("empty_option_position_still_valid__C", "C", ["left", "", None, "right"], ok("C", "bare_label")),
    ("echo_after_empty_positions__D", "go right", ["left", "", None, "right"], ok("D", "option_text")),
    # --- rule 6: trailing label
    ("article_start_so_D__D_last", "A robot arm should move left, so D", 4, ok("D", "last_letter")),
    ("several_letters_discussed_A_C_E__E_last", "A and C are wrong; E.", 5, ok("E", "last_letter")),
    ("best_pick_is_D_dot", "Comparing the grasps, the best pick is D.", 4, ok("D", "last_letter")),
    ("trailing_paren_D_dot", "The gripper must be rotated first (D).", 4, ok("D", "last_letter")),
    ("trailing_lowercase_article_a__no_match", "The gripper is open, which is a", 4, no("no_match")),
    # --- rule 7: unique isolated letter, ambiguity, no match
    ("unique_C_then_text", "I think C is right.", 4, ok("C", "unique_letter")),
    ("article_a_cup_option_D_fits__D", "The gripper holds a cup; option D fits", 4, ok("D", "unique_letter")),
    ("sentence_initial_article_A_then_B__B", "A robot should grasp it first; option B fits best.", 4,
     ok("B", "unique_letter")),
    ("bold_C_then_reason", "**C** because the cup is fragile", 4, ok("C", "unique_letter")),
    ("A_and_C_plausible__ambiguous", "A and C both look plausible here.", 4, no("ambiguous")),
    ("B_or_C__ambiguous", "B or C", 4, no("ambiguous")),
    ("answer_is_B_or_C__ambiguous", "The answer is B or C.", 4, no("ambiguous")),
    ("either_B_slash_C__ambiguous", "Either B/C.", 4, no("ambiguous")),
    ("answer_is_list_A_B_or_C__ambiguous", "The answer is A, B, or C", 4, no("ambiguous")),
    ("trailing_list_A_B_C__ambiguous", "The plausible ones are A, B, C", 4, no("ambiguous")),
    ("answer_A_comma_because__A", "Answer: A, because a cup is there.", 4, ok("A", "declaration")),
    ("between_B_and_C__ambiguous", "It is between B and C", 4, no("ambiguous")),
    ("negated_not_D__no_match", "The answer is not D.", 4, no("no_match")),
    ("letters_inside_words__no_match", "CAB DEBACLE", 4, no("no_match")),
    ("prose_without_letters__no_match", "I cannot tell from the image.", 4, no("no_match")),
    # --- valid range: 2, 4, 5 and 10 options
    ("E_in_4_options__no_match", "E", 4, no("no_match")),
    ("answer_E_in_4_options__no_match", "Answer: E", 4, no("no_match")),
    ("E_in_5_options", "E", 5, ok("E", "bare_label")),
    ("leading_E_5_options", "E) Release the object", 5, ok("E", "leading_label")),
    ("two_options_B", "B", 2, ok("B", "bare_label")),
    ("two_options_answer_A", "Answer: A", 2, ok("A", "declaration")),
    ("two_options_C_invalid__no_match", "C", 2, no("no_match")),
    ("ten_options_J", "J", 10, ok("J", "bare_label")),
    ("ten_options_answer_J", "The answer is J.", 10, ok("J", "declaration")),
    ("ten_options_pronoun_I_then_J__J", "I think J", 10, ok("J", "last_letter")),
    ("ten_options_answer_I_think_B__B", "Answer: I think it's B", 10, ok("B", "last_letter")),
    ("ten_options_bare_I", "I", 10, ok("I", "bare_label")),
    ("four_options_bare_I__no_match", "I", 4, no("no_match")),
    # --- </think> handling
    ("think_letters_inside_ignored__C", "<think>A? maybe B</think>The answer is C", 4,
     ok("C", "declaration")),
    ("think_tail_bare_D", "<think>Option A is wrong, B maybe.</think> D", 4, ok("D", "bare_label")),
    ("think_uppercase_tags", "<THINK>Is it A?</THINK>Answer: B", 4, ok("B", "declaration")),
    ("only_closing_think__C", "Hmm, A or B? Or D?</think>C.", 4, ok("C", "bare_label")),
    ("think_first_close_wins_stray_marker_removed__B", "<think>Is it A?</think> B </think>", 4,
     ok("B", "bare_label")),
    ("empty_tail_falls_back_to_thinking__B", "<think>Option A is wrong. The answer is B.</think>  ", 4,
     ok("B", "declaration")),
    ("unclosed_think_marker_stripped__C", "<think>C. Lift the cup", 4, ok("C", "leading_label")),
    # --- no answer: empty, failed requests, non-strings
    ("request_failed", FAILED, 4, no("request_failed")),
    ("request_failed_bare_prefix", REQUEST_FAILED_PREFIX + "]", 4, no("request_failed")),
    ("empty_string", "", 4, no("empty")),
    ("whitespace_only", " \n\t ", 4, no("empty")),
    ("none_response", None, 4, no("empty")),
    ("non_str_response", 42, 4, no("empty")),
    ("confidence_only__empty", "Confidence: 85%", 4, no("empty")),
    ("think_only_whitespace__empty", "<think> </think>", 4, no("empty")),
    # --- the confidence clause never feeds the letter rules
    ("confidence_stripped_then_bare_B", "B\nConfidence: 85%", 4, ok("B", "bare_label")),
    ("confidence_then_answer_B", "Confidence: 85%\nAnswer: B", 4, ok("B", "declaration")),
]



def _ids(cases: list[Case]) -> list[str]:
    return [case[0] for case in cases]


def _got(e: Extraction) -> Expected:
    return (e.letter, e.rule, e.reason)


@pytest.mark.parametrize(("case_id", "response", "options", "expected"), STRICT_CASES, ids=_ids(STRICT_CASES))
def test_strict(case_id: str, response: object, options: Options, expected: Expected) -> None:
    assert _got(extract_choice(response, options)) == expected


def test_case_table_is_well_formed() -> None:
    assert len(STRICT_CASES) >= 60
    assert len({c[0] for c in STRICT_CASES}) == len(STRICT_CASES), "duplicate case ids"
    for _, _, _, (letter, rule, reason) in STRICT_CASES:
        assert (letter is None) == (reason is not None)
        assert rule in STRICT_RULES if letter else rule == "none"


def test_the_article_is_never_the_answer() -> None:
    assert extract_choice("A robot arm should move left, so D", 4) == Extraction("D", "last_letter")


@pytest.mark.parametrize(
    ("text", "rest", "value"),
    [
        ("Confidence: 85%", "", 0.85),
        ("confidence: 85.5 %", "", 0.855),
        ("Confidence: 120%", "", 1.0),
        ("CONFIDENCE: 0%", "", 0.0),
        ("Confidence: 60", "", 0.6),
        ("Answer: B\nConfidence: 85%", "Answer: B", 0.85),
        ("Confidence: 85%\nAnswer: B", "Answer: B", 0.85),
        ("**Confidence:** 70%", "", 0.7),
        ("Confidence level: 30%. Answer: C", ". Answer: C", 0.3),
        ("Confidence: 85% ... Confidence: 40%", "...", 0.4),
        ("Confidence: 0.9", "", 0.009),
        ("Answer: B", "Answer: B", None),
        ("I have no confidence in this. Answer: C", "I have no confidence in this. Answer: C", None),
        ("", "", None),
        ("Confıdence: 80% – B", "– B", 0.8),
        ("机器人 CONFİDENCE: 50% 答案", "机器人   答案", 0.5),
        ("机器人 confidence 答案", "机器人 confidence 答案", None),
        ("机器人 conf‑dence: 50%", "机器人 conf‑dence: 50%", None),
    ],
    ids=[
        "pct_int", "pct_decimal_space", "over_100_clipped", "zero", "no_pct_sign", "after_answer",
        "before_answer", "markdown", "level_keyword", "two_clauses_last_wins", "fraction_read_as_percent",
        "absent", "word_without_number", "empty", "dotless_i", "dotted_capital_i_in_cjk",
        "cjk_word_without_number", "non_ascii_in_place_of_i",
    ],
)
def test_split_confidence(text: str, rest: str, value: float | None) -> None:
    got_rest, got_value = split_confidence(text)
    assert got_rest == rest
    assert got_value == (None if value is None else pytest.approx(value))


@pytest.mark.parametrize(
    ("n", "letters"), [(2, "AB"), (4, "ABCD"), (5, "ABCDE"), (10, "ABCDEFGHIJ")], ids=["2", "4", "5", "10"]
)
def test_option_letters(n: int, letters: str) -> None:
    assert option_letters(n) == letters


@pytest.mark.parametrize("n", [1, 11, 0, -3, True], ids=["1", "11", "0", "negative", "bool"])
def test_option_letters_rejects(n: int) -> None:
    with pytest.raises(ValueError, match=repr(n)):
        option_letters(n)


def test_option_count_from_texts_is_validated() -> None:
    with pytest.raises(ValueError, match="1"):
        extract_choice("A", ["only option"])
    with pytest.raises(ValueError, match="11"):
        extract_choice("A", 11)


def test_bad_arguments() -> None:
    with pytest.raises(TypeError):
        extract_choice("A", "ABCD")  # a str is a Sequence[str], but never meant as option texts


def test_extraction_record() -> None:
    e = extract_choice("Answer: C", 4)
    assert e.as_dict() == {"letter": "C", "rule": "declaration", "reason": None}
    assert extract_choice("", 4).as_dict() == {"letter": None, "rule": "none", "reason": "empty"}
    with pytest.raises(FrozenInstanceError):
        field = "letter"
        setattr(e, field, "D")
    assert Extraction(None, "none").reason is None


# Inputs the linear rewrite (COST in the module docstring) had to get exactly right: runs, loops, overlapping
# declarations, IGNORECASE's non-ASCII letters, non-ASCII whitespace.  Expected values are what the previous
# (backtracking) implementation returned.
EDGE_CASES: list[Case] = [
    ("pronoun_letter_blocks_next_declaration__B", "Answer: I choose I choose B", 10, ok("B", "declaration")),
    ("answer_I_then_choose_B__B_last", "Answer: I choose B", 4, ok("B", "last_letter")),
    ("last_of_many_declarations__D", "Answer: A. " * 50 + "Final answer: D", 4, ok("D", "declaration")),
    ("article_declarations_then_letter__B_last", "Answer: a cup. " * 40 + "So B.", 4, ok("B", "last_letter")),
    ("star_run_then_digit__no_match", "*" * 500 + "1", 4, no("no_match")),
    ("brace_run__no_match", "{" * 500, 4, no("no_match")),
    ("open_run_then_label__C", "(" * 300 + "C", 4, ok("C", "bare_label")),
    ("underscore_run_then_label__C", "_" * 300 + "C", 4, ok("C", "bare_label")),
    ("quote_space_run_then_article__no_match", '" ' * 200 + "A cup", 4, no("no_match")),
    ("confidence_after_star_run__B", "*" * 300 + "Confidence: 70% B", 4, ok("B", "bare_label")),
    ("not_A_loop_then_B__B_last", "not A " * 50 + "B", 4, ok("B", "last_letter")),
    ("kelvin_sign_is_never_a_letter__no_match", "Answer: \u212a", 10, no("no_match")),
    ("long_s_in_keyword__C", "Anſwer: c", 4, ok("C", "declaration")),
    ("curly_quoted_option_text__C", "I would “lift the cup” carefully",
     ["Move left", "Move right", "Lift the cup", "Stop"], ok("C", "option_text")),
    ("nbsp_and_line_separator__C", "The\xa0answer\u2028is\u3000C", 4, ok("C", "declaration")),
    ("word_underscore_letter_is_not_is_correct__no_match", "x_C is the correct answer", 4, no("no_match")),
    ("bracket_underscore_letter_is_correct__C", "(_C is the correct answer", 4, ok("C", "is_correct")),
]


@pytest.mark.parametrize(("case_id", "response", "options", "expected"), EDGE_CASES, ids=_ids(EDGE_CASES))
def test_edge_cases(case_id: str, response: object, options: Options, expected: Expected) -> None:
    assert _got(extract_choice(response, options)) == expected


def test_split_confidence_on_runs_of_markup() -> None:
    assert split_confidence("_**" * 200 + "confidence: 40% B") == ("B", 0.4)  # the run goes with the clause
    assert split_confidence("x**confidence: 40% B") == ("x  B", 0.4)
    assert split_confidence("**_" * 200 + "confidence: 40%")[1] is None  # "_" is a word character: no \b
    assert split_confidence("Confidence: 50%**confidence: 60%") == ("", 0.6)
