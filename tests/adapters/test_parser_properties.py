"""Property-based tests (hypothesis) of the strict extractor and the judge reply parsers.

Over random text, adversarial text built from the fragments the rules look for (keywords, letters, emphasis, quotes,
brackets, braces, fences, think tags), 1 MB outputs, deep nesting and lmms-eval's failed-request markers: a parser
never raises, never returns a letter outside the question's options, and stays linear (a 1 MB input: under
``SECONDS_PER_MB``, a bound far above the measured figures -- tens of ms, see perf/parsers.py -- so that a
busy 2-core CI machine cannot make it flaky; a quadratic parser takes minutes there).  Hypothesis settings keep the
file fast: few examples, no deadline, no example database.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from lmms_agentic.adapters.core.extract import (  # noqa: E402
    REQUEST_FAILED_PREFIX,
    STRICT_RULES,
    Extraction,
    extract_choice,
    option_letters,
    split_confidence,
)
from lmms_agentic.judges import (  # noqa: E402
    AnyOf,
    ChoiceParser,
    JsonObjectParser,
    Number,
    Parsed,
    ScoreParser,
    Text,
    YesNoParser,
    looks_like_refusal,
)
from lmms_agentic.judges.parsers import clean_reply  # noqa: E402

SECONDS_PER_MB = 10.0  # a hang guard with a wide margin (typical: tens of ms; speed is in `make bench`)
MB = 1_000_000
FAST = settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
LARGE = settings(max_examples=6, deadline=None, database=None, suppress_health_check=list(HealthCheck))

FRAGMENTS = (
    "answer", "Answer:", "ANSWER IS", "final answer", "the correct option is", "my choice:", "I choose", "I'd pick",
    "I would go with", "is the correct answer", "is the best option", "not", "not option", "option", "letter",
    "A", "B", "C", "D", "E", "J", "K", "a", "i", "I", "ı", "İ", "ſ", "K", "e.g.", "i.e.", "A.I.", "or", "and", "/",
    ",", ".", ":", ";", "!", "?", "=", "(", ")", "[", "]", "{", "}", "*", "**", "_", "__", "`", '"', "'", "’", "“", "”",
    " ", "  ", "\n", "\t", "\u2028", "\x85", "\xa0", "<think>", "</think>", "</THINK >", "Confidence: 85%",
    "confidence level = 0.5", "Score:", "score = 4/5", "Score: 3-4", "yes", "No.", "Verdict: yes", "NONE",
    '{"Score": 0.5, "Justification": "ok"}', "{'Score': '1', 'Justification': 'x'}", "```json\n", "```",
    "<<<DATA response 0123456789abcdef BEGIN>>>", "<<<DATA response 0123456789abcdef END>>>",
    REQUEST_FAILED_PREFIX + " after 3 retries] ", "I'm sorry, but I can't help", "As an AI",
    "move left", "move left slowly", "lift the cup", "机器人", "，", "。", "0.75", "99", "-", "x",
)
OPTIONS: list[Any] = [2, 4, 5, 10, ["move left", "move left slowly", "lift the cup", "stop"],
                      ["Stop", "stop", None, "", "go"], ["a", "b", "c"], [f"option {i}" for i in range(10)]]

adversarial = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)
texts = st.one_of(st.text(max_size=300), adversarial)
options = st.sampled_from(OPTIONS)


def _letters(opts: Any) -> str:
    return str(option_letters(opts if isinstance(opts, int) else len(opts)))


def _check(extraction: Extraction, opts: Any) -> None:
    assert isinstance(extraction, Extraction)
    if extraction.letter is None:
        assert extraction.rule == "none"
        assert extraction.reason in ("empty", "request_failed", "ambiguous", "no_match")
    else:
        assert extraction.letter in _letters(opts)
        assert extraction.rule in STRICT_RULES and extraction.reason is None


def _timed(function: Callable[[str], Any], text: str) -> tuple[Any, float]:
    started = time.process_time()
    result = function(text)
    return result, time.process_time() - started


# ---------------------------------------------------------------- the strict extractor
@FAST
@given(texts, options)
def test_extract_never_raises_and_stays_in_range(text: str, opts: Any) -> None:
    _check(extract_choice(text, opts), opts)


@FAST
@given(texts)
def test_split_confidence_never_raises(text: str) -> None:
    rest, value = split_confidence(text)
    assert isinstance(rest, str) and len(rest) <= len(text)
    assert value is None or 0.0 <= value <= 1.0


@FAST
@given(texts, options)
def test_failed_request_marker_is_never_an_answer(text: str, opts: Any) -> None:
    failed = f"{REQUEST_FAILED_PREFIX} after 3 retries] {text}"
    assert extract_choice(failed, opts) == Extraction(None, "none", "request_failed")
    assert extract_choice("  \n" + failed, opts).reason == "request_failed"


@FAST
@given(st.sampled_from("ABCDE"), texts)
def test_a_final_declaration_wins_over_any_prefix(letter: str, prefix: str) -> None:
    """Whatever came before, a closing plain declaration decides (unless the prefix leaves a <think> or a
    confidence clause that swallows it, or the prefix itself is a failed request)."""
    text = f"{prefix}\n\nThe answer is {letter}."
    got = extract_choice(text, 5)
    if "<think" in prefix.lower() or "think" in prefix.lower() or REQUEST_FAILED_PREFIX in prefix[:60]:
        return
    if re.search(r"confidence", prefix, re.IGNORECASE):
        return
    assert got == Extraction(letter, "declaration")


def _building_blocks() -> st.SearchStrategy[str]:
    """A unit repeated to 1 MB: a run, a nest, a loop of declarations, articles or negations, or random fragments."""
    units = st.one_of(st.sampled_from(FRAGMENTS), adversarial.filter(bool), st.text(min_size=1, max_size=20))
    return units


@LARGE
@given(_building_blocks(), options)
def test_extract_is_linear_on_1mb(unit: str, opts: Any) -> None:
    text = unit * (MB // len(unit) + 1)
    extraction, seconds = _timed(lambda t: extract_choice(t, opts), text)
    _check(extraction, opts)
    assert seconds < SECONDS_PER_MB, f"{seconds:.2f} s on 1 MB of {unit[:40]!r}"
    _, seconds = _timed(split_confidence, text)
    assert seconds < SECONDS_PER_MB


@pytest.mark.parametrize("text", [
    "*" * MB + "1", "A " * (MB // 2) + "word", "{" * MB, "{" * (MB // 2) + "}" * (MB // 2), " " * MB, "\n" * MB,
    "Answer: a cup. " * (MB // 15), "not A " * (MB // 6), "A cup. " * (MB // 7), "I choose I " * (MB // 11),
    "B is the correct answer. " * (MB // 25), "_" * MB + "C", "(" * MB + "C", '" ' * (MB // 2), "*" * MB + "confidence",
    "Confidence: 5% " * (MB // 15), "机器人应该向左移动。" * (MB // 10), "<think>" + "x" * MB,
], ids=["stars", "AAA", "open-braces", "nested-braces", "spaces", "newlines", "article-declarations", "not-A",
        "articles", "I-choose-I", "is-correct", "underscores", "parens", "quote-spaces", "stars-confidence",
        "confidence-loop", "cjk", "unclosed-think"])
def test_extract_pathological_inputs_are_fast(text: str) -> None:
    for opts in (4, ["move left", "move left slowly", "lift the cup", "stop"]):
        extraction, seconds = _timed(lambda t, o=opts: extract_choice(t, o), text)  # type: ignore[misc]
        _check(extraction, opts)
        assert seconds < SECONDS_PER_MB, f"{seconds:.2f} s"


# ---------------------------------------------------------------- the judge reply parsers
RUBRIC = JsonObjectParser({"Score": Number(0, 1), "Justification": Text()}, score="Score", numeric_strings=True,
                          python_literals=True)
PARSERS: dict[str, Callable[[str], Any]] = {
    "score": ScoreParser(1, 5), "score01": ScoreParser(0, 1, integer=False), "yesno": YesNoParser(),
    "choice": ChoiceParser("ABCD"), "rubric": RUBRIC, "anyof": AnyOf([RUBRIC, ScoreParser(0, 1, integer=False)]),
}


def _check_parsed(name: str, parsed: Parsed) -> None:
    assert isinstance(parsed, Parsed)
    if parsed.ok:
        assert parsed.error is None
        if name == "choice":
            assert parsed.label in ("A", "B", "C", "D", "NONE")
        if name in ("score",):
            assert parsed.score is not None and 1 <= parsed.score <= 5
        if name in ("score01", "rubric", "anyof"):
            assert parsed.score is not None and 0 <= parsed.score <= 1
        if name == "yesno":
            assert parsed.score in (0.0, 1.0)
    else:
        assert parsed.error and parsed.score is None and parsed.label is None


@FAST
@given(texts)
def test_judge_parsers_never_raise(text: str) -> None:
    for name, parser in PARSERS.items():
        _check_parsed(name, parser(text))
    assert isinstance(looks_like_refusal(text), bool)
    assert isinstance(clean_reply(text), str)


@LARGE
@given(_building_blocks())
def test_judge_parsers_are_linear_on_1mb(unit: str) -> None:
    text = unit * (MB // len(unit) + 1)
    for name, parser in PARSERS.items():
        clean_reply.cache_clear()
        parsed, seconds = _timed(parser, text)
        _check_parsed(name, parsed)
        assert seconds < SECONDS_PER_MB, f"{name}: {seconds:.2f} s on 1 MB of {unit[:40]!r}"


@pytest.mark.parametrize("depth", [10, 1_000, 30_000, 200_000])
def test_deep_nesting_never_raises(depth: int) -> None:
    nests = ('{"a":' * depth + "1" + "}" * depth, "{" * depth + "}" * depth, "[" * depth + "]" * depth,
             '{"Score": ' + "[" * depth + "]" * depth + ', "Justification": "x"}', "{'a': " * depth + "1" + "}" * depth)
    for text in nests:
        for name, parser in PARSERS.items():
            _check_parsed(name, parser(text))


def test_choice_parser_is_not_cubic() -> None:
    """The letter pattern used to split runs of emphasis three ways: 2,000 "*" took 46 s."""
    _, seconds = _timed(PARSERS["choice"], "*" * MB)
    assert seconds < SECONDS_PER_MB


def test_unclosed_fences_are_linear() -> None:
    """Every BEGIN line without its END used to rescan the rest of the reply (172 KB: 4.6 s)."""
    text = "<<<DATA response 0123456789abcdef BEGIN>>>\n" * (MB // 44)
    _, seconds = _timed(clean_reply, text)
    assert seconds < SECONDS_PER_MB


# ---------------------------------------------------------------- the fast paths equal the plain definitions
unicode_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=200) | adversarial


@FAST
@given(unicode_text)
def test_fast_whitespace_and_word_normalisation(text: str) -> None:
    from lmms_agentic.adapters.core import extract

    assert extract._collapse(text) == " ".join(text.split())
    assert extract._norm(text) == " ".join(re.sub(r"[^\w\s]|_", " ", text.casefold()).split())


@FAST
@given(st.lists(st.sampled_from(['{', '}', '"', "'", "\\", "\n", " ", "x", ":", "1"]), max_size=60).map("".join))
def test_top_level_spans_equal_brace_spans(text: str) -> None:
    from lmms_agentic.adapters.core.text import brace_spans
    from lmms_agentic.judges.rubric import _top_level_spans

    assert _top_level_spans(text, None, None) == brace_spans(text, top_level=True, quote_ends_at_newline=False)


FENCE_PARTS = ["<<<DATA response 0123456789abcdef BEGIN>>>", "<<<DATA response 0123456789abcdef END>>>",
               "<<<DATA x 00000000000000ff BEGIN>>>", "<<<DATA x 00000000000000ff END>>>", "<", "<<", "Score: 4",
               "\n", " "]


@FAST
@given(st.lists(st.sampled_from(FENCE_PARTS), max_size=20).map("".join))
def test_fence_stripping_equals_fencing(text: str) -> None:
    from lmms_agentic.judges.fencing import strip_data_blocks
    from lmms_agentic.judges.parsers import _strip_data_blocks

    assert _strip_data_blocks(text) == strip_data_blocks(text)


# Rule 7's plain definition, written forward from the module docstring (one regex per occurrence, quadratic, fine on
# short texts): an upper-case standalone letter counts unless it is the pronoun "I" or the sentence-initial article
# "A" before a lower-case word that is not a function word, or follows "not" / "not option".
CANDIDATE_PARTS = ["A", "I", "B", "J", "A", "I", " ", "not", "Not", "NOT", "nOt", "option", "OPTION", "optİon", "(",
                   "[", "{", "*", "_", "`", ".", "!", "?", ":", ";", ",", "-", "'", "’", '"', "“", "cup", "the", "and",
                   "because", "is", "as", "vs", "versus", "although", "e.g.", "x", "1", "ı", "İ", "it's", "and-", "a",
                   "A-b", "A.b", "b.A", "b-A", "A cup", ". A", "not A", "not option (A)", "I think", "andy", "asked"]
candidate_texts = st.lists(st.sampled_from(CANDIDATE_PARTS), max_size=60).flatmap(
    lambda parts: st.sampled_from(["", " ", " ", "  "]).map(lambda sep: sep.join(parts)))


def _function_word_next(text: str, index: int) -> bool:
    from lmms_agentic.adapters.core.extract import _FUNCTION_WORDS

    m = re.match(r"\s+([a-z][a-z'’-]*)", text[index:])
    return m is not None and not any(re.match(re.escape(w) + r"(?![a-z'’-])", m.group(1)) for w in _FUNCTION_WORDS)


WORD_BEFORE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_'’.-"


def _oracle_candidate(text: str, letter: str) -> bool:
    for i, char in enumerate(text):
        if char != letter or (i and text[i - 1] in WORD_BEFORE):
            continue
        if re.match(r"[A-Za-z0-9_'’]|-[A-Za-z0-9]|\.[A-Za-z]", text[i + 1:]):
            continue
        word_next = _function_word_next(text, i + 1)
        if letter == "I" and word_next:
            continue  # the pronoun
        if letter == "A" and word_next and re.search(r"(?:^|[.!?:;])[\s*_`\"'“”(\[{]*$", text[:i]):
            continue  # the sentence-initial article
        if re.search(r"\bnot\s+(?:option\s+)?[(\[{*_`]*$", text[:i], re.IGNORECASE):
            continue
        return True
    return False


@settings(max_examples=400, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(candidate_texts)
def test_candidate_letters_equal_the_plain_definition(raw: str) -> None:
    from lmms_agentic.adapters.core import extract

    text = extract._collapse(raw)
    for letter in "ABIJ":
        expected = _oracle_candidate(text, letter)
        assert (extract._unrejected_reversed(letter).search(text[::-1]) is not None) == expected, (letter, text)
        assert (letter in extract._Text(text, "ABCDEFGHIJ").candidates()) == expected, (letter, text)


@pytest.mark.parametrize("text", [
    "not A " * 20, "A cup. " * 20, "A cup. " * 20 + "A because", "not A " * 20 + "A", "I think " * 20,
    "I think " * 20 + "I", "not option (A) " * 20 + "so A.", "A-b A.b e.g. A" + " not A" * 20, "Not  a A" * 10,
])
def test_many_rejected_occurrences_then_the_verdict(text: str) -> None:
    from lmms_agentic.adapters.core import extract

    text = extract._collapse(text)
    for letter in "AI":
        assert (letter in extract._Text(text, "ABCDEFGHIJ").candidates()) == _oracle_candidate(text, letter)


# Rule 5's plain definition: every occurrence of " text " (non-overlapping, left to right) is a span; a letter
# counts when one of its spans lies in no strictly longer span of another letter.
OPTION_WORDS = ["move", "left", "slowly", "move left", "left move", "a", "b"]


def _oracle_uncovered(padded: str, needles: dict[str, str]) -> list[str]:
    spans = {letter: [(m.start(), m.end()) for m in re.finditer(re.escape(needle), padded)]
             for letter, needle in needles.items()}
    spans = {letter: found for letter, found in spans.items() if found}
    return [letter for letter, own in spans.items() if any(
        not any(s2 <= s and e <= e2 and e2 - s2 > e - s for other, theirs in spans.items() if other != letter
                for s2, e2 in theirs) for s, e in own)]


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(OPTION_WORDS), min_size=1, max_size=30).map(" ".join),
       st.lists(st.lists(st.sampled_from(["move", "left", "slowly", "a"]), min_size=1, max_size=3).map(" ".join),
                min_size=2, max_size=5))
def test_uncovered_option_texts_equal_the_plain_definition(response: str, texts: list[str]) -> None:
    from lmms_agentic.adapters.core import extract

    padded = f" {response} "
    needles = {"ABCDE"[i]: f" {text} " for i, text in enumerate(texts)}
    found = {letter: (needle, [m.start() for m in re.finditer(re.escape(needle), padded)])
             for letter, needle in needles.items()}
    found = {letter: value for letter, value in found.items() if value[1]}
    assert extract._uncovered(found) == _oracle_uncovered(padded, needles)


# Rule 5 as written: the response's case-folded words joined by single spaces equal one option text, else contain
# options (" text " in " words ", non-overlapping), of which the uncovered ones count.
def _oracle_option_text(text: str, letters: str, texts: list[str | None]) -> str | None:
    from lmms_agentic.adapters.core import extract

    options = [(letters[i], extract._norm(o or "")) for i, o in enumerate(texts)]
    options = [(letter, o) for letter, o in options if o]
    response = extract._norm(text)
    exact = [letter for letter, o in options if o == response]
    if exact:
        return exact[0] if len(exact) == 1 else "?"
    padded = f" {response} "
    needles = {letter: f" {o} " for letter, o in options if not (len(o) < 2 and o.isalpha())}
    uncovered = _oracle_uncovered(padded, needles)
    if len(uncovered) != 1:
        return "?" if uncovered else None
    if extract._Text(text, letters).candidates() - {uncovered[0]}:
        return None
    return uncovered[0]


RESPONSE_PARTS = ["move", "Move", "MOVE", "left", "left,", "slowly", "stop", "lift", "the", "cup", "a", "B", "  ", " ",
                  ",", ".", "’", "“", "”", "—", "_", "-", "(", "ı", "İ", "ß", "ss", "é", "Straße", "K", "ſtop", "\n",
                  "move left", "move  left", "move-left", "move_left", "move left slowly", "(move left, slowly!)",
                  "Stop."]
OPTION_TEXTS = ["move left", "Move left slowly", "move, left", "lift the cup", "stop", "STOP!", "a", "b", "", None,
                "strasse", "left move", "ß", "é cup", "move  left!"]


@settings(max_examples=400, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(RESPONSE_PARTS), min_size=1, max_size=12).flatmap(
           lambda parts: st.sampled_from([" ", "", "  "]).map(lambda sep: sep.join(parts))),
       st.lists(st.sampled_from(OPTION_TEXTS), min_size=2, max_size=5))
def test_option_text_rule_equals_its_plain_definition(raw: str, texts: list[str | None]) -> None:
    from lmms_agentic.adapters.core import extract

    text = extract._collapse(raw)
    letters = "ABCDE"[:len(texts)]
    assert extract._option_text(extract._Text(text, letters), texts) == _oracle_option_text(text, letters, texts)


# Rules 1 and 2 as the single IGNORECASE patterns they are defined by (the module reads them on the lowered text with
# İ ı ſ K made ASCII, starting at literal words): the same verdict on every text, with those four characters in it.
def _original_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    from lmms_agentic.adapters.core import extract

    declaration = re.compile(
        r"(?:(?:\banswers?|\b(?:final|correct|right|best|proper|chosen|selected|my)\s+(?:option|choice))"
        r"[\s*_`]*(?:(?:is|would\s+be|should\s+be|will\s+be|must\s+be)\b[\s*_`]*:?|[:=])"
        r"|\bI(?:\s+would|\s+will|'d|’d|'ll|’ll)?\s+(?:choose|pick|select|go\s+with)\b)"
        + extract._OPEN + r"*(?:(?:option|choice|letter)\s+)?" + extract._OPEN + r"*(?P<letter>[A-Za-z])"
        + extract._AFTER_LETTER,
        re.IGNORECASE,
    )
    is_correct = re.compile(
        r"(?<![A-Za-z0-9_'’])[(\[{*_`\"'“”]*(?P<letter>[A-Za-z])[)\]}*_`\"'“”]*\s+is\s+"
        r"(?:(?:the|indeed|clearly|definitely)\s+)*"
        r"(?:correct|right|best|most\s+(?:appropriate|suitable|likely|accurate|reasonable))\s+(?:answer|option|choice)\b",
        re.IGNORECASE,
    )
    return declaration, is_correct


RULE_PARTS = ["answer", "ANSWER", "answerſ", "ansWer", "fınal answer", "fİnal option", "my optıon", "correct choice",
              "is", "ıs", "İS", "would be", "wıll be", ":", "=", "I", "ı", "İ", "ſ", "K", "I choose", "ı pıck",
              "I'd go with", "i’ll select", "option", "letter", "a", "b", "A", "C", "D", "k", "(", ")", "*", "_", "'",
              "’", '"', "“", "cup", "not", "or", "/", ",", "the", "indeed", "correct", "best", "most likely", "moſt",
              "answer.", "choice", "e.g.", "-"]
rule_texts = st.lists(st.sampled_from(RULE_PARTS), max_size=40).flatmap(
    lambda parts: st.sampled_from(["", " ", " ", "  "]).map(lambda sep: sep.join(parts)))


@settings(max_examples=500, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(rule_texts)
def test_declaration_and_is_correct_equal_their_single_pattern(raw: str) -> None:
    from lmms_agentic.adapters.core import extract

    declaration, is_correct = _original_patterns()
    text = extract._collapse(raw)
    t = extract._Text(text, "ABCD")
    ends = [m.end() for m in declaration.finditer(text)]
    assert extract._declaration(t) == extract._last_declaration(t, reversed(ends))[1], text
    matches = list(is_correct.finditer(text))
    expected = extract._in_range(matches[-1].group("letter"), "ABCD") if matches else None
    assert extract._is_correct(extract._Text(text, "ABCD")) == expected, text


@pytest.mark.parametrize("text", [
    "Answer: B. " + "Answer: a cup. " * 40, "Answer: a cup. " * 40, "Answer: C. " + "the answer is a cup. " * 20
    + "my option is i think " * 20, "I choose B. " + "I choose a cup. " * 40, "I choose I " * 40 + "I choose a cup.",
    "Answer: D " + "I choose I choose a cup " * 30, "ANSWER: A cup. " * 40, "Answer: A Cup. " * 40,
    # chains: a match starting at the letter "I" that ends the one before, of every parity, short and long
    "I choose I choose C", "I choose I choose I choose C", "I choose I choose I choose I choose C",
    "Answer: I choose B", "the answer is I choose I choose D", "I choose I choose a cup", "I pick I I pick I",
    "I choose B. " + "I choose I choose C " * 20, "I choose D " + "I choose I " * 31 + "choose C",
    "I choose D " + "I choose " * 40 + "I", "I choose D " + "I choose " * 31 + "C",
    "I choose D " + "I choose " * 32 + "C",
    "I choose D " + "I Choose " * 40 + "C", "I choose D " + "I Choose " * 41 + "C",  # ("I Choose": not the pronoun)
])
def test_declarations_after_many_articles_equal_the_single_pattern(text: str) -> None:
    from lmms_agentic.adapters.core import extract

    declaration, _ = _original_patterns()
    t = extract._Text(text, "ABCD")
    ends = [m.end() for m in declaration.finditer(text)]
    assert extract._declaration(t) == extract._last_declaration(t, reversed(ends))[1]


def _oracle_declaration(text: str, letters: str) -> str | None:
    """Rule 1's plain definition: of the single pattern's matches, the last whose letter is not the article "a" or
    the pronoun "I" (a lower-case word that is not a function word follows) decides."""
    from lmms_agentic.adapters.core import extract

    declaration, _ = _original_patterns()
    for match in reversed(list(declaration.finditer(text))):
        end = match.end()
        if text[end - 1] in "aAiI" and _function_word_next(text, end):
            continue
        return extract._AMBIGUOUS if extract._ALTERNATIVE.match(text, end) else extract._in_range(text[end - 1],
                                                                                                    letters)
    return None


# More undecided declarations at the end than the backward steps (32), so the one-scan reading decides: articles
# and pronouns of every form and next word, after random rule parts and declarations that count (the last decides).
UNDECIDED = ["Answer: a cup.", "the answer is a cup", "final option is i think", "my choice: a cup",
             "ANSWER: A cup", "best option = a anD", "correct choice is I see", "Final Option: *a cup",
             "my optıon is a cup", "selected choice would be a x", "answer is: a nice", "proper choice = a it"]
COUNTED = ["Answer: a Cup", "answer: i And", "answers: a because", "answer: a ıdea", "answer: *a* cup",
           "answer: B or C", "answer: A and", "answer: ı cup", "final option is B", "my choice: (c)", "answer is D.",
           "ANSWER: C", "the best choice is 'b'", "Final Option: 'a' cup", "FINAL CHOICE: (B)", "My Option is c",
           "Best choice = d", "CORRECT OPTION: a Cup"]
undecided_texts = st.tuples(
    st.lists(st.sampled_from(COUNTED + UNDECIDED + RULE_PARTS), max_size=20),
    st.lists(st.sampled_from(UNDECIDED), min_size=33, max_size=60),
    st.lists(st.sampled_from(["cup", "the", "B", "not", ".", "so", "(", "*"]), max_size=5),
    st.sampled_from([" ", ". ", "  "]),
).map(lambda parts: parts[3].join([*parts[0], *parts[1], *parts[2]]))


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(undecided_texts)
def test_declarations_past_the_backward_steps_equal_the_plain_definition(raw: str) -> None:
    from lmms_agentic.adapters.core import extract

    text = extract._collapse(raw)
    assert extract._declaration(extract._Text(text, "ABCD")) == _oracle_declaration(text, "ABCD"), text
