"""Table-driven tests for lmms_agentic.tasks.agentx.core.trace and core.trace_search.

Every case pins the parse path and the failure class plus the fields that matter for it; every case also checks
that the result is JSON-able.  Case ids read "<what>__<expected>".
"""

from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters.core.text import brace_spans
from lmms_agentic.tasks.agentx.core.release_data import LEGACY_ALIASES, TOOL_NAMES
from lmms_agentic.tasks.agentx.core.trace import (
    FAILURES,
    ParsedTrace,
    TraceStep,
    canonical_tool,
    parse_trace,
    toolset_scores,
)
from lmms_agentic.tasks.agentx.core.trace_search import MAX_BALANCED_ATTEMPTS, MAX_DEPTH, TRACE_KEYS, _key_spans


def parse(text: object) -> ParsedTrace:
    return parse_trace(text, TOOL_NAMES, LEGACY_ALIASES)


def step(n: int, tool: object = "OCR", key: str = "tool_used", **extra: object) -> dict[str, Any]:
    return {"step": n, "task": f"task {n}", key: tool, "tool_output": f"output {n}", "thought": f"thought {n}",
            **extra}


ANSWER = {"value": "Red, about 40", "justification": "OCR reads the axis; red rises first."}
GOOD: dict[str, Any] = {"query": "Which line grows fastest?",
                        "reasoning_steps": [step(1, "OCR"), step(2, "Calculator")], "final_answer": ANSWER}
GOOD_JSON = json.dumps(GOOD)
DRAFT = {"reasoning_steps": [step(1, "SceneDescriber")], "final_answer": {"value": "draft", "justification": "d"}}


def with_(**changes: Any) -> str:
    return json.dumps({**GOOD, **changes})


