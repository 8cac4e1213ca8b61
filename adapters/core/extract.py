"""The project's multiple-choice answer extractor (the strict rules every MCQ benchmark shares).

Owns: turning a model response into one option letter (or an explicit "no answer"), the name of the
rule that decided, the reason when there is no answer, and the "Confidence: N%" clause parser.
Pure standard library; nothing here depends on lmms-eval, and nothing is ever chosen at random.

Benchmark runners' own parsers, reproduced for paper parity, live in their benchmark's folder
(RoboVista's `tasks/robovista/core/parity.py`).

Letters are positional (option 0 -> "A"); a question has 2..10 options (A..B up to A..J). Options may
be given as texts (empty/None entries keep their letter, and such letters stay valid) or as a count. A letter
outside the question's range is never a candidate and never returned.

Normalisation: non-str -> no answer ("empty"); text starting with REQUEST_FAILED_PREFIX -> no answer
("request_failed"); keep only the text after the FIRST ``</think>`` (case-insensitive), or, if nothing follows
it, the text before it (the model answered inside its thinking; the rules are conservative), with stray
``<think>``/``</think>`` markers removed (`adapters.core.text.answer_text`); remove the confidence clause
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

COST.  Every call is linear in the response length and reads the whole response (there is no scan window):
patterns start at a literal word or a character class that the regex engine finds in C, runs of emphasis, quotes
or brackets are taken whole where a following part could take the same characters (an atomic group written
``(?=(?P<n>X*))(?P=n)``, which Python 3.10 also understands), nothing searches "before a position" from the start
of the text (what a rule needs before a position is read on the reversed text, where rule 7 also finds a letter's
first occurrence that is not rejected in one scan).  Case-insensitive words are matched on the text with its ASCII
letters lowered and İ ı ſ K replaced by the ASCII letters IGNORECASE equates them with, so every rule matches exactly
what it matched with re.IGNORECASE (tests/adapters/test_parser_properties.py checks each fast path against the rule's
plain definition; tests/adapters/test_extract_speed_identity.py the shortcuts on UTF-8 bytes, where a text with one
non-ASCII letter takes half the memory, and those that skip a scan str.find rules out).  Measured on CPython 3.11, 2
cores (perf/parsers.py, 48 inputs of 1 MB): median ~10 ms; the worst, 25-32 ms, are loops built to defeat it
("Answer: a cup. " repeated: 66,000 article declarations, read in one scan per keyword) and chain-of-thought prose
with curly quotes, each also with one non-ASCII letter.  The version before the linear rewrite took 84 s for 40,000
"*" and a digit and 250 s for 1 MB of prose.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from heapq import merge
from itertools import chain, islice

from lmms_agentic.adapters.core.text import REQUEST_FAILED_PREFIX, answer_text

__all__ = [
    "REQUEST_FAILED_PREFIX",
    "STRICT_RULES",
    "Extraction",
    "extract_choice",
    "option_letters",
    "split_confidence",
]

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


# ---------------------------------------------------------------- pattern helpers
# re.IGNORECASE also matches these non-ASCII characters to ASCII letters (checked over all code points in
# tests/adapters/test_parser_properties.py): İ ı -> i, K (Kelvin) -> k, ſ -> s.
_FOLDS = {"i": "iIıİ", "k": "kKK", "s": "sSſ"}
_LETTER = "A-Za-zİıKſ"  # what [A-Za-z] matches under re.IGNORECASE
_WORDCHAR = "A-Za-z0-9_'’İıKſ"  # [A-Za-z0-9_'’] under re.IGNORECASE
# With its ASCII letters lowered and each of İ ı ſ K replaced by the ASCII letter IGNORECASE equates it with (_Text.low:
# positions are kept), a text is matched by a case-sensitive lower-case pattern (of ASCII words, and classes that
# list those four characters or none of them, checked over all code points) exactly where the IGNORECASE pattern
# matches the text.  So the rules start at literal words, which the regex engine finds in C.
_ASCII_EQUIVALENTS = {"İ": "i", "ı": "i", "ſ": "s", "K": "k"}
# Whitespace (str.isspace, equal to re's \s): the ASCII characters, and the others as UTF-8 byte sequences.
_ASCII_SPACES = str.maketrans({chr(c): " " for c in range(128) if chr(c).isspace()})
_ASCII_SPACE_BYTES = bytes(32 if c < 128 and chr(c).isspace() else c for c in range(256))
_NON_ASCII_SPACES = tuple(chr(c) for c in range(128, 0x3001) if chr(c).isspace())
_NON_ASCII_SPACE_LEADS = tuple(sorted({space.encode()[:1] for space in _NON_ASCII_SPACES}))  # (first UTF-8 bytes)
_SPACE_RUN = re.compile("  +")


def _ci(word: str, space: str = r"\s+") -> str:
    """``word`` as a case-sensitive pattern matching what it matched under re.IGNORECASE; spaces -> ``space``."""
    parts = []
    for char in word:
        if char == " ":
            parts.append(space)
        elif char.isalpha():
            parts.append("[" + _FOLDS.get(char, char + char.upper()) + "]")
        else:
            parts.append(re.escape(char))
    return "".join(parts)


def _alt(*words: str) -> str:
    return "(?:" + "|".join(_ci(w) for w in words) + ")"


def _atomic(name: str, body: str) -> str:
    """``body`` matched once and never given back (an atomic group that Python 3.10 also understands)."""
    return f"(?=(?P<{name}>{body}))(?P={name})"


def _collapse(text: str, spaced: bool = False) -> str:
    """``" ".join(text.split())`` without building a list of words; ``spaced``: " " is the only whitespace."""
    if spaced:
        pass
    elif text.isascii():
        text = text.translate(_ASCII_SPACES)
    else:  # ASCII whitespace on the UTF-8 bytes, then each non-ASCII whitespace character present (all in C; without
        # any of their first bytes, found by memchr, none is)
        data = _utf8(text).translate(_ASCII_SPACE_BYTES)
        text = data.decode("utf-8", "surrogatepass")
        if any(map(data.__contains__, _NON_ASCII_SPACE_LEADS)):
            for space in _NON_ASCII_SPACES:
                if space in text:
                    text = text.replace(space, " ")
    if "  " in text:  # (one scan for every run; str.replace takes one per halving of the longest)
        text = _SPACE_RUN.sub(" ", text)
    return text.strip(" ")


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


# ---------------------------------------------------------------- confidence clause
# The original rule, one pattern (IGNORECASE):
#   [*_]*\bconfidence(?:\s+(?:level|score))?[\s*_]*[:=]?[\s*_]*(\d+(?:\.\d+)?)\s*%?[*_]*
# Here the pattern starts at the keyword (its two [\s*_]* runs atomic) and the leading run of "*"/"_" that the
# original's match began with is stripped from the text before each clause: that run always lies after the previous
# clause (which ends with every "*"/"_" that follows it), so the removed spans are the original's.
_CONFIDENCE = re.compile(
    r"[cC](?<!\w.)" + _ci("onfidence") + r"(?:\s+" + _alt("level", "score") + r")?"
    + _atomic("r1", r"[\s*_]*") + r"[:=]?" + _atomic("r2", r"[\s*_]*")
    + r"(?P<value>\d+(?:\.\d+)?)\s*%?[*_]*"
)
_LOWER_QUERY_AS_I = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ?", b"abcdefghijklmnopqrstuvwxyzi")
_CONFIDENCE_STRIDE = _CONFIDENCE.groups + 1
_CONFIDENCE_VALUE = _CONFIDENCE.groupindex["value"]


def split_confidence(text: str) -> tuple[str, float | None]:
    """Remove a 'Confidence: N%' clause (case-insensitive, N int or decimal, optional %), return
    (text without it, N/100 clipped to [0,1]) or (text, None) when absent. Used so the confidence
    number can never feed the letter rules.  Every such clause is removed; the last one gives the
    value.  N is always read as a percentage ("Confidence: 0.9" -> 0.009)."""
    if text.isascii():
        if "confidence" not in text.lower():
            return text, None
    elif b"confidence" not in text.encode("ascii", "replace").translate(_LOWER_QUERY_AS_I):
        return text, None  # (each non-ASCII character as "?", then "i": the "i" may be ı or İ, read by IGNORECASE as i)
    parts = _CONFIDENCE.split(text)
    if len(parts) == 1:
        return text, None
    value = min(1.0, max(0.0, float(parts[_CONFIDENCE_VALUE - _CONFIDENCE_STRIDE - 1]) / 100.0))
    pieces = parts[::_CONFIDENCE_STRIDE]
    kept = [piece.rstrip("*_") for piece in pieces[:-1]]
    kept.append(pieces[-1])
    return " ".join(kept).strip(), value


# ---------------------------------------------------------------- normalisation
_FAILED = re.compile(r"\s*" + re.escape(REQUEST_FAILED_PREFIX))


def _normalise(response: object) -> str | Extraction:
    if not isinstance(response, str):
        return Extraction(None, "none", "empty")
    if _FAILED.match(response):
        return Extraction(None, "none", "request_failed")
    text = answer_text(response, fallback_to_thinking=True)
    text = _collapse(split_confidence(text)[0])
    return text if text else Extraction(None, "none", "empty")


# ---------------------------------------------------------------- strict mode
# The rules below run on the normalised text: no whitespace but single spaces, none at either end.
# Words that never follow an article or the pronoun "I": "A because", "A and C", "A is ...".
_FUNCTION_WORDS = frozenset({
    "and", "or", "nor", "but", "because", "since", "as", "is", "are", "so", "which", "that", "if", "when",
    "while", "though", "although", "whereas", "given", "due", "vs", "versus", "in", "on", "at", "to", "of",
    "from", "by", "with", "seems", "appears", "fits", "matches", "looks",
})


def _by_first_letter(words: Iterable[str]) -> str:
    """An alternation of ``words`` grouped by first letter (the engine tries one group, not every word, at a
    position: a third faster where the article test runs once per declaration)."""
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[0], []).append(word[1:])
    return "(?:" + "|".join(
        first + "(?:" + "|".join(sorted(rests)) + ")" for first, rests in sorted(groups.items())
    ) + ")"


# "a lower-case word that is not a function word follows" (the article / pronoun test; case-sensitive)
_WORD_NEXT = r"\s+(?!" + _by_first_letter(_FUNCTION_WORDS) + r"(?![a-z'’-]))[a-z]"
_WORD_FOLLOWS = re.compile(_WORD_NEXT)
_OPEN = r"[\s*_`\"'“”‘’(\[{]"  # emphasis, quotes and opening brackets before a letter
_AFTER_LETTER = rf"(?![{_WORDCHAR}]|-[A-Za-z0-9İıKſ]|\.[{_LETTER}]\.)"  # standalone; not "e.g." / "i.e."
# "B or C", "B/C", "A, B, or C" right after a declared letter (case-insensitive except the comma list's letters)
_ALTERNATIVE = re.compile(
    r"[)\]}*_`\"'”’]*(?:(?:\s+" + _ci("or") + r"\s+|\s*/\s*)" + _OPEN + rf"*[{_LETTER}]|\s*,\s*(?:"
    + _ci("or") + r"\s+|" + _ci("and") + r"\s+)?" + _OPEN + r"*[A-Z])(?![A-Za-z0-9İıKſ])"
)

# Rule 1.  The original (IGNORECASE):
#   (?:(?:\banswers?|\b(?:final|correct|right|best|proper|chosen|selected|my)\s+(?:option|choice))
#      [\s*_`]*(?:(?:is|would\s+be|should\s+be|will\s+be|must\s+be)\b[\s*_`]*:?|[:=])
#    |\bI(?:\s+would|\s+will|'d|’d|'ll|’ll)?\s+(?:choose|pick|select|go\s+with)\b)
#   OPEN*(?:(?:option|choice|letter)\s+)?OPEN*(?P<letter>[A-Za-z])AFTER_LETTER
# and every match of it in order (finditer): the LAST one that is not the article "a" / pronoun "I" counts.  In both
# versions below, the run after the verb and the first OPEN run are atomic (giving characters back could only hand
# them to the next run of the same class).
_KEYWORDS_2 = ("final", "correct", "right", "best", "proper", "chosen", "selected", "my")
_DECL_TAIL = (
    _atomic("o1", _OPEN + "*") + r"(?:" + _alt("option", "choice", "letter") + r"\s+)?" + _OPEN
    + rf"*(?P<letter>[{_LETTER}]){_AFTER_LETTER}"
)
_DECL_VERB = (
    r"[\s*_`]*(?:" + _alt("is", "would be", "should be", "will be", "must be") + r"\b"
    + _atomic("r2", r"[\s*_`]*") + r":?|[:=])"
)
# (a) the whole rule as one pattern, read only where the matches of (b) overlap (_declaration_ends): its first
# character is a class (the engine skips to it); the keyword's leading \b is the lookbehind after that character.
_DECLARATION = re.compile(
    r"[aAfFcCrRbBpPsSſmMiIıİ](?<!\w.)(?:(?:(?<=[aA])" + _ci("nswer") + r"[sSſ]?"
    + "".join(rf"|(?<=[{_FOLDS.get(w[0], w[0] + w[0].upper())}]){_ci(w[1:])}\s+" + _alt("option", "choice")
              for w in _KEYWORDS_2)
    + r")" + _DECL_VERB
    + r"|(?<=[iIıİ])(?:\s+" + _ci("would") + r"|\s+" + _ci("will") + r"|['’]" + _ci("d") + r"|['’]" + _ci("ll")
    + r")?\s+" + _alt("choose", "pick", "select", "go with") + r"\b)" + _DECL_TAIL
)
# (b) on the lowered text (_Text.low): one pattern per literal that every match holds, the literal first (the engine
# finds it in C), what precedes it as fixed-width lookbehinds (the normalised text has single spaces); empty groups,
# numbered first, say which lookbehind held, i.e. where the match really starts.  The letter is a match's last
# character.  The original's left-to-right, non-overlapping order is rebuilt from all matches (_declaration).
_DECL_VERB_LOW = r"[ *_`]*(?:(?:is|would be|should be|will be|must be)\b" + _atomic("r2", "[ *_`]*") + r":?|[:=])"
_DECL_TAIL_LOW = (
    _atomic("o1", _OPEN + "*") + r"(?:(?:option|choice|letter) )?" + _OPEN + rf"*[{_LETTER}]{_AFTER_LETTER}"
)


def _lookbehinds(
    literal: str, prefixes: Sequence[str], spell: Callable[[str], str] = re.escape
) -> tuple[str, tuple[int, ...]]:
    """Alternatives "the literal follows <prefix>, which starts a word" (one empty group per prefix length) and the
    prefix length of each group; ``spell`` writes a prefix and the literal as a pattern of the same width."""
    by_length: dict[int, list[str]] = {}
    for prefix in prefixes:
        by_length.setdefault(len(prefix), []).append(spell(prefix + literal))
    lengths = tuple(sorted(by_length, reverse=True))
    return "(?:" + "|".join(rf"(?<=(?<!\w)(?:{'|'.join(by_length[n])}))()" for n in lengths) + ")", lengths


def _keyword_declaration(
    literal: str, spell: Callable[[str], str], verb: str, tail: str, start: str | None = None
) -> tuple[re.Pattern[str], tuple[int, ...]]:
    """The declaration that starts with the keyword ``literal`` ("answer", or "option" / "choice" after one of
    _KEYWORDS_2), its words written by ``spell``, then ``verb`` and ``tail``; and its lookbehinds' prefix lengths.
    ``start``: how the keyword itself is written (by default, by ``spell``)."""
    start = spell(literal) if start is None else start
    if literal == "answer":
        return re.compile(start + r"(?<!\w.{6})" + spell("s") + "?" + verb + tail), ()
    behind, lengths = _lookbehinds(literal, [keyword + " " for keyword in _KEYWORDS_2], spell)
    return re.compile(start + behind + verb + tail), lengths


_DECLARATION_LITERALS = ("answer", "option", "choice", "i")
_FIRST_I_PATTERN = 3  # this pattern starts at "I", which may be the letter of the declaration before
_BACKWARD_STEPS = 32
_DECLARATIONS_LOW = (
    *(_keyword_declaration(literal, re.escape, _DECL_VERB_LOW, _DECL_TAIL_LOW)
      for literal in _DECLARATION_LITERALS[:_FIRST_I_PATTERN]),
    (re.compile(r"i(?<!\w.)(?: would| will|['’]d|['’]ll)? (?:choose|pick|select|go with)\b" + _DECL_TAIL_LOW), ()),
)
# (c) on the normalised text itself, for a text where the "I" pattern matches nowhere (its chains only a
# left-to-right scan resolves): the patterns of (b) before it, read as in (a), that also fail where the letter is the
# article "a" or the pronoun "I" (_last_declaration's test).  Without the "I" pattern no match lies inside another
# (what follows a keyword holds no keyword), so each match of these is one of the original's matches that counts,
# and the last of them decides: one scan that builds nothing per article ("Answer: a cup. " x 66,000: 35 -> 17 ms).
# Each also starts at each of its keyword's common _SPELLINGS as a literal, read where the text spells it no other way
# (_counted_matches): the engine then finds the word in C, not trying every "a" or "A" ("Answer: a cup." loop: -15%).
_NO_ARTICLE = rf"(?!(?<=[aAiI]){_WORD_NEXT})"
_SPELLINGS = (str.lower, str.capitalize, str.upper)
_DECLARATIONS_COUNTED = tuple(
    tuple(_keyword_declaration(literal, lambda words: _ci(words, space=" "), _DECL_VERB, _DECL_TAIL + _NO_ARTICLE,
                               start)[0] for start in [None, *(re.escape(spell(literal)) for spell in _SPELLINGS)])
    for literal in _DECLARATION_LITERALS[:_FIRST_I_PATTERN]
)


# Rule 2.  The original (IGNORECASE):
#   (?<![A-Za-z0-9_'’])[(\[{*_`"'“”]*(?P<letter>[A-Za-z])[)\]}*_`"'“”]*\s+is\s+
#   (?:(?:the|indeed|clearly|definitely)\s+)*(?:correct|right|best|most\s+(?:appropriate|...))\s+(?:answer|...)\b
# Its match starts in the run of opening characters before the letter wherever the lookbehind allows; what matters
# is only whether some start is allowed: never for a letter right after [A-Za-z0-9’], after "_"/"'" only when that
# run of "_"/"'" does not follow [A-Za-z0-9’] (_allowed_start), else always.  No match can hold another match's
# letter, so the matches are the same whichever way they are found, and the last one counts.
_IS_PHRASE_WORDS = (
    ("the", "indeed", "clearly", "definitely"),
    ("correct", "right", "best", "most appropriate", "most suitable", "most likely", "most accurate",
     "most reasonable"),
    ("answer", "option", "choice"),
)
_CLOSING = r"[)\]}*_`\"'“”]"
_BLOCKS = re.compile("[A-Za-z0-9’İıKſ]")  # a letter right after one of these has no allowed start
_IS_PHRASE_LOW = re.compile(  # on _Text.low: the phrase from the space before "is", found by its literal " is "
    " is (?:(?:" + "|".join(_IS_PHRASE_WORDS[0]) + ") )*(?:" + "|".join(_IS_PHRASE_WORDS[1]) + ") (?:"
    + "|".join(_IS_PHRASE_WORDS[2]) + r")\b"
)
_CLOSING_RUN = re.compile(_CLOSING + "*")
_LETTER_AT = re.compile(f"[{_LETTER}]")
_NOT_WORDCHAR = re.compile(rf"[^{_WORDCHAR}]")
# Rules 3 and 4 (IGNORECASE): "^" + _atomic("r0", _OPENING_RUN) + each pattern below, read where that run ends.
_OPENING_RUN = re.compile(r"[\s*_`\"'“”]*")
_BARE = re.compile(
    r"(?:(?:option|choice|answer|letter)" + _atomic("r1", r"\s*")
    + r"[:.]?" + _atomic("r2", r"\s*") + r")?" + _atomic("r3", r"[\s*_`\"'“”(\[{]*")
    + r"(?P<letter>[A-Za-z])[\s*_`\"'“”)\]}.!:;,]*$",
    re.IGNORECASE,
)
_LEADING = re.compile(
    r"(?:(?:option|choice)\s+)?[(\[{]?[*_`]*(?P<letter>[A-Za-z])[*_`]*[.):\]}](?![A-Za-z]\.)",
    re.IGNORECASE,
)
_TRAILING_JUNK = " .!?,;:)]}*_`\"'”’"  # (after normalisation the only whitespace is " ")
_BEFORE_TRAILING = frozenset("([{*_`\"'“‘:,;/=")
# What precedes a letter, read on the reversed text (the original patterns, reversed and anchored at the letter):
#   list:      (?:(?<![A-Za-z0-9])[A-Za-z][)\]}*_`]*(?:,?\s+(?:or|and)\s+|\s*/\s*)
#               |(?<![A-Za-z0-9])[A-Z][)\]}*_`]*\s*,\s*)[(\[{*_`]*$
#   "not":     \bnot\s+(?:option\s+)?[(\[{*_`]*$   (IGNORECASE; the normalised text's spaces are single)
#   sentence:  (?:^|[.!?:;])[\s*_`"'“”(\[{]*$
_OR_BEFORE_REVERSED = re.compile(
    r"[(\[{*_`]*(?:(?:\s+(?:ro|dna)\s+,?|\s*/\s*)[)\]}*_`]*[A-Za-z]|\s*,\s*[)\]}*_`]*[A-Z])(?![A-Za-z0-9])"
)
_NOT_REVERSED = r"[(\[{*_`]*(?: " + _ci("noitpo") + ")? " + _ci("ton") + r"(?!\w)"  # (single spaces)
_NOT_BEFORE_REVERSED = re.compile(_NOT_REVERSED)
_SENTENCE_RUN = r"[\s*_`\"'“”(\[{]*"
_SENTENCE_BEFORE_REVERSED = re.compile(_SENTENCE_RUN + r"(?:[.!?:;]|\Z)")
_ASCII_WORDS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})  # [^\w\s]|_ -> " "
_ASCII_WORD_BYTES = bytes(c if c >= 128 or chr(c).isalnum() else 32 for c in range(256))
_NON_ASCII_NON_WORD = re.compile(r"[^\x00-\x7f\w\s]+")
_NON_ASCII_NON_WORD_AT = re.compile(r"[^\x00-\x7f](?<![\w\s])")  # (the same test, found ~3x faster)
_COMMON_MARKS = tuple("’“”‘—–…")  # the commonest non-ASCII punctuation in English replies (none is \w or \s)
_ASCII_BYTE_VALUES = bytes(range(128))

# Rule 7 (and rule 5's check for another letter).  An occurrence of a valid letter L (upper case, standalone)
# counts unless it is the pronoun "I" or the sentence-initial article "A" before a lower-case non-function word, or
# follows "not" / "not option".  Each letter's first few occurrences are checked one by one; a letter whose first
# occurrences are all rejected is decided by one search of the reversed text for an occurrence that is not rejected
# (_unrejected_reversed): there, what follows the letter is a set of fixed-width lookbehinds (the normalised text has
# single spaces, and function words are grouped by length) and what precedes it is a lookahead, so the engine jumps
# from one L to the next in C and builds nothing per occurrence.
_ISOLATED_BEFORE = r"(?<![A-Za-z0-9_'’.-].)"  # after the letter: what precedes it is not a word character etc.
_ISOLATED_AFTER = r"(?![A-Za-z0-9_'’]|-[A-Za-z0-9]|\.[A-Za-z])"
_CHECKED_OCCURRENCES = 8


def _occurrence_pattern(letter: str) -> re.Pattern[str]:
    pronoun = rf"(?!{_WORD_NEXT})" if letter == "I" else ""
    return re.compile(f"{letter}{_ISOLATED_BEFORE}{_ISOLATED_AFTER}{pronoun}")


@cache  # (compiled when first needed: most replies never need it, and importing stays cheap)
def _unrejected_reversed(letter: str) -> re.Pattern[str]:
    """An occurrence of ``letter`` that _Text._rejected would not reject, matched on the reversed text: the letter,
    then lookbehinds for what follows it in the text and lookaheads for what precedes it."""
    by_length: dict[int, list[str]] = {}
    for word in sorted(_FUNCTION_WORDS):
        by_length.setdefault(len(word), []).append(word[::-1])
    # a function word follows: " " + the word, then no [a-z'’-] (or the end of the text)
    function_word = rf"(?<=[{''.join(sorted({w[0] for w in _FUNCTION_WORDS}))}]\s{letter})(?:" + "|".join(
        rf"(?<=(?:{'|'.join(words)})\s{letter})(?<![a-z'’-](?:{'|'.join(words)})\s{letter})"
        for words in by_length.values()
    ) + ")"
    no_word_next = rf"(?:(?<![a-z]\s{letter})|{function_word})"  # not _WORD_NEXT right after the letter
    not_a_word = ""  # (in a lookahead, which is atomic: a later test that fails never retries its alternatives)
    if letter == "I":
        not_a_word = f"(?={no_word_next})"  # not the pronoun
    elif letter == "A":  # not the sentence-initial article
        not_a_word = f"(?=(?!{_SENTENCE_BEFORE_REVERSED.pattern})|{no_word_next})"
    return re.compile(  # (the tests that reject the letter in loops of "not A" or "A cup." come first)
        letter + f"(?!{_NOT_REVERSED})"  # not after "not" / "not option"
        + not_a_word
        + rf"(?<![A-Za-z0-9_'’]{letter})(?<![A-Za-z0-9]-{letter})(?<![A-Za-z]\.{letter})"  # _ISOLATED_AFTER
        + r"(?![A-Za-z0-9_'’.-])"  # _ISOLATED_BEFORE
    )


_OCCURRENCES = {letter: _occurrence_pattern(letter) for letter in _ALL_LETTERS}


class _Text:
    """The normalised response and what several rules derive from it (each computed once, when first needed)."""

    __slots__ = ("_candidates", "_label_start", "_low", "_reversed", "letters", "text")

    def __init__(self, text: str, letters: str) -> None:
        self.text = text
        self.letters = letters
        self._low: str | None = None
        self._reversed: str | None = None
        self._candidates: set[str] | None = None
        self._label_start: int | None = None

    def low(self) -> str:
        """The text with its ASCII letters in lower case and İ ı ſ K as i i s k (see _ASCII_EQUIVALENTS)."""
        if self._low is None:
            if self.text.isascii():
                self._low = self.text.lower()
            else:  # (bytes.lower() lowers ASCII letters only, in C; positions are kept)
                low = _utf8(self.text).lower().decode("utf-8", "surrogatepass")
                for char, ascii_letter in _ASCII_EQUIVALENTS.items():
                    if char in low:
                        low = low.replace(char, ascii_letter)
                self._low = low
        return self._low

    def label_start(self) -> int:
        """Where the leading run of emphasis, quotes and whitespace (_OPENING_RUN) ends."""
        if self._label_start is None:
            run = _OPENING_RUN.match(self.text)
            self._label_start = run.end() if run else 0
        return self._label_start

    def reversed(self) -> str:
        if self._reversed is None:
            self._reversed = self.text[::-1]
        return self._reversed

    def before(self, pattern: re.Pattern[str], index: int) -> bool:
        """Does the text before ``index`` end with ``pattern`` (written reversed)?"""
        return pattern.match(self.reversed(), len(self.text) - index) is not None

    def candidates(self) -> set[str]:
        if self._candidates is None:
            self._candidates = {letter for letter in self.letters if self._is_candidate(letter)}
        return self._candidates

    def _rejected(self, letter: str, index: int) -> bool:
        article = letter == "A" and _WORD_FOLLOWS.match(self.text, index + 1) is not None
        if article and self.before(_SENTENCE_BEFORE_REVERSED, index):
            return True  # the sentence-initial article
        return self.before(_NOT_BEFORE_REVERSED, index)

    def _is_candidate(self, letter: str) -> bool:
        text, pattern = self.text, _OCCURRENCES[letter]
        m = pattern.search(text) if letter in text else None  # (str.find rules out an absent letter ~10x faster)
        for _ in range(_CHECKED_OCCURRENCES):
            if m is None:
                return False
            if not self._rejected(letter, m.start()):
                return True
            m = pattern.search(text, m.end())
        return m is not None and _unrejected_reversed(letter).search(self.reversed()) is not None


def _in_range(letter: str, letters: str) -> str | None:
    return letter.upper() if letter.upper() in letters else None


def _declaration(t: _Text) -> str | None:
    text, low = t.text, t.low()
    active = [number for number, (pattern, _) in enumerate(_DECLARATIONS_LOW) if pattern.search(low)]
    if not active:
        return None
    # The original's matches are all of these patterns' matches except one that starts at the letter "I" ending a
    # match the original took; read here from the last one back (usually the last one decides).  After
    # _BACKWARD_STEPS undecided ones, all of them in order.
    backwards = merge(*(_backwards(low, number) for number in active), reverse=True)
    last = list(islice(backwards, _BACKWARD_STEPS))
    complete = len(last) < _BACKWARD_STEPS or active[-1] < _FIRST_I_PATTERN  # (no chains without the "I" pattern)
    decided, verdict = _last_declaration(t, _taken_ends(last, complete))
    if decided:
        return verdict
    if active[-1] < _FIRST_I_PATTERN:
        counted = (m.end() for number in active for m in _counted_matches(t, number))
        end = max(counted, default=None)
        return None if end is None else _verdict(t, end)
    ends = _declaration_ends(low, active)
    if ends is None:
        ends = [m.end() for m in _DECLARATION.finditer(text)]
    return _last_declaration(t, reversed(ends))[1]


def _counted_matches(t: _Text, number: int) -> Iterator[re.Match[str]]:
    """Pattern ``number`` of (c)'s matches: where each occurrence of its keyword (in the lowered text) is one of its
    _SPELLINGS (a keyword never overlaps itself: str.count counts them all), those of the spellings that occur."""
    text, literal = t.text, _DECLARATION_LITERALS[number]
    anywhere, *spelt = _DECLARATIONS_COUNTED[number]
    counts = [text.count(spell(literal)) for spell in _SPELLINGS]
    if sum(counts) != t.low().count(literal):
        return anywhere.finditer(text)
    return chain.from_iterable(pattern.finditer(text) for pattern, count in zip(spelt, counts, strict=True) if count)


def _taken_ends(last: list[tuple[int, int]], complete: bool) -> Iterator[int]:
    """Ends of the matches in ``last`` ((start, end), last first) that the original's left-to-right scan takes, last
    first.  A match starting at the letter "I" that ends the match before it (a chain: "I choose I choose C") is
    taken exactly when that one is not; the earliest match of a chain is taken.  ``complete``: no match before
    ``last`` can continue its earliest chain (else that chain is left undecided and nothing of it is yielded)."""
    chain_start = 0
    for index in range(1, len(last) + 1):
        if index < len(last) and last[index][1] == last[index - 1][0] + 1:
            continue  # last[index] ends at the first character of last[index - 1]: the same chain
        if index == len(last) and not complete:
            return
        for member in range(chain_start, index):  # the chain, last first; its earliest member is at index - 1
            if (index - 1 - member) % 2 == 0:
                yield last[member][1]
        chain_start = index


def _last_declaration(t: _Text, ends: Iterable[int]) -> tuple[bool, str | None]:
    """(True, verdict) of the last declaration among ``ends`` (match ends, last first) that is not the article or
    the pronoun; (False, None) when there is none."""
    text = t.text
    for end in ends:
        if text[end - 1] in "aAiI" and _WORD_FOLLOWS.match(text, end):
            continue  # the article "a" or the pronoun "I", not a letter
        return True, _verdict(t, end)
    return False, None


def _verdict(t: _Text, end: int) -> str | None:
    """The verdict of the declaration whose letter ends at ``end``: the letter, or ambiguous before "or C" etc."""
    return _AMBIGUOUS if _ALTERNATIVE.match(t.text, end) else _in_range(t.text[end - 1], t.letters)


def _start(m: re.Match[str], lengths: tuple[int, ...]) -> int:
    return m.start() - lengths[m.groups().index("")] if lengths else m.start()


def _backwards(low: str, number: int) -> Iterator[tuple[int, int]]:
    """(start, end) of pattern ``number``'s matches, from the last one back (its matches never overlap)."""
    (pattern, lengths), literal = _DECLARATIONS_LOW[number], _DECLARATION_LITERALS[number]
    stop = len(low)
    while (anchor := low.rfind(literal, 0, stop)) >= 0:
        m = pattern.match(low, anchor)
        if m is not None:
            yield _start(m, lengths), m.end()
        stop = anchor + len(literal) - 1


