"""The project's multiple-choice answer extractor (the strict rules every MCQ benchmark shares).

Owns: turning a model response into one option letter (or an explicit "no answer"), the name of the
rule that decided, the reason when there is no answer, and the "Confidence: N%" clause parser.
Pure standard library; nothing here depends on lmms-eval, and nothing is ever chosen at random.

Benchmark runners' own parsers, reproduced for paper parity, live in their benchmark's folder (RoboVista:
tasks/robovista/parity.py).

Letters are positional (option 0 -> "A"); a question has 2..10 options (A..B up to A..J). Options may
be given as texts (empty/None entries keep their letter, and such letters stay valid) or as a count. A letter
outside the question's range is never a candidate and never returned.

Normalisation: non-str -> no answer ("empty"); text starting with REQUEST_FAILED_PREFIX -> no answer
("request_failed"); keep only the text after the FIRST ``</think>`` (case-insensitive), or, if nothing follows
it, the text before it (the model answered inside its thinking; the rules are conservative), with stray
``<think>``/``</think>`` markers removed (`adapters.text.answer_text`); remove the confidence clause
(split_confidence); collapse whitespace runs to one space and strip; nothing left -> no answer ("empty").

RULE ORDER (original case; the first rule that yields exactly one valid letter wins):
  1 declaration   "answer: C", "Answer: (C)", "final answer is **C**", "the correct option is (b)",
                  "I choose C".  Keywords ignore case and so does the letter, except that a/A followed
                  by a space and a lower-case word is the article ("the answer is a grasp ...") and
                  i/I so followed is the pronoun.  Several declarations -> the LAST one counts (models
                  correct themselves); if that one is out of range or a list ("B or C", "B/C",
                  "A, B, or C") the rule yields nothing.
  2 is_correct    "C is the correct/right/best answer/option/choice" (last one counts).
  3 bare_label    the whole response is a label: "C", "(C)", "[C]", "C.", "**C**", "c", "Option C".
  4 leading_label the response starts with a letter followed by ".", ")" or ":" ("C. Move left",
                  "(C) ...", "C: <text>"); "A red cup ..." has no punctuation, so it is the article.
  5 option_text   (option texts given) the case-folded, punctuation-free response equals exactly one
                  option text, else contains exactly one option text on word boundaries; a match lying
                  wholly inside a longer matching option is dropped in its favour.  A contained (not
                  equal) match is skipped when the response also names a different candidate letter.
  6 last_letter   the last token (trailing punctuation/emphasis stripped) is an upper-case standalone
                  valid letter: "... so the best pick is D."  A list at the end ("B or C", "B/C",
                  "B and C", "A, B, C") is ambiguous; "not D" is no answer.
  7 unique_letter exactly one distinct upper-case standalone valid letter in the text (a sentence-initial
                  "A" before a lower-case word is the article; "I" before a lower-case word is the pronoun;
                  a letter right after "not" / "not option" is rejected, not chosen).
Otherwise no answer: reason "ambiguous" when some rule saw two or more letters, else "no_match".
In both the article and the pronoun test, a following function word ("A because ...", "A and C",
"A is ...") does not make the letter a word: no article or pronoun precedes those.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lmms_agentic.adapters.text import answer_text

__all__ = [
    "REQUEST_FAILED_PREFIX",
    "STRICT_RULES",
    "Extraction",
    "extract_choice",
    "option_letters",
    "split_confidence",
]

REQUEST_FAILED_PREFIX = "[LMMS_EVAL_REQUEST_FAILED"
STRICT_RULES = (
    "declaration", "is_correct", "bare_label", "leading_label", "option_text", "last_letter", "unique_letter",
)
_ALL_LETTERS = "ABCDEFGHIJ"
_AMBIGUOUS = "?"  # internal: a rule saw two or more different letters


@dataclass(frozen=True)
class Extraction:
    """Result of extract_choice: ``letter`` (upper case) or None, the deciding ``rule`` (or "none"),
    and ``reason`` ("empty", "request_failed", "ambiguous", "no_match") when letter is None."""

    letter: str | None
    rule: str
    reason: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        """Plain dict for sample logs."""
        return {"letter": self.letter, "rule": self.rule, "reason": self.reason}


def option_letters(n_options: int) -> str:
    """Valid letters of a question with ``n_options`` options: "ABCD" for 4; 2..10 options only."""
    if isinstance(n_options, bool) or not isinstance(n_options, int) or not 2 <= n_options <= 10:
        raise ValueError(f"a question needs 2..10 options, got {n_options!r}")
    return _ALL_LETTERS[:n_options]


_CONFIDENCE = re.compile(
    r"[*_]*\bconfidence(?:\s+(?:level|score))?[\s*_]*[:=]?[\s*_]*(\d+(?:\.\d+)?)\s*%?[*_]*", re.IGNORECASE
)


def split_confidence(text: str) -> tuple[str, float | None]:
    """Remove a 'Confidence: N%' clause (case-insensitive, N int or decimal, optional %), return
    (text without it, N/100 clipped to [0,1]) or (text, None) when absent. Used so the confidence
    number can never feed the letter rules.  Every such clause is removed; the last one gives the
    value.  N is always read as a percentage ("Confidence: 0.9" -> 0.009)."""
    matches = list(_CONFIDENCE.finditer(text))
    if not matches:
        return text, None
    value = min(1.0, max(0.0, float(matches[-1].group(1)) / 100.0))
    return _CONFIDENCE.sub(" ", text).strip(), value


# ---------------------------------------------------------------- normalisation
_WS = re.compile(r"\s+")


def _normalise(response: object) -> str | Extraction:
    if not isinstance(response, str):
        return Extraction(None, "none", "empty")
    if response.lstrip().startswith(REQUEST_FAILED_PREFIX):
        return Extraction(None, "none", "request_failed")
    text = answer_text(response, fallback_to_thinking=True)
    text = _WS.sub(" ", split_confidence(text)[0]).strip()
    return text if text else Extraction(None, "none", "empty")


# ---------------------------------------------------------------- strict mode
# Words that never follow an article or the pronoun "I": "A because", "A and C", "A is ...".
_FUNCTION_WORDS = frozenset({
    "and", "or", "nor", "but", "because", "since", "as", "is", "are", "so", "which", "that", "if", "when",
    "while", "though", "although", "whereas", "given", "due", "vs", "versus", "in", "on", "at", "to", "of",
    "from", "by", "with", "seems", "appears", "fits", "matches", "looks",
})
_NEXT_WORD = re.compile(r"\s+([a-z][a-z'’-]*)")
_OPEN = r"[\s*_`\"'“”‘’(\[{]*"  # emphasis, quotes and opening brackets before a letter
_AFTER_LETTER = r"(?![A-Za-z0-9_'’]|-[A-Za-z0-9]|\.[A-Za-z]\.)"  # standalone; not "e.g." / "i.e."
_DECLARATION = re.compile(
    r"(?:(?:\banswers?|\b(?:final|correct|right|best|proper|chosen|selected|my)\s+(?:option|choice))"
    r"[\s*_`]*(?:(?:is|would\s+be|should\s+be|will\s+be|must\s+be)\b[\s*_`]*:?|[:=])"
    r"|\bI(?:\s+would|\s+will|'d|’d|'ll|’ll)?\s+(?:choose|pick|select|go\s+with)\b)"
    rf"{_OPEN}(?:(?:option|choice|letter)\s+)?{_OPEN}(?P<letter>[A-Za-z]){_AFTER_LETTER}",
    re.IGNORECASE,
)
_ALTERNATIVE = re.compile(  # "B or C", "B/C", "A, B, or C" right after a declared letter
    r"[)\]}*_`\"'”’]*(?:(?:\s+or\s+|\s*/\s*)" + _OPEN + r"[A-Za-z]|\s*,\s*(?:or\s+|and\s+)?"
    + _OPEN + r"(?-i:[A-Z]))(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_IS_CORRECT = re.compile(
    r"(?<![A-Za-z0-9_'’])[(\[{*_`\"'“”]*(?P<letter>[A-Za-z])[)\]}*_`\"'“”]*\s+is\s+"
    r"(?:(?:the|indeed|clearly|definitely)\s+)*"
    r"(?:correct|right|best|most\s+(?:appropriate|suitable|likely|accurate|reasonable))\s+"
    r"(?:answer|option|choice)\b",
    re.IGNORECASE,
)
_BARE = re.compile(
    r"^[\s*_`\"'“”]*(?:(?:option|choice|answer|letter)\s*[:.]?\s*)?[\s*_`\"'“”(\[{]*(?P<letter>[A-Za-z])"
    r"[\s*_`\"'“”)\]}.!:;,]*$",
    re.IGNORECASE,
)
_LEADING = re.compile(
    r"^[\s*_`\"'“”]*(?:(?:option|choice)\s+)?[(\[{]?[*_`]*(?P<letter>[A-Za-z])[*_`]*[.):\]}](?![A-Za-z]\.)",
    re.IGNORECASE,
)
_TRAILING_JUNK = re.compile(r"[\s.!?,;:)\]}*_`\"'”’]+$")
_TRAILING = re.compile(r"(?:^|(?<=[\s(\[{*_`\"'“‘:,;/=]))(?P<letter>[A-Z])$")
_OR_BEFORE = re.compile(  # "B or C", "B, or C", "B and C", "B/C", "A, B, C" ending the text
    r"(?:(?<![A-Za-z0-9])[A-Za-z][)\]}*_`]*(?:,?\s+(?:or|and)\s+|\s*/\s*)"
    r"|(?<![A-Za-z0-9])[A-Z][)\]}*_`]*\s*,\s*)[(\[{*_`]*$"
)
_NOT_BEFORE = re.compile(r"\bnot\s+(?:option\s+)?[(\[{*_`]*$", re.IGNORECASE)
_ISOLATED = re.compile(r"(?<![A-Za-z0-9_'’.-])(?P<letter>[A-Z])(?![A-Za-z0-9_'’]|-[A-Za-z0-9]|\.[A-Za-z])")
_SENTENCE_END = re.compile(r"(?:^|[.!?:;])[\s*_`\"'“”(\[{]*$")
_NON_WORD = re.compile(r"[^\w\s]|_")


def _is_word(letter: str, after: str) -> bool:
    """a/A (article) or i/I (pronoun) directly followed by a lower-case non-function word."""
    if letter not in "aAiI":
        return False
    m = _NEXT_WORD.match(after)
    return m is not None and m.group(1) not in _FUNCTION_WORDS


def _in_range(letter: str, letters: str) -> str | None:
    return letter.upper() if letter.upper() in letters else None


def _declaration(text: str, letters: str) -> str | None:
    last: str | None = None
    for m in _DECLARATION.finditer(text):
        letter = m.group("letter")
        if _is_word(letter, text[m.end():]):
            continue
        last = _AMBIGUOUS if _ALTERNATIVE.match(text, m.end()) else letter
    return last if last in (None, _AMBIGUOUS) else _in_range(last, letters)


def _is_correct(text: str, letters: str) -> str | None:
    found = [m.group("letter") for m in _IS_CORRECT.finditer(text)]
    return _in_range(found[-1], letters) if found else None


def _bare_label(text: str, letters: str) -> str | None:
    m = _BARE.match(text)
    return _in_range(m.group("letter"), letters) if m else None


def _leading_label(text: str, letters: str) -> str | None:
    m = _LEADING.match(text)
    return _in_range(m.group("letter"), letters) if m else None


def _candidates(text: str, letters: str) -> set[str]:
    """Distinct upper-case standalone valid letters, without the article "A", the pronoun "I" and "not X"."""
    found: set[str] = set()
    for m in _ISOLATED.finditer(text):
        letter = m.group("letter")
        if letter not in letters or (letter == "I" and _is_word(letter, text[m.end():])):
            continue
        if letter == "A" and _is_word(letter, text[m.end():]) and _SENTENCE_END.search(text, 0, m.start()):
            continue
        if _NOT_BEFORE.search(text, 0, m.start()):  # "not D" names a rejected option
            continue
        found.add(letter)
    return found


def _norm(s: str) -> str:
    return " ".join(_NON_WORD.sub(" ", s.casefold()).split())


def _option_text(text: str, letters: str, texts: Sequence[str | None]) -> str | None:
    response = _norm(text)
    options = [(letters[i], _norm(t or "")) for i, t in enumerate(texts)]
    options = [(letter, o) for letter, o in options if o]
    exact = [letter for letter, o in options if o == response]
    if exact:
        return exact[0] if len(exact) == 1 else _AMBIGUOUS
    padded = f" {response} "
    spans: dict[str, list[tuple[int, int]]] = {}
    for letter, o in options:
        if len(o) < 2 and o.isalpha():  # a single letter as option text says nothing as content
            continue
        starts = [m.start() for m in re.finditer(re.escape(f" {o} "), padded)]
        if starts:
            spans[letter] = [(s, s + len(o) + 2) for s in starts]

    def covered(letter: str, span: tuple[int, int]) -> bool:
        return any(
            other != letter and s <= span[0] and span[1] <= e and e - s > span[1] - span[0]
            for other, others in spans.items()
            for s, e in others
        )

    uncovered = [letter for letter, ss in spans.items() if not all(covered(letter, sp) for sp in ss)]
    if len(uncovered) != 1:
        return _AMBIGUOUS if uncovered else None
    if _candidates(text, letters) - {uncovered[0]}:
        return None  # the response also names another letter: let the letter rules decide
    return uncovered[0]


def _last_letter(text: str, letters: str) -> str | None:
    body = _TRAILING_JUNK.sub("", text)
    m = _TRAILING.search(body)
    if m is None or m.group("letter") not in letters:
        return None
    if _OR_BEFORE.search(body, 0, m.start()):
        return _AMBIGUOUS  # "B or C", "B/C", "B and C"
    return None if _NOT_BEFORE.search(body, 0, m.start()) else m.group("letter")


def _unique_letter(text: str, letters: str) -> str | None:
    found = _candidates(text, letters)
    if len(found) > 1:
        return _AMBIGUOUS
    return found.pop() if found else None


def _strict(text: str, letters: str, texts: Sequence[str | None] | None) -> Extraction:
    rules: list[tuple[str, Callable[[str, str], str | None]]] = [
        ("declaration", _declaration),
        ("is_correct", _is_correct),
        ("bare_label", _bare_label),
        ("leading_label", _leading_label),
    ]
    if texts is not None:
        rules.append(("option_text", lambda t, ls: _option_text(t, ls, texts)))
    rules += [("last_letter", _last_letter), ("unique_letter", _unique_letter)]
    ambiguous = False
    for name, rule in rules:
        letter = rule(text, letters)
        if letter == _AMBIGUOUS:
            ambiguous = True
        elif letter is not None:
            return Extraction(letter, name)
    return Extraction(None, "none", "ambiguous" if ambiguous else "no_match")


# ---------------------------------------------------------------- entry point
def extract_choice(response: object, options: Sequence[str | None] | int) -> Extraction:
    """Extract the chosen option letter from ``response`` (see the module docstring for the rules).

    ``options``: the option texts in display order (letters are positional; None/"" entries keep their
    letter) or just the number of options."""
    if isinstance(options, str):
        raise TypeError("options must be a sequence of option texts or a count, not a str")
    if isinstance(options, int):
        letters, texts = option_letters(options), None
    else:
        letters, texts = option_letters(len(options)), list(options)
    text = _normalise(response)
    if isinstance(text, Extraction):
        return text
    return _strict(text, letters, texts)
