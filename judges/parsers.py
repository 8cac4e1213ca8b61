"""Strict parsers for judge replies: "Score: N", yes/no, an option letter, refusals.

Owns: the ``ReplyParser`` protocol and its ``Parsed`` outcome, the text parsers (``ScoreParser``,
``YesNoParser``, ``ChoiceParser``), the ``AnyOf`` combinator, reply cleaning and refusal detection.
The JSON/rubric parser lives in ``rubric.py``.

Every parser reads only the judge's reply (never the prompt) after ``clean_reply``: a leading
``<think>...</think>`` block and any echoed fenced data block (see ``fencing.py``) are removed first.
Parsers never pick a digit or word out of prose: a score needs its label ("Score: 4"), a yes/no verdict must
be a whole line ("Yes", "**No.**", "Verdict: yes"), a letter must be the whole reply.  Anything else is a parse
failure with a reason in ``Parsed.error``; a reply that states two different verdicts ("Score: 0.2 ... Score: 0.9",
a "Yes" line and a "No" line) is *ambiguous* (``Parsed.ambiguous``; the client's unscored reason ``ambiguous``), and
``AnyOf`` stops there: no later parser may pick one of the verdicts.
A parser never raises on odd input and never evaluates reply text.

Cost: linear in the reply, whatever it holds (1 MB of prose, of "*", of "{" or of repeated lines; measured by
perf/parsers.py).  Patterns start at a character class (the regex engine skips ahead in C), runs that a later
part could also take are atomic, repeated matches and lines are judged once per distinct value, and echoed data
blocks are removed in one pass (``_strip_data_blocks``, equal to ``fencing.strip_data_blocks``, whose lazy pattern
rescans the rest of the reply after every unclosed block).  Nothing is cut: every rule reads the whole reply.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

from lmms_agentic.adapters.core.text import answer_text

__all__ = [
    "AnyOf",
    "ChoiceParser",
    "Parsed",
    "ReplyParser",
    "ScoreParser",
    "YesNoParser",
    "ambiguous",
    "clean_reply",
    "looks_like_refusal",
]


@dataclass(frozen=True)
class Parsed:
    """Outcome of parsing one reply: ``error`` is None on success."""

    score: float | None = None
    """Numeric verdict on the parser's scale (None for label-only parsers or on failure)."""
    dimensions: Mapping[str, float] = field(default_factory=dict)
    """Named rubric scores (JSON rubric parsers)."""
    label: str | None = None
    """Categorical verdict ("yes", "no", "B", "NONE")."""
    fields: Mapping[str, Any] = field(default_factory=dict)
    """Other parsed JSON fields (e.g. a justification)."""
    error: str | None = None
    """Why the reply did not parse; None on success."""
    ambiguous: bool = False
    """The reply states several verdicts that disagree (``error`` says which)."""

    @property
    def ok(self) -> bool:
        return self.error is None


def _fail(reason: str) -> Parsed:
    return Parsed(error=reason)


def ambiguous(reason: str) -> Parsed:
    """A reply with several verdicts that disagree: unscored as ambiguous."""
    return Parsed(error=f"ambiguous: {reason}", ambiguous=True)


@runtime_checkable
class ReplyParser(Protocol):
    """A strict reply parser.  ``spec`` is a stable description that enters cache keys and logs."""

    @property
    def spec(self) -> str: ...

    def __call__(self, reply: str) -> Parsed: ...


# ---------------------------------------------------------------- cleaning and refusals
_EMPHASIS = "*_`\"'“”‘’"
_BEGIN = re.compile(r"<<<DATA ([A-Za-z0-9_]+) ([0-9a-f]{16}) BEGIN>>>")
_END = re.compile(r"<<<DATA ([A-Za-z0-9_]+) ([0-9a-f]{16}) END>>>")


def _strip_data_blocks(reply: str) -> str:
    """``fencing.strip_data_blocks`` in one pass: every complete block (a BEGIN line, then the first END line with the
    same name and nonce) becomes " ", blocks taken left to right.  END lines are indexed once, so a BEGIN without an
    END costs a lookup, not a scan of the rest of the reply."""
    if "<<<DATA " not in reply:
        return reply
    ends: dict[tuple[str, str], list[int]] = {}
    for m in _END.finditer(reply):  # (END lines cannot overlap, so every one is found)
        ends.setdefault((m.group(1), m.group(2)), []).append(m.start())
    end_line = 32  # len("<<<DATA  ") + 16 + len(" END>>>") + the name
    if not ends:
        return reply
    pieces: list[str] = []
    done = 0
    for m in _BEGIN.finditer(reply):
        if m.start() < done:
            continue  # inside the block just removed
        positions = ends.get((m.group(1), m.group(2)))
        if not positions:
            continue
        i = bisect_left(positions, m.end())
        if i == len(positions):
            continue
        pieces += [reply[done:m.start()], " "]
        done = positions[i] + end_line + len(m.group(1))
    if not pieces:
        return reply
    pieces.append(reply[done:])
    return "".join(pieces)


