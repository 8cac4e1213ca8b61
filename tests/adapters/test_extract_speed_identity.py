"""The strict extractor's fast paths equal the plain definitions they stand for (adapters/core/extract.py).

The speed-ups read a text on its UTF-8 bytes, lower it as ASCII when its few non-ASCII characters are their own case
folds, skip a scan that a str.find in C rules out, read rules 3 and 4 from the end of the leading run of emphasis and
quotes, and find declaration keywords as their common spellings when the text spells them no other way.  None may change
a result: each is checked against its plain definition over mostly ASCII text with a few of the characters where the
two could part (what IGNORECASE or str.casefold treat specially, the common non-ASCII marks and whitespace, CJK, a
lone surrogate).  (The 1 MB timings are in perf/parsers.py.)
"""

from __future__ import annotations

import re
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from lmms_agentic.adapters.core import extract  # noqa: E402
from tests.adapters.test_parser_properties import _oracle_declaration, _oracle_option_text  # noqa: E402

EXAMPLES = settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))

ASCII_PARTS = ["answer", "Answer:", "the", "move", "Move", "left", "slowly", "stop", "lift", "cup", "is", "not", "A",
               "B", "C", "a", "i", "I", "option", "confidence", "Confidence: 80%", " ", " ", "  ", "\n", "\t", ".", ",",
               "(", ")", "*", "**", "_", "`", '"', "'", "-", ":", "1", "42", "move left", "Lift The Cup",
               "move left slowly", "MOVE  left!", "fine", "the cup"]
RARE = ["ı", "İ", "ſ", "K", "ß", "ﬁ", "ǰ", "Σ", "ς", "Ꭰ", "ꭰ", "é", "É", "Å", "’", "“", "”", "‘", "—", "–", "…",
        "\u2028", "\xa0", "\x85", "\u3000", "\u2009", "机器人", "，", "\udc80", "confıdence", "CONFİDENCE", "ſtop",
        "moveﬁ"]
mostly_ascii = st.lists(st.sampled_from(ASCII_PARTS * 10 + RARE), max_size=120).map("".join)
mostly_rare = st.lists(st.sampled_from(ASCII_PARTS + RARE * 3), max_size=60).map("".join)
texts = mostly_ascii | mostly_rare


@EXAMPLES
@given(texts)
def test_whitespace_collapse(text: str) -> None:
    assert extract._collapse(text) == " ".join(text.split())
    spaced = re.sub(r"\s", " ", text)
    assert extract._collapse(spaced, spaced=True) == " ".join(spaced.split())


@EXAMPLES
@given(texts)
def test_fold_is_the_case_fold_with_marks_as_spaces(text: str) -> None:
    assert extract._fold(text) == extract._marks_to_spaces(text).casefold()


@EXAMPLES
@given(texts)
def test_words_of_the_folded_text(text: str) -> None:
    folded = extract._collapse(text).casefold()
    assert extract._words(folded) == " ".join(re.sub(r"[^\w\s]|_", " ", folded).split())


@EXAMPLES
@given(texts)
def test_confidence_clause_found_wherever_its_pattern_matches(text: str) -> None:
    assert (extract.split_confidence(text)[1] is not None) == (extract._CONFIDENCE.search(text) is not None)


# Rules 3 and 4 as their single patterns (IGNORECASE), which start with the run of emphasis, quotes and whitespace.
BARE = re.compile(
    r"^[\s*_`\"'“”]*(?:(?:option|choice|answer|letter)\s*[:.]?\s*)?[\s*_`\"'“”(\[{]*"
    r"(?P<letter>[A-Za-z])[\s*_`\"'“”)\]}.!:;,]*$",
    re.IGNORECASE,
)
LEADING = re.compile(
    r"^[\s*_`\"'“”]*(?:(?:option|choice)\s+)?[(\[{]?[*_`]*(?P<letter>[A-Za-z])[*_`]*[.):\]}](?![A-Za-z]\.)",
    re.IGNORECASE,
)
LABEL_PARTS = ["", " ", "*", "**", "_", "`", '"', "'", "“", "”", "(", "[", "{", ")", "]", "}", ".", ":", "!", ",", "C",
               "c", "ı", "K", "option", "Option ", "choice ", "answer", "letter", "A.", "b)", "move left", "x"]


@EXAMPLES
@given(st.lists(st.sampled_from(LABEL_PARTS), max_size=12).map("".join))
def test_labels_read_after_the_leading_run(raw: str) -> None:
    text = extract._collapse(raw)
    t = extract._Text(text, "ABCD")
    for rule, pattern in ((extract._bare_label, BARE), (extract._leading_label, LEADING)):
        m = pattern.match(text)
        assert rule(t) == (extract._in_range(m.group("letter"), "ABCD") if m else None), (rule, text)


# A declaration that counts, then more undecided ones than the backward steps (32), with keywords in common and other
# spellings: the scan of the common spellings, or of any spelling where another occurs, equals the plain definition.
KEYWORDS = ["answer", "Answer", "ANSWER", "AnSwer", "anſwer", "answers", "Answers", "final option", "Final Option",
            "FINAL OPTION", "my optıon", "My OPTİON", "best choice", "Best Choice", "BEST CHOICE", "correct cHoice",
            "fınal choice"]
UNDECIDED_TAILS = [" a cup", " A cup", " i think", " a anD", " *a nice"]
COUNTED_TAILS = [" a Cup", " ı cup", " B", " (c)", " a and", " D.", " B or C"]


def _units(tails: list[str]) -> st.SearchStrategy[str]:
    return st.tuples(st.sampled_from(KEYWORDS), st.sampled_from([":", " is", " =", " IS", " would be"]),
                     st.sampled_from(tails)).map("".join)


@EXAMPLES
@given(st.tuples(st.lists(_units(UNDECIDED_TAILS + COUNTED_TAILS + [" I choose C"]), max_size=6),
                 _units(COUNTED_TAILS), st.lists(_units(UNDECIDED_TAILS), min_size=33, max_size=50),
                 st.lists(_units(UNDECIDED_TAILS + COUNTED_TAILS), max_size=2), st.sampled_from([" ", ". ", "\n"])))
def test_declarations_read_by_spelling(parts: tuple[Any, ...]) -> None:
    head, counted, undecided, tail, separator = parts
    text = extract._collapse(separator.join([*head, counted, *undecided, *tail]))
    assert extract._declaration(extract._Text(text, "ABCD")) == _oracle_declaration(text, "ABCD"), text


OPTION_SETS: list[list[str | None]] = [
    ["move left", "move left slowly", "lift the cup", "stop"], ["Stop", "stop", None, "", "go"], ["a", "b", "c"],
    ["strasse", "ﬁne", "is", "cup"], ["Move  left!", "LEFT", "move"],
]


@EXAMPLES
@given(texts, st.sampled_from(OPTION_SETS))
def test_option_text_rule_on_mostly_ascii_text(raw: str, texts: list[str | None]) -> None:
    text = extract._collapse(raw)
    letters = "ABCDE"[:len(texts)]
    assert extract._option_text(extract._Text(text, letters), texts) == _oracle_option_text(text, letters, texts)