# (id, model output, expected attributes; "tools" = ParsedTrace.tools(), "n_steps" = len(steps))
CASES: list[tuple[str, object, dict[str, Any]]] = [
    ("clean_json__ok", GOOD_JSON,
     {"parse_path": "json", "failure": None, "issues": (), "final_answer": "Red, about 40", "format_ok": True,
      "tools": ("OCR", "Calculator"), "n_steps": 2}),
    ("fenced_json_trailing_prose__json", f"```json\n{GOOD_JSON}\n```\nLet me know if you need anything else!",
     {"parse_path": "json", "failure": None, "final_answer": "Red, about 40", "tools": ("OCR", "Calculator")}),
    ("fenced_untagged__json", f"```\n{json.dumps(GOOD, indent=2)}\n```",
     {"parse_path": "json", "failure": None, "n_steps": 2}),
    ("fence_mid_text__json", f"Sure! Here is the trace:\n```json\n{GOOD_JSON}\n```\nDone.",
     {"parse_path": "json", "failure": None, "final_answer": "Red, about 40"}),
    ("leading_prose_no_fence__balanced", f"Here's my reasoning as requested: {GOOD_JSON} Hope it's useful.",
     {"parse_path": "balanced_json", "failure": None, "final_answer": "Red, about 40"}),
    ("single_quoted_dict__literal", repr(GOOD),
     {"parse_path": "literal", "failure": None, "final_answer": "Red, about 40", "tools": ("OCR", "Calculator")}),
    ("python_true_none__literal",
     "{'reasoning_steps': [{'step': 1, 'task': 'Check', 'tool_used': 'OCR', 'tool_output': None, 'thought': 'ok',"
     " 'verified': True}], 'final_answer': {'value': \"the man's guitar\", 'justification': None}}",
     {"parse_path": "literal", "failure": None, "final_answer": "the man's guitar", "justification": ""}),
    ("truncated_json__invalid", GOOD_JSON[:-40],
     {"parse_path": "none", "failure": "invalid_json", "issues": ("invalid_json",), "n_steps": 0, "format_ok": False}),
    ("two_json_objects__last_wins", f"{json.dumps(DRAFT)}\n\nCorrected answer:\n{GOOD_JSON}",
     {"parse_path": "balanced_json", "failure": None, "final_answer": "Red, about 40"}),
    ("complete_then_truncated__complete_wins", f"{GOOD_JSON}\n{json.dumps(DRAFT)[:-30]}",
     {"parse_path": "balanced_json", "failure": None, "final_answer": "Red, about 40"}),
    ("two_fenced_blocks__last_block", f"```json\n{json.dumps(DRAFT)}\n```\nBetter:\n```json\n{GOOD_JSON}\n```",
     {"parse_path": "json", "failure": None, "final_answer": "Red, about 40"}),
    ("prose_only__invalid", "The red line grows fastest; its average height is about 40.",
     {"parse_path": "none", "failure": "invalid_json", "final_answer": ""}),
    ("empty__no_output", "", {"parse_path": "none", "failure": "no_output", "issues": ("no_output",)}),
    ("whitespace__no_output", " \n\t ", {"parse_path": "none", "failure": "no_output"}),
    ("none__no_output", None, {"parse_path": "none", "failure": "no_output"}),
    ("not_a_string__no_output", ["{}"], {"parse_path": "none", "failure": "no_output"}),
    ("request_failed__no_output", "[LMMS_EVAL_REQUEST_FAILED] Error code: 500", {"failure": "no_output"}),
    ("tool_and_tool_used_differ__tool_used_wins",
     with_(reasoning_steps=[{**step(1, "Calculator"), "tool": "OCR"}]),
     {"parse_path": "json", "failure": None, "tools": ("Calculator",)}),
    ("tool_key_only__tool", with_(reasoning_steps=[step(1, "OCR", key="tool"), step(2, "MathOCR", key="tool")]),
     {"failure": None, "tools": ("OCR", "MathOCR"), "format_ok": False}),
    ("tool_used_null_tool_set__tool", with_(reasoning_steps=[{**step(1, None), "tool": "Solver"}]),
     {"failure": None, "tools": ("Solver",)}),
    ("several_tools_comma__multiple", with_(reasoning_steps=[step(1, "OCR, Calculator")]),
     {"failure": "multiple_tools_in_step", "issues": ("multiple_tools_in_step",), "tools": ("OCR", "Calculator")}),
    ("several_tools_and_then__multiple", with_(reasoning_steps=[step(1, "ObjectCounter and then OverlayText")]),
     {"failure": "multiple_tools_in_step", "tools": ("ObjectCounter", "OverlayText")}),
    ("tool_list__multiple", with_(reasoning_steps=[step(1, ["LocateObjectByText", "DrawBoundingBox"])]),
     {"failure": "multiple_tools_in_step", "tools": ("LocateObjectByText", "DrawBoundingBox")}),
    ("same_tool_twice_in_step__single", with_(reasoning_steps=[step(1, "OCR, OCR")]),
     {"failure": None, "tools": ("OCR",)}),
    ("unknown_tool_from_prompt_example__unknown",
     with_(reasoning_steps=[step(1, "Scene Segmentation Tool"), step(2, "OCR")]),
     {"failure": "unknown_tool", "issues": ("unknown_tool",), "tools": ("OCR",)}),
    ("legacy_aliases__canonical", with_(reasoning_steps=[step(1, "ImageDescription"), step(2, "TextToBbox")]),
     {"failure": None, "tools": ("SceneDescriber", "LocateObjectByText")}),
    ("justified_and_spaced_names__canonical",
     with_(reasoning_steps=[step(1, "SceneDescriber – to confirm the objects"), step(2, "Image Generator")]),
     {"failure": None, "tools": ("SceneDescriber", "ImageGenerator")}),
    ("tool_none_string__no_tool", with_(reasoning_steps=[step(1, "None"), step(2, "N/A"), step(3, "")]),
     {"failure": None, "tools": (), "n_steps": 3}),
    ("bare_string_final_answer__value",
     json.dumps({"reasoning_steps": [step(1)], "final_answer": "Red", "justification": "It rises first."}),
     {"failure": None, "final_answer": "Red", "justification": "It rises first.", "format_ok": False}),
    ("final_output_section__value",
     json.dumps({"reasoning_steps": [step(1)], "final_output": {"final_answer": "Red", "justification": "j"}}),
     {"failure": None, "final_answer": "Red", "justification": "j"}),
    ("missing_final_answer__missing", json.dumps({"reasoning_steps": [step(1)]}),
     {"parse_path": "json", "failure": "missing_final_answer", "final_answer": ""}),
    ("empty_value_generative__missing", with_(final_answer={"value": "", "justification": "image generated"}),
     {"failure": "missing_final_answer", "justification": "image generated"}),
    ("several_issues__priority", json.dumps({"reasoning_steps": [step(1, "Foo"), step(2, "OCR + Solver")]}),
     {"failure": "multiple_tools_in_step",
      "issues": ("multiple_tools_in_step", "unknown_tool", "missing_final_answer")}),
    ("wrapped_steps__unwrapped", with_(reasoning_steps=[[step(1, "OCR"), step(2, "Calculator")]]),
     {"failure": None, "n_steps": 2, "tools": ("OCR", "Calculator"), "format_ok": False}),
    ("single_step_dict__one_step", with_(reasoning_steps=step(1, "WebSearch")),
     {"failure": None, "n_steps": 1, "tools": ("WebSearch",)}),
    ("string_steps__task_text", with_(reasoning_steps=["Read the axis with OCR.", "Compare the lines."]),
     {"failure": None, "n_steps": 2, "tools": ()}),
    ("steps_empty_string__no_steps", with_(reasoning_steps=""), {"failure": None, "n_steps": 0}),
    ("think_prefix__json", f"<think>I could use OCR {{not json}} here.</think>\n{GOOD_JSON}",
     {"parse_path": "json", "failure": None, "final_answer": "Red, about 40"}),
    ("think_unclosed__balanced", f"<think>\nLet me plan: OCR first.\n{GOOD_JSON}",
     {"parse_path": "balanced_json", "failure": None}),
    ("answer_only_inside_think__json", f"<think>{GOOD_JSON}</think>", {"parse_path": "json", "failure": None}),
    ("nested_braces_in_strings__balanced",
     "Result {draft}: " + with_(final_answer={"value": "f(x) = {x}} }{", "justification": "set {1, 2}"}),
     {"parse_path": "balanced_json", "failure": None, "final_answer": "f(x) = {x}} }{"}),
    ("fenced_code_inside_output__json",
     "```json\n" + with_(reasoning_steps=[{**step(1, "CodePlotter"),
                                           "tool_output": "```python\nplt.plot(x)\n```"}]) + "\n```",
     {"parse_path": "json", "failure": None, "tools": ("CodePlotter",)}),
    ("output_as_dict__json_text", with_(reasoning_steps=[{**step(1, "ObjectCounter"), "tool_output": {"count": 3}}]),
     {"failure": None, "step_output": '{"count": 3}'}),
    ("nan_in_json__parsed", '{"reasoning_steps": [], "final_answer": {"value": NaN, "justification": "x"}}',
     {"parse_path": "json", "failure": None, "final_answer": "nan"}),
    ("fenced_non_trace_dict_last__trace_block_wins",
     f"```json\n{GOOD_JSON}\n```\nThe bbox was:\n```json\n{{\"bbox\": [1, 2, 3, 4]}}\n```",
     {"parse_path": "json", "failure": None, "final_answer": "Red, about 40"}),
    ("whole_response_non_trace_dict__missing", '```json\n{"answer": "Red"}\n```',
     {"parse_path": "json", "failure": "missing_final_answer", "n_steps": 0}),
    ("prose_then_non_trace_dict__invalid", 'My answer: {"answer": "Red"}', {"failure": "invalid_json"}),
    ("trailing_comma__literal", '{"reasoning_steps": [], "final_answer": {"value": "Red", "justification": "j",},}',
     {"parse_path": "literal", "failure": None, "final_answer": "Red"}),
    ("json_comments__invalid", '{\n  // steps\n  "reasoning_steps": [],\n  "final_answer": "Red"\n}',
     {"failure": "invalid_json"}),
    ("python_quotes_json_literals__invalid", "{'reasoning_steps': [], 'final_answer': {'value': null, 'ok': true}}",
     {"failure": "invalid_json"}),
    ("markdown_answer__invalid", "**Final answer:** Red\n**Justification:** it rises first.",
     {"failure": "invalid_json"}),
    ("empty_object__missing", "{}", {"parse_path": "json", "failure": "missing_final_answer"}),
    ("top_level_list__invalid", json.dumps(GOOD["reasoning_steps"]), {"failure": "invalid_json"}),
    ("code_execution_bare__invalid", "__import__('os').system('echo pwned')", {"failure": "invalid_json"}),
    ("code_execution_in_dict__invalid",
     "{'reasoning_steps': [], 'final_answer': {'value': __import__('os').system('echo pwned'), 'justification': ''}}",
     {"failure": "invalid_json"}),
    ("lambda_in_dict__invalid", "{'final_answer': (lambda: open('/etc/passwd').read())()}",
     {"failure": "invalid_json"}),
    ("deep_brackets__invalid", "[" * 100_000, {"failure": "invalid_json"}),
    ("deep_braces__invalid", '{"final_answer": ' * 5_000 + '"x"' + "}" * 5_000, {"failure": "invalid_json"}),
    ("too_deep_value__invalid",
     '{"final_answer": {"value": "x", "justification": ' + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "}}",
     {"failure": "invalid_json"}),
    ("trace_then_latex_braces__balanced", f"{GOOD_JSON}\nIn LaTeX: " + r"$\frac{a}{b}$ " * 2_000,
     {"parse_path": "balanced_json", "failure": None, "final_answer": "Red, about 40"}),
    ("many_trace_key_spans__bounded", '{"final_answer": {"a": 1' * 3_000, {"failure": "invalid_json"}),
    ("huge_prose_then_trace__balanced", "lorem {ipsum} " * 20_000 + GOOD_JSON,
     {"parse_path": "balanced_json", "failure": None}),
]