def _declaration_ends(low: str, active: list[int]) -> list[int] | None:
    """Where the original's matches end, in order, from the per-literal patterns' matches; None when one of them
    starts at the letter "I" that ends another (then the original never saw it, and only its own left-to-right scan
    says which matches it found)."""
    if len(active) == 1:  # only one pattern matches anywhere: its own left-to-right scan is the original's
        return list(map(re.Match.end, _DECLARATIONS_LOW[active[0]][0].finditer(low)))
    found: list[tuple[int, int]] = []
    for number in active:
        pattern, lengths = _DECLARATIONS_LOW[number]
        if lengths:
            found += [(_start(m, lengths), m.end()) for m in pattern.finditer(low)]
        else:
            matches = list(pattern.finditer(low))
            found += zip(map(re.Match.start, matches), map(re.Match.end, matches), strict=True)
    found.sort()
    ends = [end for _, end in found]
    letter_ends = set(ends)  # (the "I" pattern is active: _declaration decides every text without it earlier)
    i_starts = map(re.Match.start, _DECLARATIONS_LOW[_FIRST_I_PATTERN][0].finditer(low))
    if any(start + 1 in letter_ends for start in i_starts):
        return None
    return ends


def _allowed_start(text: str, index: int) -> bool:
    """Rule 2: may the original's match start before the letter at ``index`` (which no [A-Za-z0-9’] precedes)?"""
    if index == 0 or text[index - 1] not in "_'":
        return True
    run = index - 1
    while run > 0 and text[run - 1] in "_'":
        run -= 1
    return run == 0 or _NOT_WORDCHAR.match(text, run - 1) is not None


