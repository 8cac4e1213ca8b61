"""Thinking-loop and truncation detector for ONE model response (AgentVQA paper, App. J).

Owns: deciding, per sample, whether a response ends in a cycle without progress (``loop``: its tail is
dominated by an exactly repeated unit, a sentence, a cycle of sentences or a word n-gram) and whether it was cut
at the token limit without an answer (``truncated``); the per-task ``loop_rate`` / ``truncation_rate`` over such
checks (``aggregate``).  Example of a loop, GLM-4.1V-Thinking repeating until the token limit:
"The person then places another triangle next to the circle and the triangle." x N.
Deterministic, no I/O.  Callers (per-sample scoring) pass the extractor's verdict as
``answered`` and, when the backend reports them, the generated token count and the generation limit.

COST.  Work is bounded by the tail window, whatever the input length: slicing the last ``RAW_TAIL_CHARS`` of a
1 MB response, two linear regex passes and one linear failure-function scan over at most ``TAIL_CHARS``
characters (plus at most ``MAX_ESCAPE_CUTS`` more scans, see ESCAPE); each scan is skipped when one substring
search shows that no qualifying suffix can exist (its last 32 characters do not recur close enough before).
No regex can backtrack: whitespace runs are collapsed with ``[^\\S\\n]+`` first and then `` ?\\n[ \\n]*``.
Measured: a few milliseconds for any 1 MB input ("A A A ...", "*" x 10**6, "{" x 10**5, one giant word, many
short lines, CJK).

NORMALISATION (of the raw tail only): runs of whitespace that contain a newline become one "\\n", other runs one
space; leading/trailing whitespace is stripped; ``str.casefold``.  Periods are then measured with line breaks
read as spaces (copies separated now by a space, now by a line break are one cycle); line breaks only mark the
cut points of an escape (below).  Digits are NOT normalised: a counter or a list of coordinates that changes is
progress by this definition, and normalising digits would flag legitimate enumerations such as one identical
description per sampled frame ("Frame 3: the gripper is open.").  A counter that runs to the token limit is still
``truncated``.  Loops from (near-)greedy decoding repeat verbatim, so exact periods after this normalisation catch
them; markdown, punctuation and non-Latin scripts are kept as written (CJK loops without spaces are found
because periodicity is measured per character, not per word).

THE CHECK.  Over the normalised tail ``w`` (its last ``TAIL_CHARS`` characters), the failure function of the
reversed tail gives, for every suffix of ``w``, its shortest period ``p``; the loop candidate is the LONGEST suffix
that holds at least ``MIN_REPEATS`` copies of its period (``len >= MIN_REPEATS * p``).  A partial copy at the very
end (a response cut mid-sentence or mid-word) is still periodic, so cut loops are found.  ``repeats`` is
``len // p`` (full copies inside the window, the loop may extend before it; a last copy that lacks only its
trailing space or line break, stripped by normalisation, counts as full), ``tail_coverage`` is ``len / len(w)``.
``loop`` is True when all three hold:
  MIN_REPEATS = 3          at least three full copies: two copies are common in legitimate text (an answer that
                           restates its option, "A. move left ... I choose A. move left"); three verbatim copies of
                           a unit of 70+ characters are not.
  MIN_SPAN_CHARS = 200     the repeated suffix is at least 200 characters: short emphatic repetition ("A", "The
                           answer is A. The answer is A. The answer is A.", a "=====" rule, a "|---|---|" row) is
                           not a loop; the paper's 78-character sentence needs 3 copies, a one-word unit 40-100.
  MIN_COVERAGE = 0.5       the repeats cover at least half of the examined tail ("dominated"): on a long response
                           that is >= 2,048 characters (~450 tokens) of exact repetition, far more than any
                           legitimate table, code block or list ends with, and far less than a loop that runs to a
                           10,240-token limit produces.  A loop the model left early (a few copies, then more
                           text) is not counted.
  TAIL_CHARS = 4096        the examined tail: ~1,000 English tokens (~2,000+ for CJK).  With MIN_REPEATS = 3 the
                           longest detectable cycle is 1,365 characters (a cycle of ~10 sentences); the tail is
                           short enough that the check costs ~1 ms, and long enough that a loop that fills it is
                           beyond doubt.  For a response shorter than that, the whole response is the tail.
  RAW_TAIL_CHARS = 32768   the raw characters normalised to obtain the tail (8x TAIL_CHARS, so that whitespace
                           runs cannot starve the window except in whitespace-padded text, where the tail is
                           simply shorter).

ESCAPE.  A model may break out of a loop to write a short final answer ("...the triangle.</think> Answer: A").
If the suffix ending at the very end does not qualify, the check is repeated on the tail cut before a
line break or a "<" or after a sentence terminator (``.!?。！？…``) within the last ``ESCAPE_CHARS = 256``
characters (~60 tokens: room for "</think>" and a one-line answer; more text after the cycle is progress) -- at
most ``MAX_ESCAPE_CUTS = 8`` cut points, nearest to the end first, the first that qualifies wins.  Coverage is
still measured against the whole tail.  Such a loop has ``runs_to_end = False``.

TRUNCATION.  ``truncated`` is never True for a response that was ``answered`` (answered=True): the answer is
usable, whatever the length.  Otherwise:
  * token counts known (``n_tokens`` and ``max_new_tokens`` both valid: ints, ``n_tokens >= 0``,
    ``max_new_tokens >= 1``; anything else, including bools, counts as unknown): truncated iff the limit was hit,
    ``n_tokens >= max_new_tokens - token_slack(max_new_tokens)``, with
    TOKEN_SLACK = max(1, max_new_tokens // 200) (0.5%; 51 tokens of 10,240): backends differ on whether the
    EOS/stop token is counted, and a count re-derived by re-tokenising the decoded text can differ from the
    engine's by a fraction of a percent (decode -> encode is not a round trip).  A natural stop that close to the
    limit without an answer is rare and loses the sample anyway.  Loop or not does not matter here.
  * token counts unknown: truncated iff a loop was found that runs to the very end (``runs_to_end``): three or
    more verbatim copies running into the end of the text are taken as evidence that generation was cut at the
    length cap.  A non-looping response without token counts is never called truncated.
  * ``answered=None`` (the caller did not extract an answer) counts as not answered: a response cut at the limit
    lost its end, which is where the answer goes.
Non-str input, empty or whitespace-only text and lmms-eval's failed-request marker (text starting with
``adapters.core.text.REQUEST_FAILED_PREFIX``) -> no loop, not truncated.

REPORTED CYCLE.  The repeating unit as normalised (case-folded, whitespace collapsed to single spaces), taken from
its first copy in the tail and rotated, when that copy does not begin a sentence (the suffix can reach a few
characters back into the text before the loop), to its first sentence start (after a terminator), else its first
word start, so that it reads as written; stripped, and shortened to ``CYCLE_LOG_CHARS = 200`` characters (last
one "…").  None when there is no loop; then ``repeats = 0`` and ``tail_coverage = 0.0``.

AGGREGATION.  ``aggregate`` counts every check it is given (failed requests included, as no loop / not truncated):
``{"n", "loop_rate", "truncation_rate"}``, rates in [0, 1], 0.0 for an empty list.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from lmms_agentic.adapters.core.text import REQUEST_FAILED_PREFIX

__all__ = [
    "CYCLE_LOG_CHARS",
    "ESCAPE_CHARS",
    "MAX_ESCAPE_CUTS",
    "MIN_COVERAGE",
    "MIN_REPEATS",
    "MIN_SPAN_CHARS",
    "RAW_TAIL_CHARS",
    "REQUEST_FAILED_PREFIX",
    "TAIL_CHARS",
    "LoopCheck",
    "aggregate",
    "check_response",
    "token_slack",
]

TAIL_CHARS = 4096
RAW_TAIL_CHARS = 8 * TAIL_CHARS
MIN_REPEATS = 3
MIN_SPAN_CHARS = 200
MIN_COVERAGE = 0.5
ESCAPE_CHARS = 256
MAX_ESCAPE_CUTS = 8
CYCLE_LOG_CHARS = 200

_HSPACE_RUN = re.compile(r"[^\S\n]+")
_NEWLINE_RUN = re.compile(r" ?\n[ \n]*")
_TERMINATORS = frozenset(".!?。！？…")
# The quick test in _periodic_suffix never rejects a qualifying suffix: its span is at most the tail, i.e. at most
# twice the shortest qualifying span L (MIN_COVERAGE = 0.5), so its period p <= span / MIN_REPEATS <= 2L / 3, and the
# probe's earlier copy starts p + PROBE <= 2L / 3 + L / 3 = L characters before the end as long as PROBE <= L / 3,
# which holds since L >= MIN_SPAN_CHARS = 200 (tests compare against a brute-force reference).
_PROBE_CHARS = 32


@dataclass(frozen=True)
class LoopCheck:
    """The verdict on one response; see the module docstring for every field's rule."""

    loop: bool  # the tail is dominated by an exactly repeated unit that runs (almost) to the end
    truncated: bool  # cut at the token limit (or, without token counts, ends inside a loop) and not answered
    cycle: str | None  # the repeating unit, normalised, <= CYCLE_LOG_CHARS characters; None without a loop
    repeats: int  # full copies of the unit inside the examined tail (0 without a loop)
    tail_coverage: float  # share of the examined (normalised) tail covered by the copies (0.0 without a loop)
    length_chars: int  # len(text) as given (0 for non-str input)
    length_tokens: int | None  # n_tokens when valid, else None
    runs_to_end: bool = False  # the loop reaches the very end of the text (no escape after it)
    hit_token_limit: bool | None = None  # n_tokens reached the limit (within token_slack); None when unknown

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready dict for the sample log (tail_coverage rounded to 4 decimals)."""
        return {
            "loop": self.loop,
            "truncated": self.truncated,
            "cycle": self.cycle,
            "repeats": self.repeats,
            "tail_coverage": round(self.tail_coverage, 4),
            "length_chars": self.length_chars,
            "length_tokens": self.length_tokens,
            "runs_to_end": self.runs_to_end,
            "hit_token_limit": self.hit_token_limit,
        }


def token_slack(max_new_tokens: int) -> int:
    """How many tokens short of ``max_new_tokens`` still count as hitting the limit: max(1, 0.5%)."""
    return max(1, max_new_tokens // 200)


def check_response(
    text: object,
    *,
    n_tokens: int | None = None,
    max_new_tokens: int | None = None,
    answered: bool | None = None,
) -> LoopCheck:
    """Loop and truncation verdict for one response (see the module docstring)."""
    tokens = _count(n_tokens, minimum=0)
    limit = _count(max_new_tokens, minimum=1)
    length = len(text) if isinstance(text, str) else 0
    if not isinstance(text, str) or text.startswith(REQUEST_FAILED_PREFIX):
        return LoopCheck(False, False, None, 0, 0.0, length, tokens)
    hit = None if tokens is None or limit is None else tokens >= limit - token_slack(limit)
    window = _normalise(text[-RAW_TAIL_CHARS:])[-TAIL_CHARS:]
    if not window:
        return LoopCheck(False, False, None, 0, 0.0, length, tokens, hit_token_limit=hit)
    found = _find_loop(window)
    was_answered = bool(answered) if answered is not None else False
    if found is None:
        truncated = bool(hit) and not was_answered
        return LoopCheck(False, truncated, None, 0, 0.0, length, tokens, hit_token_limit=hit)
    cycle, repeats, coverage, runs_to_end = found
    truncated = (runs_to_end if hit is None else hit) and not was_answered
    return LoopCheck(True, truncated, cycle, repeats, coverage, length, tokens, runs_to_end, hit)


def aggregate(checks: Iterable[LoopCheck | Mapping[str, object]]) -> dict[str, float | int]:
    """``{"n", "loop_rate", "truncation_rate"}`` over LoopChecks or their ``as_dict`` forms (missing keys: False)."""
    n = loops = truncations = 0
    for check in checks:
        n += 1
        if isinstance(check, LoopCheck):
            loops += check.loop
            truncations += check.truncated
        else:
            loops += bool(check.get("loop"))
            truncations += bool(check.get("truncated"))
    if n == 0:
        return {"n": 0, "loop_rate": 0.0, "truncation_rate": 0.0}
    return {"n": n, "loop_rate": loops / n, "truncation_rate": truncations / n}


def _count(value: object, *, minimum: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        return None
    return value


def _normalise(raw: str) -> str:
    collapsed = _NEWLINE_RUN.sub("\n", _HSPACE_RUN.sub(" ", raw))
    return collapsed.strip().casefold()


def _find_loop(window: str) -> tuple[str, int, float, bool] | None:
    """(cycle, repeats, coverage, runs_to_end) of the qualifying loop at or just before the end of ``window``.

    Periods are measured on ``flat`` (line breaks as spaces, same length and positions as ``window``), so a cycle
    whose copies are separated now by a space, now by a line break is one cycle; line breaks only mark cut points.
    """
    total = len(window)
    flat = window.replace("\n", " ")
    hit = _periodic_suffix(flat, total)
    if hit is not None:
        return _describe(flat, total, *hit, runs_to_end=True)
    tried = {total}
    for cut in _escape_cuts(window):
        end = len(flat[:cut].rstrip())
        if end in tried:
            continue
        tried.add(end)
        hit = _periodic_suffix(flat[:end], total)
        if hit is not None:
            return _describe(flat, total, *hit, runs_to_end=False, end=end)
    return None


def _periodic_suffix(segment: str, total: int) -> tuple[int, int] | None:
    """(span, period) of the longest suffix of ``segment`` with >= MIN_REPEATS copies, if it passes the thresholds.

    ``border[i]`` is the failure function of the reversed segment: the longest proper border of its first i + 1
    characters, i.e. of the suffix of ``segment`` of length i + 1, whose shortest period is then i + 1 - border[i].
    """
    size = len(segment)
    shortest = max(MIN_SPAN_CHARS, math.ceil(MIN_COVERAGE * total))
    if size < shortest:
        return None
    # Quick necessary test (one C-level search): a suffix of length >= ``shortest`` with period p <= shortest / 3
    # repeats its last PROBE_CHARS characters p characters earlier, i.e. inside the last ``shortest`` characters.
    probe = segment[-_PROBE_CHARS:]
    if segment.rfind(probe, size - shortest, size - 1) < 0:
        return None
    rev = segment[::-1]
    border = [0] * size
    k = 0
    for i in range(1, size):
        char = rev[i]
        while k and rev[k] != char:
            k = border[k - 1]
        if rev[k] == char:
            k += 1
        border[i] = k
    for span in range(size, shortest - 1, -1):
        period = span - border[span - 1]
        if span >= MIN_REPEATS * period:
            return span, period
    return None


def _after(unit: str, index: int, marks: frozenset[str]) -> bool:
    """Whether ``unit[index]`` (read cyclically) follows a mark, directly or after one space."""
    before = unit[index - 1]
    return before in marks or (before == " " and unit[index - 2] in marks)


def _escape_cuts(window: str) -> list[int]:
    """Cut points within the last ESCAPE_CHARS: before a line break or "<", after a terminator; nearest first."""
    cuts: list[int] = []
    for index in range(len(window) - 1, max(0, len(window) - ESCAPE_CHARS) - 1, -1):
        char = window[index]
        before = window[index - 1] if index else ""
        if char in "\n<" or (before in _TERMINATORS and char not in _TERMINATORS):
            cuts.append(index)
            if len(cuts) == MAX_ESCAPE_CUTS:
                break
    return cuts


def _describe(
    window: str, total: int, span: int, period: int, *, runs_to_end: bool, end: int | None = None
) -> tuple[str, int, float, bool]:
    stop = total if end is None else end
    unit = window[stop - span : stop - span + period]
    # The last copy's trailing separator was stripped by normalisation (or the escape cut): count that copy.
    stripped = 1 if unit[span % period] in " \n" else 0
    return _readable(unit), (span + stripped) // period, span / total, runs_to_end


def _readable(unit: str) -> str:
    """The unit rotated to its first sentence start (else word start), stripped and shortened.

    ``unit`` is the first copy of the cycle, so offset 0 is where the loop began; it is kept when it is a sentence
    start (the cyclically preceding character, i.e. the end of the previous copy, is a terminator, possibly followed
    by a space).  Otherwise the first such offset is used, else the first word start, else 0 (CJK without
    punctuation).
    """
    size = len(unit)
    if size > 1:
        start = next((j for j in range(size) if unit[j] != " " and _after(unit, j, _TERMINATORS)), None)
        if start is None:
            start = next((j for j in range(size) if unit[j] != " " and unit[j - 1] == " "), 0)
        unit = unit[start:] + unit[:start]
    shown = unit.strip() or unit
    if len(shown) > CYCLE_LOG_CHARS:
        shown = shown[: CYCLE_LOG_CHARS - 1] + "…"
    return shown