@pytest.mark.parametrize(("text", "expected"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_parse_table(text: object, expected: dict[str, Any]) -> None:
    started = time.monotonic()
    trace = parse(text)
    assert time.monotonic() - started < 120  # (a hang guard with a wide margin; speed is in `make bench`)
    got = {"tools": trace.tools(), "n_steps": len(trace.steps),
           "step_output": trace.steps[0].output if trace.steps else None}
    for key, value in expected.items():
        actual = got[key] if key in got else getattr(trace, key)
        assert actual == value, key
    assert trace.failure == (trace.issues[0] if trace.issues else None)
    assert set(trace.issues) <= set(FAILURES)
    assert trace.parse_path in ("json", "literal", "balanced_json", "balanced_literal", "none")
    json.dumps(trace.as_dict(), allow_nan=False)
    json.dumps(trace.prediction_record(), allow_nan=False)
    json.dumps(trace.notebook_record("q", "f.jpg"), allow_nan=False)


def test_table_has_enough_bad_outputs() -> None:
    bad = [case for case in CASES if case[0] != "clean_json__ok"]
    assert len(bad) >= 25
    assert sum(1 for _, _, expected in bad if expected.get("failure") is not None) >= 25


def test_code_is_never_executed(tmp_path: Path) -> None:
    sentinel = tmp_path / "pwned"
    payload = f"__import__('pathlib').Path({str(sentinel)!r}).touch()"
    for text in (payload, f"{{'final_answer': {payload}}}", f"```python\n{payload}\n```",
                 f'{{"reasoning_steps": [], "final_answer": {{"value": {payload}}}}}'):
        assert parse(text).failure == "invalid_json"
    assert not sentinel.exists()


def test_every_truncation_of_a_good_trace_is_handled() -> None:
    for cut in range(len(GOOD_JSON)):
        trace = parse(GOOD_JSON[:cut])
        assert trace.failure in ("no_output", "invalid_json"), cut


def test_good_trace_fields_and_records() -> None:
    trace = parse(f"```json\n{GOOD_JSON}\n```")
    assert trace.steps[0] == TraceStep(1, "task 1", "OCR", "OCR", "output 1", "thought 1", "tool_used", ("OCR",))
    assert trace.justification == ANSWER["justification"]
    assert trace.prediction_record() == {"reasoning_steps": GOOD["reasoning_steps"], "final_answer": ANSWER}
    assert trace.notebook_record("q", "a.jpg") == {"query": GOOD["query"], "filename": "a.jpg", **GOOD}
    assert trace.format_ok
    assert trace.as_dict()["steps"][1]["tool_canonical"] == "Calculator"


def test_prediction_record_canonicalises_keys_in_place() -> None:
    raw = {"step": 1, "task": "t", "tool": "OCR", "output": "o", "thought": "th", "input": "<image>"}
    trace = parse(json.dumps({"reasoning_steps": [[raw, "free text step"]], "final_answer": "Red"}))
    assert trace.prediction_record() == {
        "reasoning_steps": [{"step": 1, "task": "t", "tool_used": "OCR", "tool_output": "o", "thought": "th",
                             "input": "<image>"}, "free text step"],
        "final_answer": {"value": "Red", "justification": ""}}
    assert not trace.format_ok


def test_format_ok_tracks_the_notebook_check() -> None:
    assert parse(json.dumps({"reasoning_steps": [step(1)], "final_answer": ANSWER})).format_ok
    assert not parse(json.dumps({"reasoning_steps": [step(1)], "final_answer": {"value": "x"}})).format_ok
    assert not parse(json.dumps({"reasoning_steps": [step(1, key="tool")], "final_answer": ANSWER})).format_ok
    assert not parse(json.dumps({"final_answer": ANSWER})).format_ok  # reasoning_steps missing
    assert not parse("nothing here").format_ok


def test_failed_parse_gives_the_original_empty_record() -> None:
    for text in (None, "", "no json at all", GOOD_JSON[:50]):
        trace = parse(text)
        assert trace.prediction_record() == {"reasoning_steps": "", "final_answer": {"value": "", "justification": ""}}
        assert trace.notebook_record("q", "f.jpg")["reasoning_steps"] == ""
        assert trace.data is None and trace.steps == ()


def test_literal_values_become_json_able() -> None:
    trace = parse("{'reasoning_steps': [], 'final_answer': {'value': (1, 2), 'justification': {3}}, 'x': b'hi',"
                  " 7: 1j}")
    assert trace.final_answer == "[1, 2]" and trace.justification == "[3]"
    assert trace.data is not None and trace.data["x"] == "hi" and trace.data["7"] == "1j"


def test_custom_tool_names_are_respected() -> None:
    trace = parse_trace(json.dumps({"reasoning_steps": [step(1, "grep"), step(2, "OCR")], "final_answer": "x"}),
                        ["Grep"], {"Find": "Grep"})
    assert trace.tools() == ("Grep",) and trace.failure == "unknown_tool"


@pytest.mark.parametrize(("name", "expected"), [
    ("OCR", "OCR"), ("ocr", "OCR"), ("  ocr  ", "OCR"), ("OCR tool", "OCR"), ("MathOCR", "MathOCR"),
    ("math ocr", "MathOCR"), (" Object Counter ", "ObjectCounter"), ("SceneDescriber – to confirm…", "SceneDescriber"),
    ("Image Generator", "ImageGenerator"), ("image_stylization", "ImageStylization"), ("`Calculator`", "Calculator"),
    ("**Solver**", "Solver"), ("draw_bounding_box", "DrawBoundingBox"), ("LocateObjectByText(top1=True)",
                                                                       "LocateObjectByText"),
    ("ImageDescription", "SceneDescriber"), ("CountGivenObject", "ObjectCounter"), ("DrawBox", "DrawBoundingBox"),
    ("DetectGivenObject", "LocateObjectByText"), ("TextToBbox", "LocateObjectByText"),
    ("RegionAttributeDescription", "RegionDescriber"), ("Plot", "CodePlotter"), ("GoogleSearch", "WebSearch"),
    ("TextToImage", "ImageGenerator"), ("AddText", "OverlayText"), ("Web Search", "WebSearch"),
    ("Scene Segmentation Tool", None), ("Action Recognition Model", None), ("", None), ("   ", None),
    ("None", None), ("Tool: OCR", None), ("imagegen", None), ("1. OCR", None),
])
def test_canonical_tool(name: str, expected: str | None) -> None:
    assert canonical_tool(name, TOOL_NAMES, LEGACY_ALIASES) == expected


def test_canonical_tool_ignores_aliases_to_unknown_targets() -> None:
    assert canonical_tool("Foo", ["OCR"], {"Foo": "Bar"}) is None
    assert canonical_tool("Foo", ["OCR"], {"Foo": "OCR"}) == "OCR"


@pytest.mark.parametrize(("predicted", "gold", "expected"), [
    ([], [], (1.0, 1.0, 1.0)),
    (["OCR"], [], (0.0, 0.0, 0.0)),
    ([], ["OCR"], (0.0, 0.0, 0.0)),
    (["OCR", "Calculator"], ["Calculator", "OCR"], (1.0, 1.0, 1.0)),
    (["OCR", "OCR", "Calculator"], ["OCR"], (0.5, 1.0, 2 / 3)),
    (["OCR"], ["OCR", "Calculator", "Solver", "MathOCR"], (1.0, 0.25, 0.4)),
    (["WebSearch"], ["OCR"], (0.0, 0.0, 0.0)),
])
def test_toolset_scores(predicted: list[str], gold: list[str], expected: tuple[float, float, float]) -> None:
    scores = toolset_scores(predicted, gold)
    assert scores == pytest.approx(dict(zip(("precision", "recall", "f1"), expected, strict=True)))


def test_toolset_scores_from_a_parsed_trace() -> None:
    trace = parse(with_(reasoning_steps=[step(1, "TextToBbox"), step(2, "DrawBox – mark it")]))
    assert toolset_scores(trace.tools(), ["LocateObjectByText", "DrawBoundingBox"])["f1"] == 1.0


# ---------------------------------------------------------------- cost: linear, bounded, whatever the reply
MB = 1_000_000
PROSE = "The quick brown fox's tool isn't here; it says {maybe} \"quoted\" text.\n"


def trace_with(tool: object = "OCR", **fields: object) -> str:
    return json.dumps({"reasoning_steps": [{**step(1, tool), **fields}],
                       "final_answer": {"value": "v", "justification": "j"}})


# (id, reply of about 1 MB, expected attributes): each must parse well within the bound below.
ADVERSARIAL: list[tuple[str, str, dict[str, Any]]] = [
    ("whitespace_40k_in_tool__was_107s", trace_with("OCR" + " " * 40_000 + "x"), {"tools": ("OCR",)}),
    ("whitespace_run_in_tool", trace_with("OCR" + " " * MB + "and Calculator"), {"tools": ("OCR",)}),
    ("whitespace_runs_in_every_field",
     json.dumps({"reasoning_steps": [{"task": " " * 200_000, "tool_used": " \t" * 100_000 + "OCR",
                                      "tool_output": " " * 200_000, "thought": " \n" * 100_000}],
                 "final_answer": {"value": " " * 100_000 + "v", "justification": "j"}}),
     {"parse_path": "json", "tools": ("OCR",), "final_answer": "v"}),
    ("whitespace_before_closing_fence", "```json\n" + trace_with() + " " * MB + "\n```",
     {"parse_path": "json", "tools": ("OCR",)}),
    ("whitespace_after_opening_fence", "```json" + " \n" * (MB // 2) + trace_with() + "\n```",
     {"parse_path": "json", "tools": ("OCR",)}),
    ("open_braces_100k", "{" * 100_000, {"failure": "invalid_json"}),
    ("open_braces_1mb_then_key", "{" * MB + '"reasoning_steps"', {"failure": "invalid_json"}),
    ("deep_object_nesting", '{"reasoning_steps": ' * (MB // 20) + "1" + "}" * (MB // 20),
     {"failure": "invalid_json"}),
    ("deep_list_nesting", '{"reasoning_steps": ' + "[" * (MB // 2) + "]" * (MB // 2) + "}",
     {"failure": "invalid_json"}),
    ("deep_python_literal", "{'final_answer': " + "(" * (MB // 2), {"failure": "invalid_json"}),
    ("prose_1mb", PROSE * (MB // len(PROSE)), {"failure": "invalid_json"}),
    ("prose_1mb_with_trace_keys", (PROSE + "final_answer reasoning_steps\n") * (MB // 100),
     {"failure": "invalid_json"}),
    ("prose_1mb_then_trace", PROSE * (MB // len(PROSE)) + trace_with(),
     {"parse_path": "balanced_json", "tools": ("OCR",)}),
    ("flat_braces_1mb_then_trace", "lorem {ipsum} " * (MB // 14) + trace_with(),
     {"parse_path": "balanced_json", "tools": ("OCR",)}),
    ("separators_1mb_in_tool", trace_with("," * MB), {"tools": (), "failure": None}),  # no name: "no tool"
    ("thousand_names_in_tool", trace_with(", ".join(["OCR", "Calculator"] * 50_000)),
     {"tools": ("OCR", "Calculator"), "failure": "multiple_tools_in_step"}),
    ("many_fenced_blocks", "".join(f'```\n{{"a": {i}}}\n```\n' for i in range(50_000)), {"failure": "invalid_json"}),
    ("unclosed_quote_in_braces", '{"reasoning_steps": "' + "x" * MB, {"failure": "invalid_json"}),
    ("escapes_in_braces", '{"final_answer": "' + "\\\\" * (MB // 2), {"failure": "invalid_json"}),
]


@pytest.mark.parametrize(("text", "expected"), [(c[1], c[2]) for c in ADVERSARIAL], ids=[c[0] for c in ADVERSARIAL])
def test_adversarial_replies_parse_in_bounded_time(text: str, expected: dict[str, Any]) -> None:
    """Well under 50 ms per call on a normal machine (README: measured figures; `make bench`); 10 s here is a hang
    guard with a wide margin for a loaded machine.  Before 1.1, 40,000 spaces in a tool field took 107 s."""
    parse(text)  # warm caches (tool index, compiled patterns)
    started = time.perf_counter()
    trace = parse(text)
    elapsed = time.perf_counter() - started
    assert elapsed < 10, f"{elapsed:.3f} s"
    got = {"tools": trace.tools()}
    for key, value in expected.items():
        assert (got[key] if key in got else getattr(trace, key)) == value, key


def test_parse_time_grows_linearly() -> None:
    """Doubling a whitespace run inside a field (the input that was quadratic) at most about doubles the time."""
    def text(n: int) -> str:
        return "```json\n" + trace_with("OCR" + " " * n + "x", thought=" " * n) + " " * n + "\n```"

    def once(value: str) -> float:
        started = time.perf_counter()
        parse(value)
        return time.perf_counter() - started

    small_text, large_text = text(200_000), text(800_000)
    small = large = math.inf
    for _ in range(7):  # interleaved, best of 7: both sizes see the same load on a busy machine
        small, large = min(small, once(small_text)), min(large, once(large_text))
    assert large < 8 * small + 0.02  # 4x the input: linear is about 4x, quadratic would be 16x


def _spans_with_keys(text: str) -> list[tuple[int, int]]:
    """The reference: every `brace_spans` span holding a trace key, the last-closing first (at most the bound)."""
    keys = [i for key in TRACE_KEYS for i in range(len(text)) if text.startswith(key, i)]
    spans = [(a, b) for a, b in brace_spans(text) if any(a <= k < b for k in keys)]
    return list(reversed(spans))[:MAX_BALANCED_ATTEMPTS]


def test_the_bounded_brace_scan_finds_the_spans_of_brace_spans() -> None:
    rng = random.Random(20240611)
    alphabet = ['{', '}', '"', "'", "\\", "\n", " ", "x", "final_answer", "reasoning_steps", "{}", "{final_output}"]
    for _ in range(3_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        keys = sorted(i for key in TRACE_KEYS for i in range(len(text)) if text.startswith(key, i))
        assert _key_spans(text, keys) == _spans_with_keys(text), text