def _closing_run(reversed_text: str, pos: int) -> int:
    m = _CLOSING_RUN.match(reversed_text, pos)
    return m.end() - pos if m else 0


def _letter_unblocked(text: str, index: int) -> bool:
    """A letter at ``index`` that no [A-Za-z0-9’] precedes (rule 2's lookbehind)."""
    return index >= 0 and bool(_LETTER_AT.match(text, index)) and not (index and _BLOCKS.match(text, index - 1))


def _is_correct(t: _Text) -> str | None:
    text = t.text
    # each phrase from the space before "is"; its letter precedes a run of closing characters (read reversed)
    phrases = reversed(list(map(re.Match.start, _IS_PHRASE_LOW.finditer(t.low()))))
    letters = (phrase - _closing_run(t.reversed(), len(text) - phrase) - 1 for phrase in phrases)
    for index in (i for i in letters if _letter_unblocked(text, i)):  # the last one counts
        if _allowed_start(text, index):
            return _in_range(text[index], t.letters)
    return None


def _bare_label(t: _Text) -> str | None:
    m = _BARE.match(t.text, t.label_start())
    return _in_range(m.group("letter"), t.letters) if m else None


def _leading_label(t: _Text) -> str | None:
    m = _LEADING.match(t.text, t.label_start())
    return _in_range(m.group("letter"), t.letters) if m else None