@lru_cache(maxsize=4)
def clean_reply(reply: str) -> str:
    """Drop the reasoning block (everything up to the first ``</think>``) and echoed fenced data; strip outer
    whitespace. A judge that ends inside its thinking has given no verdict: its thinking is not read.
    (The last few results are kept: ``AnyOf`` hands the same reply to each of its parsers.)"""
    return _strip_data_blocks(answer_text(reply, fallback_to_thinking=False)).strip()


_REFUSAL = re.compile(
    r"^(?:"
    r"(?:I['’]m|I\s+am)\s+(?:very\s+|so\s+|truly\s+)?(?:sorry|afraid)\b[^.\n]{0,80}?"
    r"\b(?:can['’]?t|cannot|can\s+not|unable|won['’]t|will\s+not|not\s+able)\b"
    r"|(?:sorry|apologies|my\s+apologies)\b[^.\n]{0,80}?\b(?:can['’]?t|cannot|can\s+not|unable|won['’]t|will\s+not)\b"
    r"|I\s+(?:can['’]?t|cannot|can\s+not|won['’]t|will\s+not|am\s+unable\s+to|am\s+not\s+able\s+to)\s+"
    r"(?:help|assist|comply|provide|evaluate|do|fulfil|fulfill|answer|grade|score|judge|complete)\b"
    r"|as\s+an\s+ai\b[^.\n]{0,80}?\b(?:can['’]?t|cannot|unable|won['’]t)\b"
    r")",
    re.IGNORECASE,
)


def looks_like_refusal(reply: str) -> bool:
    """True when the reply opens with a refusal ("I'm sorry, I can't ...", "I cannot help with ...").

    The client consults this only for replies that failed to parse, so a parsed verdict that happens to
    start with "Sorry" is never reclassified."""
    return bool(_REFUSAL.match(clean_reply(reply)))


# ---------------------------------------------------------------- Score: N
_NUMBER = r"[+-]?(?:\d+(?:\.\d+)?|\.\d+)"


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass(frozen=True)
class ScoreParser:
    """Reads "<label>: N" (e.g. "Score: 4", "**Score:** 4", "Score = 4/5", "'Score': '0.75'").

    N must lie in [low, high]; with ``integer=True`` (default) "4.5" is rejected, with ``allowed`` only the
    listed values pass (e.g. (0, 0.5, 1)).  "N/high" and "N out of high" are accepted when the denominator
    equals ``high``.  A label occurrence not followed by a readable number, several occurrences with
    different values, a range ("3-4"), a percentage or a decimal comma make the reply a parse failure."""

    low: float = 1
    high: float = 5
    integer: bool = True
    allowed: tuple[float, ...] | None = None
    labels: tuple[str, ...] = ("score",)

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(f"empty scale [{self.low}, {self.high}]")
        if not self.labels or not all(re.fullmatch(r"[A-Za-z][A-Za-z ]*", w) for w in self.labels):
            raise ValueError(f"labels must be words, got {self.labels!r}")

    @property
    def spec(self) -> str:
        allowed = ",".join(_fmt(a) for a in self.allowed) if self.allowed is not None else "-"
        kind = "int" if self.integer else "real"
        return f"score[{'|'.join(self.labels)}]:{_fmt(self.low)}..{_fmt(self.high)}:{kind}:allowed={allowed}"

    def _pattern(self) -> re.Pattern[str]:
        return _score_pattern(self.labels)

    def _read(self, num: str, after: str) -> float | str:
        if re.match(r"(?:[.,]\d|\s*[-–]\s*\d|\s*%|[A-Za-z0-9_])", after):
            return f"unreadable score {num + after[:4]!r}"
        value = float(num)
        denom = re.match(rf"[*_`'\"]*\s*(?:/|out\s+of)\s*(?P<d>{_NUMBER})(?![\d.]*\d)", after, re.IGNORECASE)
        if denom and float(denom.group("d")) != float(self.high):
            return f"score {num}/{denom.group('d')} is not on the declared scale (max {_fmt(self.high)})"
        return value

    def __call__(self, reply: str) -> Parsed:
        text = clean_reply(reply)
        values: list[float] = []
        if _plain(text) and not any(w.split()[0].lower() in text.lower() for w in self.labels):
            return _fail("no score found")  # (a plain text: str.lower() finds every label IGNORECASE would)
        for tail in dict.fromkeys(self._pattern().findall(text)):  # each distinct match once, in order
            if not tail:
                return _fail("score label without a number")
            num = _NUMBER_AT.match(tail)
            assert num is not None
            read = self._read(num.group(), tail[num.end():])
            if isinstance(read, str):
                return _fail(read)
            values.append(read)
        if not values:
            return _fail("no score found")
        if len(set(values)) > 1:
            return ambiguous(f"conflicting scores {sorted(set(values))}")
        value = values[0]
        if not math.isfinite(value) or not self.low <= value <= self.high:
            return _fail(f"score {_fmt(value)} outside [{_fmt(self.low)}, {_fmt(self.high)}]")
        if self.integer and not value.is_integer():
            return _fail(f"score {_fmt(value)} is not an integer")
        if self.allowed is not None and value not in self.allowed:
            return _fail(f"score {_fmt(value)} not among the allowed values")
        return Parsed(score=value)


