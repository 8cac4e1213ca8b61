"""Table-driven tests for lmms_agentic.adapters.loops (thinking-loop and truncation detector, AgentVQA App. J).

Each case pins ``loop`` and ``truncated`` and, where it matters, ``runs_to_end``, ``hit_token_limit`` and the
reported cycle.  Case ids read "<what>__<loop|noloop>[_trunc]".  Every input is built deterministically here.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import FrozenInstanceError
from typing import Any

import pytest

from lmms_agentic.adapters import loops
from lmms_agentic.adapters.loops import (
    CYCLE_LOG_CHARS,
    MIN_REPEATS,
    REQUEST_FAILED_PREFIX,
    TAIL_CHARS,
    LoopCheck,
    aggregate,
    check_response,
    token_slack,
)

# --- building blocks -------------------------------------------------------------------------------------------

PAPER = "The person then places another triangle next to the circle and the triangle."  # GLM-4.1V-Thinking, App. J

PARAGRAPHS = [
    "The video shows a kitchen counter seen from a head-mounted camera. At the start a person holds a blue mug in "
    "the right hand and a sponge in the left. The question asks which action follows after the mug is rinsed, so "
    "I need to track the order of events rather than the objects alone.",
    "In the second frame the tap is open and water runs over the mug. The sponge is still in the left hand, which "
    "suggests scrubbing has not happened yet. Option B says the person dries the mug, but no towel is visible "
    "anywhere near the sink, so B seems unlikely at this point.",
    "Looking more carefully at frames four to six, the person puts the sponge down on the right edge of the sink "
    "and turns the mug upside down. That is a typical drying posture. Option C, placing the mug on the rack, "
    "matches this: the rack is on the left and the hand moves toward it in frame six.",
    "Let me double-check option A, which claims the person fills the mug with coffee. The coffee machine is behind "
    "the person and never enters the field of view after the rinse. There is no pouring motion either. So A can "
    "be ruled out with reasonable confidence.",
    "Option D mentions opening the fridge. The fridge handle appears only in the very first frame, before the mug "
    "was rinsed, so the timing is wrong even if the fridge is opened later off camera. The evidence points to C.",
    "To be thorough about the spatial layout: the rack is to the left of the sink, about an arm's length away, and "
    "the camera tilts left in the last frames. Combined with the inverted mug, the most consistent reading is that "
    "the mug goes onto the rack next.",
]

_CONNECTIVES = ["So", "Then", "However,", "Next,", "Also,"]
_SUBJECTS = ["the gripper", "the red cube", "the blue bowl", "the robot arm", "the camera", "the drawer", "the sponge"]
_VERBS = ["moves toward", "stays behind", "appears next to", "is rotated away from", "is lifted above", "touches",
          "is pushed past", "casts a shadow on", "is hidden by", "is aligned with", "slides under"]
_OBJECTS = ["the shelf", "the green plate", "the window", "the left handle", "the mug", "the table edge",
            "the yellow block", "the sink", "the towel", "the cable", "the target zone", "the box lid", "the tray"]


def cot(chars: int) -> str:
    """Varied, non-looping reasoning of about ``chars`` characters: the handwritten paragraphs, then generated
    sentences whose (connective, subject, verb, object) indices cycle with co-prime lengths 5, 7, 11, 13 (no digits,
    so non-periodicity does not rely on numbers; the sentence sequence only repeats after 5,005 sentences)."""
    parts = ["\n\n".join(PARAGRAPHS)]
    size = len(parts[0])
    i = 0
    while size < chars:
        sentence = (f"{_CONNECTIVES[i % 5]} {_SUBJECTS[(3 * i) % 7]} {_VERBS[(2 * i) % 11]} "
                    f"{_OBJECTS[i % 13]}.")
        sentence = sentence[0].upper() + sentence[1:]
        parts.append(("\n\n" if i % 6 == 0 else " ") + sentence)
        size += len(parts[-1])
        i += 1
    return "".join(parts)[:chars]


def repeat_to(unit: str, chars: int) -> str:
    """``unit`` repeated and cut at exactly ``chars`` characters (mid-word, as a token limit does)."""
    return (unit * (chars // len(unit) + 1))[:chars]


def block(chars: int) -> str:
    """``chars`` characters of varied text without whitespace (so normalisation keeps its length)."""
    text = cot(chars + 200)[100:].replace(" ", "_").replace("\n", "_")
    assert len(text) >= chars
    return text[:chars]


PREAMBLE = "Let me work through the sequence of shapes. First the person places a circle in the middle. "
TWO = "Wait, the triangle is to the left of the circle. No, I should look again at the second image. "
THREE = ("Is it option B? The square is above the circle. But then the triangle must move first. ")
LONG_UNIT = " ".join(PARAGRAPHS[:2]) + " "            # ~560 characters
HUGE_UNIT = " ".join(PARAGRAPHS) + " "                # ~1,600 characters: > TAIL_CHARS / MIN_REPEATS
COUNTER = "".join(f"Step {i}: the robot moves the cube one cell to the left. " for i in range(1, 400))
TABLE = (
    "| Frame | Gripper | Object | Position |\n|---|---|---|---|\n"
    + "".join(f"| {i} | {g} | {o} | ({x}, {y}) |\n" for i, (g, o, x, y) in enumerate([
        ("open", "red cube", 120, 340), ("closing", "red cube", 122, 338), ("closed", "red cube", 125, 301),
        ("closed", "red cube", 180, 240), ("opening", "red cube", 260, 230), ("open", "none", 262, 231),
        ("open", "blue bowl", 300, 410), ("closing", "blue bowl", 301, 402)], start=1))
    + "\nThe gripper closes on the red cube at frame 3, so the answer is B."
)
CODE = '''Here is the plan as code:

```python
def plan(scene):
    actions = []
    for obj in scene.objects:
        if obj.color == "red":
            actions.append(("pick", obj.name))
            actions.append(("place", "bin_left"))
        elif obj.color == "blue":
            actions.append(("pick", obj.name))
            actions.append(("place", "bin_right"))
        else:
            actions.append(("skip", obj.name))
    return actions
```

Running this on the scene gives pick, place, pick, place, skip. The answer is C.'''
OPTIONS = ("The options are: A. move the gripper left, B. move the gripper right, C. open the gripper, D. close "
           "the gripper. The cube is on the left of the gripper, so it should move left. A. move the gripper left "
           "is consistent with the image. Final answer: A. move the gripper left")
ENUMERATION = "\n".join(
    f"Step {i}: {step}" for i, step in enumerate([
        "locate the red cube on the table.", "move the gripper above the red cube.", "open the gripper fully.",
        "lower the gripper until it touches the cube.", "close the gripper to grasp the cube.",
        "lift the cube ten centimetres.", "rotate the wrist toward the bowl.", "move above the blue bowl.",
        "lower the cube into the bowl.", "open the gripper to release the cube.", "lift the gripper back up.",
        "return to the home position."], start=1)) + "\nSo the correct order is option D."
SIMILAR_ITEMS = "Objects on the table:\n" + "\n".join(
    f"- a {c} {s} on the {p} side of the tray" for c, s, p in [
        ("red", "cube", "left"), ("red", "cube", "right"), ("blue", "cube", "left"), ("blue", "sphere", "left"),
        ("green", "cube", "far"), ("green", "sphere", "near"), ("yellow", "cube", "left"), ("yellow", "cone", "right"),
        ("red", "sphere", "far"), ("blue", "cone", "near"), ("white", "cube", "left"), ("black", "cube", "left"),
        ("red", "cone", "left"), ("green", "cone", "right"), ("blue", "cube", "far"), ("white", "sphere", "near")])
MIXED_CASE = ["The Robot MOVES left.", "the robot moves   left.", "\n\nthe robot   moves left.\t",
              "THE ROBOT MOVES LEFT."]
JSON_STEP = '{"step": 3, "tool": "OCR", "output": "no text found"}, '
ESCAPE = "</think>\n\nAnswer: A"
FAILED = f"{REQUEST_FAILED_PREFIX} after 5 retries] timeout"
LIMIT = 10_240  # RoboVista's max_new_tokens

# --- the table ---------------------------------------------------------------------------------------------------

CASES: list[Any] = [
    # ---- constructed loops ----
    pytest.param(PREAMBLE + repeat_to(PAPER + " ", 40 * 78 + 23), {},
                 {"loop": True, "truncated": True, "runs_to_end": True, "cycle": PAPER.lower(), "repeats": 40},
                 id="paper_sentence_x40_cut_midword__loop_trunc"),
    pytest.param(cot(6000) + " " + repeat_to(PAPER + " ", 20_000), {},
                 {"loop": True, "truncated": True, "tail_coverage": 1.0}, id="paper_loop_after_long_cot__loop_trunc"),
    pytest.param(PREAMBLE + "\n".join([PAPER] * 30), {}, {"loop": True, "truncated": True, "cycle": PAPER.lower()},
                 id="paper_sentence_newline_separated__loop_trunc"),
    pytest.param(PREAMBLE + repeat_to(TWO, 3000), {}, {"loop": True, "truncated": True},
                 id="two_sentence_cycle__loop_trunc"),
    pytest.param(cot(2000) + repeat_to(THREE, 3000), {},
                 {"loop": True, "cycle": THREE.strip().lower(), "truncated": True},
                 id="three_sentence_cycle__loop_trunc"),
    # The loop fills the whole tail: where it began is not visible, so the cycle is reported from a sentence start.
    pytest.param(cot(2000) + repeat_to(THREE, 9000), {},
                 {"loop": True, "cycle": "but then the triangle must move first. is it option b? the square is above "
                                         "the circle.", "tail_coverage": 1.0},
                 id="three_sentence_cycle_fills_tail__loop_trunc"),
    pytest.param("I think the order is " + repeat_to("left right up ", 3001), {},
                 {"loop": True, "cycle": "left right up", "truncated": True}, id="ngram_no_punctuation__loop_trunc"),
    pytest.param("A " * 300, {}, {"loop": True, "cycle": "a", "repeats": 300}, id="single_letter_A_x300__loop_trunc"),
    pytest.param("A\n" * 300, {}, {"loop": True, "cycle": "a", "repeats": 300}, id="letter_per_line_x300__loop_trunc"),
    pytest.param("Thinking: " + "*" * 5000, {}, {"loop": True, "cycle": "*", "repeats": TAIL_CHARS},
                 id="star_run__loop_trunc"),
    pytest.param("{" * 100_000, {}, {"loop": True, "cycle": "{"}, id="brace_run_100k__loop_trunc"),
    pytest.param(" ".join(MIXED_CASE * 40), {}, {"loop": True, "cycle": "the robot moves left."},
                 id="case_and_whitespace_variants__loop_trunc"),
    pytest.param("我们来看图片。" + "机器人把三角形放在圆的旁边。" * 40, {},
                 {"loop": True, "cycle": "机器人把三角形放在圆的旁边。", "repeats": 40, "truncated": True},
                 id="cjk_sentence_loop__loop_trunc"),
    pytest.param(repeat_to("向左移动", 800), {}, {"loop": True, "cycle": "向左移动"},
                 id="cjk_ngram_no_punct__loop_trunc"),
    pytest.param("ロボットは左に動きます。" * 30, {}, {"loop": True}, id="japanese_loop__loop_trunc"),
    pytest.param("Answer: " + "🤖🔺⭕ " * 200, {}, {"loop": True, "cycle": "🤖🔺⭕"}, id="emoji_loop__loop_trunc"),
    pytest.param(cot(4000) + repeat_to(LONG_UNIT, 4 * len(LONG_UNIT) + 50), {}, {"loop": True, "repeats": 4},
                 id="paragraph_cycle_560chars_x4__loop_trunc"),
    pytest.param(cot(3000) + repeat_to(JSON_STEP, 4000), {}, {"loop": True, "cycle": JSON_STEP.strip().lower()},
                 id="json_step_loop__loop_trunc"),
    # ---- loop, then a short escape (answer after the cycle) ----
    pytest.param(PREAMBLE + PAPER + (" " + PAPER) * 40 + ESCAPE, {"answered": True},
                 {"loop": True, "runs_to_end": False, "truncated": False, "cycle": PAPER.lower()},
                 id="loop_then_answer__loop"),
    pytest.param(PREAMBLE + PAPER + (" " + PAPER) * 40 + "</think>\n\nI cannot tell from the images.", {},
                 {"loop": True, "runs_to_end": False, "truncated": False}, id="loop_then_escape_no_tokens__loop"),
    pytest.param(PREAMBLE + PAPER + (" " + PAPER) * 40 + "</think>\n\nI cannot tell.",
                 {"n_tokens": LIMIT, "max_new_tokens": LIMIT, "answered": False},
                 {"loop": True, "runs_to_end": False, "truncated": True, "hit_token_limit": True},
                 id="loop_then_escape_at_limit_unanswered__loop_trunc"),
    pytest.param("Order: " + repeat_to("left right up ", 3000).rstrip() + ESCAPE, {"answered": True},
                 {"loop": True, "runs_to_end": False, "cycle": "left right up"},
                 id="ngram_loop_then_think_close__loop"),
    pytest.param(cot(3000) + repeat_to(THREE, 3000) + "\n\n" + cot(1500), {}, {"loop": False, "truncated": False},
                 id="loop_then_long_progress__noloop"),
    # ---- loops and the token limit / answered ----
    pytest.param(PREAMBLE + repeat_to(PAPER + " ", 8000), {"n_tokens": LIMIT, "max_new_tokens": LIMIT},
                 {"loop": True, "truncated": True, "hit_token_limit": True}, id="loop_at_limit__loop_trunc"),
    pytest.param(PREAMBLE + (PAPER + " ") * 40, {"n_tokens": 900, "max_new_tokens": LIMIT, "answered": False},
                 {"loop": True, "truncated": False, "hit_token_limit": False}, id="loop_stopped_by_eos__loop"),
    pytest.param(PREAMBLE + repeat_to(PAPER + " ", 8000), {"n_tokens": LIMIT, "max_new_tokens": LIMIT,
                                                           "answered": True},
                 {"loop": True, "truncated": False}, id="loop_at_limit_answered__loop"),
    pytest.param(PREAMBLE + repeat_to(PAPER + " ", 8000), {"answered": False}, {"loop": True, "truncated": True},
                 id="loop_unanswered_no_tokens__loop_trunc"),
    pytest.param(PREAMBLE + repeat_to(PAPER + " ", 8000), {"answered": True}, {"loop": True, "truncated": False},
                 id="loop_answered_no_tokens__loop"),
    pytest.param(PREAMBLE + repeat_to(PAPER + " ", 8000), {"n_tokens": 2000}, {"loop": True, "truncated": True},
                 id="loop_tokens_without_limit_is_unknown__loop_trunc"),
    # ---- no response ----
    pytest.param("", {}, {"loop": False, "truncated": False, "length_chars": 0}, id="empty__noloop"),
    pytest.param(" \n\t  \n", {"n_tokens": LIMIT, "max_new_tokens": LIMIT}, {"loop": False, "truncated": False},
                 id="whitespace_only_at_limit__noloop"),
    pytest.param(None, {}, {"loop": False, "truncated": False, "length_chars": 0}, id="none__noloop"),
    pytest.param(42, {"n_tokens": LIMIT, "max_new_tokens": LIMIT}, {"loop": False, "truncated": False},
                 id="int__noloop"),
    pytest.param(b"A " * 300, {}, {"loop": False, "truncated": False}, id="bytes__noloop"),
    pytest.param(["A"] * 300, {}, {"loop": False, "truncated": False}, id="list__noloop"),
    pytest.param(FAILED, {}, {"loop": False, "truncated": False}, id="failed_request__noloop"),
    pytest.param(FAILED + " " + "A " * 500, {"n_tokens": LIMIT, "max_new_tokens": LIMIT, "answered": False},
                 {"loop": False, "truncated": False, "length_tokens": LIMIT}, id="failed_request_at_limit__noloop"),
    # ---- legitimate repetition and ordinary answers ----
    pytest.param("A", {}, {"loop": False, "truncated": False}, id="short_answer_A__noloop"),
    pytest.param("A", {"n_tokens": 1, "max_new_tokens": 16, "answered": True}, {"loop": False, "truncated": False,
                                                                               "hit_token_limit": False},
                 id="short_answer_with_tokens__noloop"),
    pytest.param("The answer is A. " * 3, {}, {"loop": False}, id="emphatic_three_repeats__noloop"),
    pytest.param("B\nB\nB\nB\nB", {}, {"loop": False}, id="letter_five_lines__noloop"),
    pytest.param(OPTIONS, {"answered": True}, {"loop": False}, id="option_text_restated__noloop"),
    pytest.param(ENUMERATION, {}, {"loop": False}, id="enumerated_steps__noloop"),
    pytest.param(TABLE, {}, {"loop": False}, id="markdown_table__noloop"),
    pytest.param(CODE, {}, {"loop": False}, id="code_block__noloop"),
    pytest.param(SIMILAR_ITEMS, {}, {"loop": False}, id="similar_list_items__noloop"),
    pytest.param(cot(20_000) + "\n\nAnswer: C", {"answered": True}, {"loop": False, "truncated": False},
                 id="long_cot_answered__noloop"),
    pytest.param(cot(200_000), {}, {"loop": False, "truncated": False}, id="long_cot_no_tokens__noloop"),
    pytest.param("\n".join(f"line {i}: value {i * 7 % 13}" for i in range(5000)), {}, {"loop": False},
                 id="many_distinct_short_lines__noloop"),
    pytest.param(cot(8000) + " " + "=" * 80, {}, {"loop": False}, id="horizontal_rule_at_end__noloop"),
    pytest.param("Hmm... let me think... the cube is red... so B.", {}, {"loop": False}, id="ellipses__noloop"),
    # ---- thresholds: near misses are not loops ----
    pytest.param(cot(8000) + " " + (PAPER + " ") * 5 + "So maybe", {}, {"loop": False},
                 id="short_lived_loop_low_coverage__noloop"),
    pytest.param(cot(1500) + (LONG_UNIT * 2), {}, {"loop": False}, id="paragraph_twice_below_min_repeats__noloop"),
    pytest.param(cot(3000) + HUGE_UNIT * 3, {}, {"loop": False}, id="cycle_longer_than_tail_third__noloop"),
    pytest.param(cot(5000) + "|" + block(683) * 3, {}, {"loop": True, "repeats": 3, "tail_coverage": 2049 / 4096},
                 id="three_copies_just_over_half_tail__loop_trunc"),
    pytest.param(cot(5000) + "|" + block(682) * 3, {}, {"loop": False}, id="three_copies_just_under_half_tail__noloop"),
    pytest.param(cot(5000) + "|" + block(1365) * 3, {}, {"loop": True, "repeats": 3},
                 id="longest_detectable_cycle_1365__loop_trunc"),
    pytest.param(cot(5000) + "|" + block(1366) * 3, {}, {"loop": False}, id="cycle_1366_exceeds_tail_third__noloop"),
    pytest.param(COUNTER, {}, {"loop": False, "truncated": False}, id="counter_digits_not_normalised__noloop"),
    pytest.param(COUNTER, {"n_tokens": LIMIT, "max_new_tokens": LIMIT, "answered": False},
                 {"loop": False, "truncated": True}, id="counter_at_limit__noloop_trunc"),
    # ---- truncation without a loop ----
    pytest.param(cot(40_000), {"n_tokens": LIMIT, "max_new_tokens": LIMIT, "answered": False},
                 {"loop": False, "truncated": True, "hit_token_limit": True}, id="long_cot_at_limit__noloop_trunc"),
    pytest.param(cot(40_000), {"n_tokens": LIMIT, "max_new_tokens": LIMIT},
                 {"loop": False, "truncated": True}, id="long_cot_at_limit_answered_unknown__noloop_trunc"),
    pytest.param(cot(40_000), {"n_tokens": LIMIT, "max_new_tokens": LIMIT, "answered": True},
                 {"loop": False, "truncated": False, "hit_token_limit": True}, id="long_cot_at_limit_answered__noloop"),
    pytest.param(cot(40_000), {"n_tokens": LIMIT - token_slack(LIMIT), "max_new_tokens": LIMIT},
                 {"truncated": True, "hit_token_limit": True}, id="long_cot_within_slack__noloop_trunc"),
    pytest.param(cot(40_000), {"n_tokens": LIMIT - token_slack(LIMIT) - 1, "max_new_tokens": LIMIT},
                 {"truncated": False, "hit_token_limit": False}, id="long_cot_outside_slack__noloop"),
    pytest.param(cot(40_000), {"n_tokens": LIMIT + 3, "max_new_tokens": LIMIT},
                 {"truncated": True}, id="tokens_over_limit__noloop_trunc"),
    pytest.param(cot(3000), {"n_tokens": 700, "max_new_tokens": LIMIT, "answered": False},
                 {"truncated": False, "hit_token_limit": False}, id="unanswered_below_limit__noloop"),
    pytest.param(cot(40_000), {"answered": False}, {"loop": False, "truncated": False, "hit_token_limit": None},
                 id="unanswered_no_tokens_no_loop__noloop"),
    pytest.param(cot(40_000), {"n_tokens": True, "max_new_tokens": True},
                 {"truncated": False, "hit_token_limit": None, "length_tokens": None},
                 id="bool_token_counts_are_unknown__noloop"),
    pytest.param(cot(40_000), {"n_tokens": -5, "max_new_tokens": LIMIT}, {"truncated": False, "length_tokens": None},
                 id="negative_token_count_is_unknown__noloop"),
    pytest.param(cot(40_000), {"n_tokens": 0, "max_new_tokens": 0}, {"truncated": False, "hit_token_limit": None},
                 id="zero_limit_is_unknown__noloop"),
]


@pytest.mark.parametrize(("text", "kwargs", "expected"), CASES)
def test_check_response(text: object, kwargs: dict[str, Any], expected: dict[str, object]) -> None:
    result = check_response(text, **kwargs)
    got = {key: getattr(result, key) for key in expected}
    assert got == expected
    if result.loop:
        assert result.cycle and result.repeats >= MIN_REPEATS and 0.0 < result.tail_coverage <= 1.0
    else:
        assert (result.cycle, result.repeats, result.tail_coverage, result.runs_to_end) == (None, 0, 0.0, False)


def test_case_table_is_large_and_ids_unique() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) >= 40 and len(set(ids)) == len(ids)


@pytest.mark.parametrize(("text", "kwargs", "expected"), CASES)
def test_case_id_states_the_verdict(text: object, kwargs: dict[str, Any], expected: object,
                                    request: pytest.FixtureRequest) -> None:
    result = check_response(text, **kwargs)
    verdict = ("loop" if result.loop else "noloop") + ("_trunc" if result.truncated else "")
    assert request.node.callspec.id.endswith("__" + verdict)


def test_generated_reasoning_is_varied() -> None:
    text = cot(40_000)
    assert len(text) == 40_000
    sentences = [s for s in text.replace("\n", " ").split(". ") if s]
    assert len(set(sentences)) > 0.9 * len(sentences)


def _reference_coverage(text: str) -> float:
    """Brute force: the coverage of the longest suffix with >= MIN_REPEATS copies of some period that passes the
    span and coverage thresholds (text already normalised, shorter than the tail, no escape cut points)."""
    size = len(text)
    shortest = max(loops.MIN_SPAN_CHARS, -(-size // 2))
    for span in range(size, shortest - 1, -1):
        tail = text[-span:]
        if any(tail[p:] == tail[:-p] for p in range(1, span // MIN_REPEATS + 1)):
            return span / size
    return 0.0


def _reference_inputs() -> list[str]:
    rng = random.Random(2024)
    texts = []
    for _ in range(60):
        unit = "".join(rng.choice("ab ") for _ in range(rng.randint(1, 120))).strip() or "a"
        body = (unit + " ") * rng.randint(1, 12)
        noise = "".join(rng.choice("ab ") for _ in range(rng.randint(0, 500)))
        text = " ".join((noise + " " + body[: rng.randint(1, len(body))]).split())
        texts.append(text[-TAIL_CHARS:])
    return texts


@pytest.mark.parametrize("index", range(60))
def test_matches_brute_force_reference(index: int) -> None:
    text = _reference_inputs()[index]
    assert check_response(text).tail_coverage == pytest.approx(_reference_coverage(text))


def test_length_fields() -> None:
    result = check_response("x" * 1234, n_tokens=300, max_new_tokens=LIMIT)
    assert (result.length_chars, result.length_tokens) == (1234, 300)


def test_cycle_is_shortened_for_logs() -> None:
    unit = " ".join(PARAGRAPHS[:2]) + " "
    result = check_response(repeat_to(unit, 4000))
    assert result.loop and result.cycle is not None
    assert len(result.cycle) == CYCLE_LOG_CHARS and result.cycle.endswith("…")
    assert result.cycle.startswith("the video shows a kitchen counter")


def test_as_dict_is_json_ready() -> None:
    result = check_response(PREAMBLE + repeat_to(PAPER + " ", 8000), n_tokens=LIMIT, max_new_tokens=LIMIT)
    row = result.as_dict()
    assert set(row) == {"loop", "truncated", "cycle", "repeats", "tail_coverage", "length_chars", "length_tokens",
                        "runs_to_end", "hit_token_limit"}
    assert json.loads(json.dumps(row)) == row
    assert row["loop"] is True and row["truncated"] is True and row["length_tokens"] == LIMIT


def test_check_is_frozen_and_deterministic() -> None:
    text = cot(3000) + repeat_to(THREE, 5000)
    first = check_response(text)
    assert first == check_response(text)
    with pytest.raises(FrozenInstanceError):
        field = "loop"
        setattr(first, field, False)


@pytest.mark.parametrize(("limit", "slack"), [(1, 1), (16, 1), (200, 1), (1024, 5), (4096, 20), (10_240, 51)],
                         ids=lambda v: str(v))
def test_token_slack(limit: int, slack: int) -> None:
    assert token_slack(limit) == slack


def test_aggregate() -> None:
    checks: list[LoopCheck | dict[str, object]] = [
        check_response(PREAMBLE + repeat_to(PAPER + " ", 8000)),                               # loop + truncated
        check_response(cot(5000), n_tokens=LIMIT, max_new_tokens=LIMIT),                       # truncated only
        check_response("A", answered=True).as_dict(),                                          # neither
        check_response(FAILED).as_dict(),                                                      # neither (counted)
    ]
    assert aggregate(checks) == {"n": 4, "loop_rate": 0.25, "truncation_rate": 0.5}
    assert aggregate([]) == {"n": 0, "loop_rate": 0.0, "truncation_rate": 0.0}
    assert aggregate([{}]) == {"n": 1, "loop_rate": 0.0, "truncation_rate": 0.0}


# --- cost: bounded work whatever the length (generous bound; real figures are ~1-10 ms) -------------------------

MB = 1_000_000


def _giant_word() -> str:
    return random.Random(7).randbytes(MB // 2).hex()  # one 1 MB "word" of deterministic hex digits


SHAPES: dict[str, tuple[Callable[[], str], bool]] = {  # builder, expected loop
    "A_A_A": (lambda: "A " * (MB // 2), True),
    "star_run": (lambda: "*" * MB, True),
    "brace_run_100k": (lambda: "{" * 100_000, True),
    "giant_word": (_giant_word, False),
    "short_lines_same": (lambda: "a\n" * (MB // 2), True),
    "short_lines_distinct": (lambda: "".join(f"line {i}\n" for i in range(MB // 10))[:MB], False),
    "many_sentences": (lambda: "".join(f"w{i}. " for i in range(MB // 6))[:MB], False),  # 8 escape cuts tried
    "long_cot": (lambda: cot(MB), False),
    "paper_loop": (lambda: repeat_to(PAPER + " ", MB), True),
    "cjk_loop": (lambda: repeat_to("机器人把三角形放在圆的旁边。", MB), True),
    "cjk_distinct": (lambda: "".join(map(chr, range(0x4E00, 0x4E00 + 20_000))) * (MB // 20_000), False),
    "whitespace": (lambda: " \n\t" * (MB // 3), False),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_one_megabyte_is_fast(shape: str) -> None:
    build, expected_loop = SHAPES[shape]
    text = build()
    assert len(text) >= 100_000
    start = time.perf_counter()
    result = check_response(text, n_tokens=LIMIT, max_new_tokens=LIMIT, answered=False)
    assert time.perf_counter() - start < 10  # a hang guard with a wide margin; speed is in `make bench`
    assert (result.loop, result.truncated) == (expected_loop, shape != "whitespace")  # blank text: never truncated