def _norm(s: str) -> str:
    """Case-folded words (punctuation and "_" are spaces) joined by single spaces."""
    return _words(s.casefold())


def _words(folded: str, spaced: bool = False) -> str:
    """The words of a case-folded text joined by single spaces; ``spaced`` as in _collapse."""
    return _collapse(_word_runs(folded), spaced)


def _word_runs(folded: str) -> str:
    """A case-folded text with ``[^\\w\\s]|_`` as " " (runs of spaces are left as they are)."""
    if folded.isascii():
        return folded.translate(_ASCII_WORDS)
    # ASCII punctuation on the UTF-8 bytes, the commonest non-ASCII marks by str.replace (all in C), then the rest
    data = _utf8(folded).translate(_ASCII_WORD_BYTES)
    words = _marks_to_spaces(data.decode("utf-8", "surrogatepass"))
    others = _few_non_ascii(data, len(folded))  # (read there when few: the marks among them are spaces in words)
    if not words.isascii() and _NON_ASCII_NON_WORD_AT.search(words if others is None else _marks_to_spaces(others)):
        words = _NON_ASCII_NON_WORD.sub(" ", words)
    return words


def _marks_to_spaces(text: str) -> str:
    """``text`` with each of _COMMON_MARKS replaced by " " (str.replace per mark present, in C)."""
    for mark in _COMMON_MARKS:
        if mark in text:
            text = text.replace(mark, " ")
    return text