# The tail after the number (up to 16 characters, read by ``_read``) stops before a label's first letter, so it never
# swallows the next label: "Score: 0.2 Score: 0.9" yields both values (and is ambiguous).
# The label, case-insensitive, as "(?<![\w])['"]?(?:label)\b['"]?[\s*_]*[:=]..." did it.  The pattern starts at the
# label's first letter (a class of its cases, so the engine skips ahead in C) instead of at an optional quote: a
# match exists exactly when the label follows no word character, and the quote is in no group.
_FOLDS = {"i": "iIıİ", "k": "kKK", "s": "sSſ"}  # what IGNORECASE also matches to an ASCII letter


@lru_cache(maxsize=64)
def _score_pattern(labels: tuple[str, ...]) -> re.Pattern[str]:
    def cases(letter: str) -> str:
        return _FOLDS.get(letter.lower(), letter.lower() + letter.upper())

    first = "".join(sorted({c for w in labels for c in cases(w[0])}))
    # after the number: one character of any kind (a letter there makes the score unreadable), then up to 16 that
    # cannot start a label; a label starting with "o" must still let "out of" through (slower, but exact)
    after = (rf"[{first}]?[^\n{first}]{{0,16}}" if "o" not in first.lower()
             else rf"[{first}]?(?:out\s+of|[^\n{first}]|(?<=\w)[{first}]){{0,16}}")
    words = "|".join(f"(?<=[{cases(w[0])}])" + re.escape(w[1:]).replace(r"\ ", r"\s+") for w in labels)
    return re.compile(
        rf"[{first}](?<!\w.)(?i:(?:{words})\b['\"]?[\s*_]*[:=][\s*_`'\"]*"
        rf"(?P<tail>{_NUMBER}{after})?)"
    )


_NUMBER_AT = re.compile(_NUMBER)
_NOT_PLAIN = re.compile("[İıſK]")


def _plain(text: str) -> bool:
    """No character that IGNORECASE matches to an ASCII letter while str.lower() does not."""
    return text.isascii() or not _NOT_PLAIN.search(text)


# ---------------------------------------------------------------- yes / no
_LABELLED = re.compile(  # (the leading run is atomic: giving it back cannot help, a letter must follow it)
    r"^(?=(?P<r>[\s*_#]*))(?P=r)(?:final\s+)?(?:answer|verdict|judg(?:e)?ment|decision|grade)[\s*_]*:[\s*_]*(?P<v>.+)$",
    re.IGNORECASE,
)


def _token(text: str) -> str:
    return text.strip().strip(_EMPHASIS).strip().rstrip(".!").strip().strip(_EMPHASIS).strip().casefold()


