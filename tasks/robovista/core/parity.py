"""The RoboVista runner's released answer parsers, as named, versioned parity modes (README.md, "Answer extraction").

Owns: both public versions of ``parse_answer`` in ``benchmark/run_benchmark.py`` of ``Dimios45/robovista``,
reproduced letter for letter; the name of the released rule that decided; which version ``"parity"`` means
(DEFAULT_PARSER).  The project's own conservative extractor (mode ``"strict"``) stays in adapters/core/extract.py.

Modes: ``parity_20260706`` (commit 5163b10, 2026-07-06, "Initial public release": the parser the paper describes
in App. B); ``parity_20260714`` (commit a5f8054: the first plus a strict re-read when nothing parses after
``</think>``; the runner's own reference runs used it); ``parity``, an alias of DEFAULT_PARSER (the first: the
paper's tables predate the second). The two differ only on responses with ``</think>`` and no parseable tail.

As released (verified on a stored corpus, tests/robovista/test_parity_corpus.py): the letters are A-E whatever the
question's options (``options`` is only type-checked: "E" can answer a four-option question, "F" never does); no
confidence clause is removed; only the ends are stripped (the API runner collapses whitespace runs *before* calling
the parser, the local runner does not: only ``reread_final_is``'s 40-character window can tell); the text is
upper-cased with ``str.upper`` ("ß" -> "SS"), so lower-case letters count; ``</think>`` is matched
case-insensitively (also "K", the Kelvin sign, "İ", "ı"). Project additions: a non-str response is no answer
("empty"), a response starting (after left-stripping) with REQUEST_FAILED_PREFIX is no answer ("request_failed").
Determinism: the released last rule tries the letters in a Python ``set``'s order (hash-seed dependent); this
module tries A..E, one of the released answers, the released one under any seed with that set order (e.g.
PYTHONHASHSEED=47 on CPython 3.11).

RULES, parity_20260706.  Let R be the text after the first ``</think>`` when there is one, else the whole
response; strip R and upper-case it.  Empty R -> no answer ("empty").  First hit wins:
  a_answer_is      regex search ``\\b(?:THE\\s+)?ANSWER\\s*(?:IS|:)\\s*([A-E])\\b``  ("the answer is c", "Answer: C";
                   not "ANSWER IS: B", which falls through; the leftmost match wins, even "the answer is a grasp")
  b_is_correct     regex search ``\\b([A-E])\\s*(?:IS\\s+(?:THE\\s+)?(?:CORRECT|RIGHT|BEST)\\s+ANSWER)\\b``
                   ("C is the correct answer", also "CIS THE BEST ANSWER")
  c_bare           R matches ``^\\s*([A-E])\\s*$``  (R is one letter)
  d_letter_dot     R matches ``^\\s*([A-E])\\.\\s*$``  ("C.")
  e_leading_label  R matches ``^\\s*([A-E])\\s*[\\.\\)]``  ("C) ...", "C . ...")
  first_char       R[0] is in A-E and R has one character or R[1] is not alphabetic (``str.isalpha``)
  last_char        S = R without trailing dots; S[-1] is in A-E and S has one character or S[-2] is not alphabetic
  any_isolated     the first of A, B, C, D, E with ``\\bL\\b`` somewhere in R (see Determinism)
Otherwise no answer ("no_match").  Because R is upper-cased the English article counts: "A robot ..., so D" -> A.
Reason "empty" means the text the rules saw was empty (an empty response, or an empty tail after ``</think>``).

RULES, parity_20260714.  Without ``</think>``: exactly the rules above on the whole response.  With it: the rules
above on the tail R (the text after the first ``</think>``, stripped, upper-cased); if they give a letter it is the
answer.  Otherwise (the tail is empty or gives nothing) the WHOLE response, stripped and upper-cased (think text and
tags included), is re-read in strict mode, first hit wins:
  reread_a_answer_is .. reread_e_leading_label
                   rules a..e above on the whole text (c and d cannot fire there: the text contains the tag)
  reread_final_is  regex search ``\\b(?:IS|:)\\s*([A-E])\\b[^A-E]{0,40}$``: the text ends with "IS X" or ":X" and
                   at most 40 more characters, none of them A-E ("... the best option is D.</think>").  Note that
                   ``\\b`` before ":" needs a word character right before the colon.
Otherwise no answer ("no_match", also when the tail was empty).  first_char, last_char and any_isolated are never
applied to the re-read.  A parity_20260706 answer is therefore always the parity_20260714 answer too.

Performance: the rules are reformulated (see the comment above the patterns) so that no regex starts from every
position or gives back a whitespace run: parsing is linear, and a 1 MB response takes about 1-15 ms on CPython 3.11
where the released patterns take 50-400 ms.  Nothing here reads files or the environment; no I/O at import.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lmms_agentic.adapters.core.extract import Extraction
from lmms_agentic.adapters.core.text import REQUEST_FAILED_PREFIX, split_at_think_close

PARSER_MODES: tuple[str, ...] = ("parity_20260706", "parity_20260714")
DEFAULT_PARSER: str = "parity_20260706"
# the runner's fixed letter class, whatever the question's options
RELEASED_LETTERS = "ABCDE"

_LABEL_RULES = ("a_answer_is", "b_is_correct", "c_bare", "d_letter_dot", "e_leading_label")
_POSITION_RULES = ("first_char", "last_char", "any_isolated")
_REREAD_RULES = (*(f"reread_{name}" for name in _LABEL_RULES), "reread_final_is")
PARSER_RULES: dict[str, tuple[str, ...]] = {
    "parity_20260706": _LABEL_RULES + _POSITION_RULES,
    "parity_20260714": _LABEL_RULES + _POSITION_RULES + _REREAD_RULES,
}


# Speed without changing a single result.  The released patterns begin with ``\b``, which keeps Python's regex
# engine from skipping ahead to a literal (tens of ms per MB each), and give a whitespace run back one character at
# a time (~50 ms per MB of whitespace).  Here every whitespace run is taken whole with ``(?=(?P<w>\s*))(?P=w)`` (an
# atomic group that works on Python 3.10; a run is always followed by a non-whitespace item, so giving characters
# back could never help).  Rule a starts at the literal ANSWER with the leading ``\b`` as a lookbehind after it (for
# a word character X, "\b before X" is "no word character before X"; the optional "THE " of the released leftmost
# match never decides whether an ANSWER matches nor what it captures).  Rule b finds each "IS ... CORRECT|RIGHT|BEST
# ... ANSWER" phrase whose IS follows whitespace or A-E, in order, then reads backwards (on the reversed text) over
# the whitespace before it: the letter must come next, with no word character before it (phrases never overlap;
# their order is the released matches').  Rules c..e are anchored: match() is what their search amounts to.
# any_isolated starts at the literal letter; reread_final_is is tried only where it can match (_final_statement).
# The stored corpus checks all of this against the released functions.


def _ws(name: str, plus: bool = False) -> str:
    """An atomic whitespace run (``\\s*`` or ``\\s+``) under the group name ``name``."""
    return rf"(?=(?P<{name}>\s{'+' if plus else '*'}))(?P={name})"


_ANSWER_IS = re.compile(rf"ANSWER(?<!\wANSWER){_ws('w1')}(?:IS|:){_ws('w2')}(?P<letter>[A-E])\b")
_CORRECT_PHRASE = re.compile(
    rf"IS(?<=[\sA-E]IS){_ws('w1', True)}(?:THE{_ws('w2', True)})?(?:CORRECT|RIGHT|BEST){_ws('w3', True)}ANSWER\b"
)
# on the reversed text
_LETTER_BEHIND = re.compile(rf"{_ws('w1')}(?P<letter>[A-E])(?!\w)")
_BARE = re.compile(rf"{_ws('w1')}(?P<letter>[A-E]){_ws('w2')}$")
_LETTER_DOT = re.compile(rf"{_ws('w1')}(?P<letter>[A-E])\.{_ws('w2')}$")
_LEADING_LABEL = re.compile(rf"{_ws('w1')}(?P<letter>[A-E]){_ws('w2')}[\.\)]")
# \bL\b
_ISOLATED = {letter: re.compile(rf"{letter}(?<!\w{letter})(?!\w)") for letter in RELEASED_LETTERS}
_FINAL_IS = re.compile(rf"\b(?:IS|:){_ws('w1')}(?P<letter>[A-E])\b[^A-E]{{0,40}}$")
_FINAL_WINDOW = 40


def resolve_mode(mode: str) -> str:
    """The versioned mode behind ``mode``: "parity" -> DEFAULT_PARSER; a name in PARSER_MODES -> itself."""
    if mode == "parity":
        return DEFAULT_PARSER
    if mode in PARSER_MODES:
        return mode
    raise ValueError(f"unknown RoboVista parser mode {mode!r}; expected 'parity' or one of {', '.join(PARSER_MODES)}")


def _is_correct(upper: str) -> str | None:
    """Rule b: the letter before the first "IS [THE] CORRECT|RIGHT|BEST ANSWER" phrase that has one."""
    backwards: str | None = None
    for phrase in _CORRECT_PHRASE.finditer(upper):
        if backwards is None:
            backwards = upper[::-1]
        hit = _LETTER_BEHIND.match(backwards, len(upper) - phrase.start())
        if hit is not None:
            return hit.group("letter")
    return None


def _labels(upper: str, prefix: str = "") -> Extraction | None:
    """Rules a..e, in order, on an upper-cased, stripped text."""
    hit = _ANSWER_IS.search(upper)
    if hit is not None:
        return Extraction(hit.group("letter"), prefix + "a_answer_is")
    letter = _is_correct(upper)
    if letter is not None:
        return Extraction(letter, prefix + "b_is_correct")
    for name, pattern in (("c_bare", _BARE), ("d_letter_dot", _LETTER_DOT), ("e_leading_label", _LEADING_LABEL)):
        hit = pattern.match(upper)
        if hit is not None:
            return Extraction(hit.group("letter"), prefix + name)
    return None


def _loose(upper: str) -> Extraction | None:
    """The full released rule list (a..e, then the positional fallbacks) on an upper-cased, stripped text."""
    found = _labels(upper)
    if found is not None:
        return found
    if upper and upper[0] in RELEASED_LETTERS and (len(upper) == 1 or not upper[1].isalpha()):
        return Extraction(upper[0], "first_char")
    body = upper.rstrip(".")
    if body and body[-1] in RELEASED_LETTERS and (len(body) == 1 or not body[-2].isalpha()):
        return Extraction(body[-1], "last_char")
    # A -> E; the runner's order is hash-seed dependent
    for letter, pattern in _ISOLATED.items():
        if pattern.search(upper):
            return Extraction(letter, "any_isolated")
    return None


def _final_statement(text: str) -> str | None:
    """The released ``\\b(?:IS|:)\\s*([A-E])\\b[^A-E]{0,40}$`` without scanning the whole text: after the
    captured letter no A-E may follow, so it is the text's last A-E character, at most 40 characters from the end;
    "IS" or ":" must end right before the whitespace run that precedes it.  The released pattern is then tried at
    those two places only."""
    body = text.rstrip()
    window = max(0, len(body) - _FINAL_WINDOW - 1)
    last = max(body.rfind(letter, window) for letter in RELEASED_LETTERS)
    if last < 0:
        return None
    # \s and str.isspace agree on every code point
    keyword_end = len(body[:last].rstrip())
    for start in (keyword_end - 2, keyword_end - 1):  # "IS" or ":"
        hit = _FINAL_IS.match(body, start) if start >= 0 else None
        if hit is not None:
            return hit.group("letter")
    return None


def _reread(upper: str) -> Extraction | None:
    """parity_20260714's strict re-read of the whole text: rules a..e, then the final "IS X" statement."""
    found = _labels(upper, prefix="reread_")
    if found is not None:
        return found
    letter = _final_statement(upper)
    return Extraction(letter, "reread_final_is") if letter is not None else None