def _few_non_ascii(data: bytes, length: int) -> str | None:
    """The non-ASCII characters, in order, of the text of ``length`` characters whose UTF-8 is ``data``; None where
    they are many (over 1 byte in 8: reading them apart costs about what one more pass over the text does)."""
    many = len(data) - length > length // 8
    return None if many else data.translate(None, _ASCII_BYTE_VALUES).decode("utf-8", "surrogatepass")


def _fold(text: str) -> str:
    """``text.casefold()`` with the commonest non-ASCII marks as spaces, which _words makes of them anyway (they are
    neither cased nor word characters): a text whose only non-ASCII characters they are is then lowered as ASCII, as
    is one whose other non-ASCII characters are few and each its own case fold (str.casefold looks up every one)."""
    text = text if text.isascii() else _marks_to_spaces(text)
    if text.isascii():
        return text.lower()
    sample = text[:4096]  # (a text mostly in other scripts is told by its start, before all of it is encoded)
    if _few_non_ascii(_utf8(sample), len(sample)) is None:
        return text.casefold()
    data = _utf8(text)
    others = _few_non_ascii(data, len(text))
    if others is None or others.casefold() != others:
        return text.casefold()
    return data.lower().decode("utf-8", "surrogatepass")  # (bytes.lower() lowers ASCII letters only)