@dataclass(frozen=True)
class YesNoParser:
    """Yes/no verdicts: a whole line that is exactly a yes- or no-word (emphasis, quotes and a final "."
    or "!" allowed) or a labelled line ("Verdict: yes", "Answer: **No**").  Every such line must agree.
    Defaults: yes=("yes",), no=("no",); e.g. ``YesNoParser(yes=("correct",), no=("incorrect",))``.
    "yes and no", "not yes", "10", "0.1", "Yes, but ..." never parse.  Score: yes -> 1.0, no -> 0.0;
    the label is the first word of the matching vocabulary."""

    yes: tuple[str, ...] = ("yes",)
    no: tuple[str, ...] = ("no",)

    def __post_init__(self) -> None:
        yes, no = {w.casefold() for w in self.yes}, {w.casefold() for w in self.no}
        if not yes or not no or yes & no:
            raise ValueError("yes and no vocabularies must be non-empty and disjoint")

    @property
    def spec(self) -> str:
        return f"yesno:{'|'.join(self.yes)}/{'|'.join(self.no)}"

    def _verdict(self, token: str) -> bool | None:
        if token in {w.casefold() for w in self.yes}:
            return True
        if token in {w.casefold() for w in self.no}:
            return False
        return None

    def __call__(self, reply: str) -> Parsed:
        verdicts: set[bool] = set()
        for line in _verdict_lines(clean_reply(reply), (*self.yes, *self.no)):
            labelled = _LABELLED.match(line)
            token = _token(labelled.group("v") if labelled else line)
            verdict = self._verdict(token)
            if verdict is None and labelled:
                return _fail(f"unreadable verdict {line.strip()[:40]!r}")
            if verdict is not None:
                verdicts.add(verdict)
        if not verdicts:
            return _fail("no yes/no verdict line")
        if len(verdicts) > 1:
            return ambiguous("conflicting yes/no verdicts")
        yes = verdicts.pop()
        return Parsed(score=1.0 if yes else 0.0, label=(self.yes if yes else self.no)[0])


_LINE_JUNK = _EMPHASIS + ".!" + "".join(chr(c) for c in range(0x3001) if chr(c).isspace())


def _verdict_lines(text: str, vocabulary: tuple[str, ...]) -> list[str]:
    """The reply's lines that can matter, in order, each distinct line once: a line with a ":" (it may be labelled),
    or one that is no longer than the longest word once emphasis, ".", "!" and spaces are cut from its ends (a
    verdict line's token is what is left after cutting some of those, and case folding never shortens it).  Every
    other line has no verdict and no label, so skipping it changes nothing; a repeated line says what its first
    copy said."""
    longest = max(len(w) for w in vocabulary)
    return [line for line in dict.fromkeys(text.splitlines()) if ":" in line or len(line.strip(_LINE_JUNK)) <= longest]


# ---------------------------------------------------------------- option letter
# The runs are atomic (written so that Python 3.10 understands them): each is followed by an optional word and then a
# run of a wider class, which could otherwise split it at every position (cubic time on a reply of "*").
_CHOICE = re.compile(
    rf"^(?=(?P<r1>[\s{_EMPHASIS}]*))(?P=r1)(?:(?:final\s+)?answer\s*:\s*)?(?=(?P<r2>[\s{_EMPHASIS}]*))(?P=r2)"
    rf"(?:option\s+)?(?=(?P<r3>[\s{_EMPHASIS}(\[]*))(?P=r3)(?P<v>[A-Za-z]|none)[\s{_EMPHASIS})\].!]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ChoiceParser:
    """The whole reply must be one option letter among ``letters`` or the word NONE (case-insensitive;
    emphasis, brackets, "Option", "Answer:" and a final "." allowed).  Label = the upper-case letter or
    "NONE"; score stays None (a label-only judge)."""

    letters: str = "ABCD"

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Z]{2,10}", self.letters) or len(set(self.letters)) != len(self.letters):
            raise ValueError(f"letters must be 2..10 distinct upper-case letters, got {self.letters!r}")

    @property
    def spec(self) -> str:
        return f"choice:{self.letters}|NONE"

    def __call__(self, reply: str) -> Parsed:
        m = _CHOICE.match(clean_reply(reply))
        if m is None:
            return _fail("reply is not a single option letter or NONE")
        value = m.group("v").upper()
        if value == "NONE":
            return Parsed(label="NONE")
        if value not in self.letters:
            return _fail(f"letter {value} is not among {self.letters}")
        return Parsed(label=value)


# ---------------------------------------------------------------- combinator
@dataclass(frozen=True)
class AnyOf:
    """Try ``parsers`` in order; the first success wins.  On total failure the errors are joined."""

    parsers: Sequence[ReplyParser]

    @property
    def spec(self) -> str:
        return "anyof(" + ";".join(p.spec for p in self.parsers) + ")"

    def __call__(self, reply: str) -> Parsed:
        errors: list[str] = []
        for parser in self.parsers:
            parsed = parser(reply)
            if parsed.ok or parsed.ambiguous:
                return parsed
            errors.append(parsed.error or "?")
        return _fail(" / ".join(errors) or "no parsers")