def _check_options(options: object) -> None:
    expected = "options must be a sequence of option texts or a count, got"
    if isinstance(options, (str, bytes, bool)):
        raise TypeError(f"{expected} {options!r}")
    if not isinstance(options, (int, Sequence)):
        raise TypeError(f"{expected} {type(options).__name__}")


def parse_answer(response: object, options: Sequence[str | None] | int, mode: str = "parity") -> Extraction:
    """Parse ``response`` exactly as the released RoboVista runner version ``mode`` does.

    ``options`` (texts or a count) is checked for type but does not change the result: the released parsers accept
    A-E whatever the question offers.  ``mode``: "parity" (DEFAULT_PARSER) or one of PARSER_MODES; anything else
    raises ValueError.  Returns the letter and the deciding rule, or no letter with reason "empty",
    "request_failed" or "no_match".  See the module docstring for each version's rules."""
    version = resolve_mode(mode)
    _check_options(options)
    if not isinstance(response, str):
        return Extraction(None, "none", "empty")
    if response.lstrip().startswith(REQUEST_FAILED_PREFIX):
        return Extraction(None, "none", "request_failed")
    parts = split_at_think_close(response, exact=True)
    close = parts is not None
    text = response if parts is None else parts[1]
    upper = text.strip().upper()
    found = _loose(upper)
    if found is None and close and version == "parity_20260714":
        found = _reread(response.strip().upper())
        if found is None:
            return Extraction(None, "none", "no_match")
    if found is not None:
        return found
    return Extraction(None, "none", "no_match" if upper else "empty")