def _uncovered(found: dict[str, tuple[str, list[int]]]) -> list[str]:
    """Letters with an occurrence that lies in no occurrence of a strictly longer option text (in ``found`` order).

    ``found``: letter -> (" option text ", where it starts in the padded response).  A longer text covers an
    occurrence exactly when it starts ``offset`` characters earlier, for an offset at which the shorter padded text
    lies inside the longer one; so each offset removes the longer text's starts, shifted, from the free starts."""
    if len(found) < 2:
        return list(found)
    result = []
    for letter, (needle, starts) in found.items():
        free = set(starts)
        for other, (longer, other_starts) in found.items():
            if other == letter or len(longer) <= len(needle):
                continue
            offset = longer.find(needle)
            while offset >= 0 and free:
                free.difference_update(map(offset.__add__, other_starts))
                offset = longer.find(needle, offset + 1)
        if free:
            result.append(letter)
    return result


@cache
def _option_words(option: str, whole: bool) -> re.Pattern[str]:
    """A normalised option text on a text whose words are separated by runs of spaces: the whole text (``whole``),
    else an occurrence on word boundaries that starts at the space before it (the text padded with a space)."""
    words = " +".join(map(re.escape, option.split(" ")))
    return re.compile(f" *{words} *" if whole else f" {words}(?= )")


def _option_text(t: _Text, texts: Sequence[str | None]) -> str | None:
    letters = t.letters
    options = [(letters[i], _norm(o or "")) for i, o in enumerate(texts)]
    options = [(letter, o) for letter, o in options if o]
    folded = _fold(t.text)
    # An option with a word the response lacks neither equals it nor occurs in it (each word of the response's runs is
    # a substring of the folded text): it is dropped here, and its patterns are never read over the whole response.
    occurs = cache(folded.__contains__)  # (options share words)
    options = [(letter, o) for letter, o in options if all(map(occurs, o.split(" ")))]
    if not options:
        return None
    # The response's words with runs of spaces between them (its only whitespace is " ": case folding never makes
    # any); collapsing the runs costs more than everything else here, so it is done only when two options occur.
    runs = _word_runs(folded)
    exact = [letter for letter, o in options if _option_words(o, whole=True).fullmatch(runs)]
    if exact:
        return exact[0] if len(exact) == 1 else _AMBIGUOUS
    padded = f" {runs} "
    present = [(letter, o) for letter, o in options
               if not (len(o) < 2 and o.isalpha())  # a single letter as option text says nothing as content
               and _option_words(o, whole=False).search(padded)]
    if len(present) < 2:
        uncovered = [letter for letter, _ in present]
    else:  # which occurrence lies in which: on the words joined by single spaces
        response = f" {_collapse(runs, spaced=True)} "
        uncovered = _uncovered({letter: (needle, list(map(re.Match.start, re.finditer(re.escape(needle), response))))
                                for letter, needle in ((letter, f" {o} ") for letter, o in present)})
    if len(uncovered) != 1:
        return _AMBIGUOUS if uncovered else None
    if t.candidates() - {uncovered[0]}:
        return None  # the response also names another letter: let the letter rules decide
    return uncovered[0]


def _last_letter(t: _Text) -> str | None:
    body = t.text.rstrip(_TRAILING_JUNK)
    letter = body[-1:]
    if not ("A" <= letter <= "Z") or letter not in t.letters:
        return None
    if len(body) > 1 and not (body[-2].isspace() or body[-2] in _BEFORE_TRAILING):
        return None
    if t.before(_OR_BEFORE_REVERSED, len(body) - 1):
        return _AMBIGUOUS  # "B or C", "B/C", "B and C"
    return None if t.before(_NOT_BEFORE_REVERSED, len(body) - 1) else letter


def _unique_letter(t: _Text) -> str | None:
    found = t.candidates()
    if len(found) > 1:
        return _AMBIGUOUS
    return next(iter(found)) if found else None


def _strict(text: str, letters: str, texts: Sequence[str | None] | None) -> Extraction:
    t = _Text(text, letters)
    rules: list[tuple[str, Callable[[_Text], str | None]]] = [
        ("declaration", _declaration),
        ("is_correct", _is_correct),
        ("bare_label", _bare_label),
        ("leading_label", _leading_label),
    ]
    if texts is not None:
        rules.append(("option_text", lambda t_: _option_text(t_, texts)))
    rules += [("last_letter", _last_letter), ("unique_letter", _unique_letter)]
    ambiguous = False
    for name, rule in rules:
        letter = rule(t)
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
