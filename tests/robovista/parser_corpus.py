"""Deterministic corpus of model responses for the RoboVista parity-parser tests.

Owns: ``generate(seed)``, a reproducible list of (family, response) pairs that exercises every rule of both
released RoboVista answer parsers and their edge cases; and the location of the stored expectations
(data/parse_answer_corpus.jsonl.gz, one JSON object per response: ``family``, ``text``, and per released version
the sorted list of letters it can return, ``null`` meaning no answer).  The expectations were computed once,
outside the project, by running the released functions themselves (``parse_answer`` of run_benchmark.py at commits
5163b10 and a5f8054, on CPython 3.11) over ``generate(DEFAULT_SEED)`` under PYTHONHASHSEED 0..29, 47 and 104 (their
last rule iterates a set; 47 and 104 give the set orders ABCDE and EDCBA).  If this generator changes, recompute
them the same way; the tests notice a stale file.  The runner's parser takes no options, so none are stored.

Families (each built from fixed tables plus ``random.Random(seed)`` draws; no hashing, no set iteration):
  bare          one letter, any case A-Z, padded / punctuated / emphasised / labelled
  answer_form   "Answer: X", "the answer is X", "final answer ...", "X is the correct answer", traps
  think         think blocks: closed, open, unclosed, empty tail, answer inside think, odd tag spellings
  final_window  parity_20260714's end-of-text "IS X" rule around its 40-character window
  markdown      emphasis, code spans/blocks, headings, bullets, quotes
  prose         sentences with articles ("A robot ..."), pronoun "I", letters inside words
  multi         several letters (lists, alternatives, negations), in many orders
  confidence    answers with confidence clauses in several spellings and positions
  blank         empty and whitespace-only strings (ASCII and Unicode whitespace)
  unicode       look-alikes, full-width forms, combining marks, case-mapping oddities, emoji, RTL
  long          long responses (tens to hundreds of KB): prose, letters, whitespace runs, repeated tags
  fuzz          random concatenations of fragments drawn from all of the above
"""

from __future__ import annotations

import random
import string
from pathlib import Path

__all__ = ["CORPUS_PATH", "DEFAULT_SEED", "MIN_SIZE", "generate"]

DEFAULT_SEED = 20260714
MIN_SIZE = 20_000
CORPUS_PATH = Path(__file__).resolve().parent / "data" / "parse_answer_corpus.jsonl.gz"

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
IN_RANGE = "ABCDE"

_BARE_TEMPLATES = (
    "{L}", " {L}", "{L} ", "\n{L}\n", "\t{L}\t", "{L}.", "{L}. ", " {L} .", "{L}..", "{L}...", "{L})", "({L})",
    "[{L}]", "{{{L}}}", "{L}:", "{L};", "{L},", "{L}!", "{L}?", "'{L}'", '"{L}"', "“{L}”", "**{L}**", "*{L}*",
    "__{L}__", "_{L}_", "`{L}`", "```\n{L}\n```", "Option {L}", "option {L}", "OPTION {L}.", "Choice: {L}",
    "Letter {L}", "({L}) ", "{L} )", "{L}-", "{L} -", "{L}/", "{L}1", "{L}2.", "{L}'", "{L}s", "{L}.{L}", "{L}.)",
    "- {L}", "> {L}", "# {L}", "{L}\n", "{L}\n\n", "\n\n{L}", "{L}\r\n", "{L}\u00a0", "\u200b{L}", "{L}\u200b",
    "{L}.\n", "{L}。", "{L}、", "（{L}）", "{L}：", "<{L}>", "<answer>{L}</answer>", "\\boxed{{{L}}}",
    "$\\boxed{{{L}}}$", "{L} is it", "{L} it is", "{L}. {L}", "{L} {L}",
)

_ANSWER_TEMPLATES = (
    "Answer: {L}", "answer:{L}", "ANSWER : {L}", "Answer:{L}.", "Answer: ({L})", "Answer: **{L}**", "Answer - {L}",
    "Answer = {L}", "Answer is {L}", "answer is: {L}", "The answer is {L}", "the answer is {L}.",
    "The answer is ({L}).", "The answer is: {L}", "THE ANSWER IS {L}", "The answer is option {L}",
    "the answer is **{L}**", "The answer is {L}) something", "Final answer: {L}", "final answer is {L}",
    "Final Answer: {L}.", "FINAL ANSWER: {L}", "My answer is {L}.", "My answer: {L}", "Correct answer: {L}",
    "The correct answer is {L}.", "The best answer is {L}", "{L} is the correct answer", "{L} is the correct answer.",
    "{L} is correct answer", "{L} IS THE RIGHT ANSWER", "{L} is the best answer", "{L}  is  the  best  answer",
    "{L} is the correct option", "{L} is correct", "Therefore, the answer is {L}.", "So the answer is {L}",
    "The answer:{L}", "answers: {L}", "answered: {L}", "Answer:\n{L}", "Answer:\n\n{L}", "Answer\n{L}",
    "Answer: {L}\nExplanation: the gripper is open.", "The answer is {L} because the arm moves left.",
    "I think the answer is {L}.", "Based on the images, the answer is {L}.", "Answer: {L} or B",
    "Answer: B or {L}", "The answer isn't {L}", "The answer is not {L}.", "answer{L}", "answer is{L}",
    "the answer is a grasp at the rim, i.e. {L}", "The answer is a {L}", "The answer is an {L}",
    "Answer: a {L}", "ANSWER IS {L}", "answer:  \t {L}", "The final answer is $\\boxed{{{L}}}$",
    "**Answer:** {L}", "**Answer: {L}**", "Answer: `{L}`", "Answer: [{L}]", "Answer: {{{L}}}",
    "NoAnswer: {L}", "Reanswer: {L}", "x_answer: {L}", "1answer is {L}", "answer: {L}x", "answer: {L}_", "answer: {L}1",
    "{L} is the correct answers", "{L} is the best answered", "{L} is the right answer_", "x{L} is the correct answer",
    "_{L} is the correct answer", "{L}\nis\nthe\ncorrect\nanswer", "{L}IS THE BEST ANSWER",
    "not {L} is the correct answer",
    "{L} is the the correct answer", "{L} is correct  answer", "{L}: is the correct answer", "the answer is {L}{L}",
    "NoAnswer: {L}; not E", "Reanswer: {L}, then D", "{L} is the correct answers, not E", "{L} is the best answered; D",
    "x{L} is the correct answer, so E", "answer: {L}x or D", "Prose. {L}IS THE RIGHT ANSWER, E",
)

_THINK_CONTENTS = (
    "", " ", "\n", "Let me look at the image.", "The gripper is open. So the answer is {L}.",
    "Option A is wrong. Option B is wrong. The answer is {L}", "I think it is {L}.",
    "the best option is {L}.", "Hence: {L}", "Hence:{L}", "hence : {L}", "This is {L}", "Therefore it is {L}.",
    "Let me reason step by step. The cup is on the left, so the robot should move left. That is option {L}.",
    "Answer: {L}", "{L} is the correct answer", "{L}", "{L}) move left", "({L})",
    "Between B and D, I pick {L}.", "a robot arm should grasp the cup; the best option is {L}",
    "The answer is {L}. Wait, let me double-check. Yes, {L}.", "Is it A? Is it {L}?", "It is {L}, not A",
    "the answer is {L}\n\n\n", "Final choice: {L}", "so the option is {L}!", "Option {L} fits",
    "This is {L}" + " " * 45, "This is {L}" + "\n" * 45, "This is {L}" + "." * 39, "This is {L}" + "." * 40,
    "This is {L}" + "." * 41, "This is {L}. Done", "This is {L}. Bad", "is {L}", ": {L}", ":{L}", "IS{L}",
    "is {L} ok", "is {L}\u00e9", "is {L}_", "is {L}1", "is {L}.\u00c9\u00c9",
)

_THINK_SHAPES = (
    "<think>{T}</think>{C}", "<think>{T}</think>\n{C}", "<think>{T}</think>\n\n{C}", "<think>{T}</think> {C} ",
    "<think>{T}</think>", "<think>{T}</think>\n", "<think>{T}</think>   \n\t", "<think>{T}", "{T}</think>{C}",
    "{T}</think>", "<think>\n{T}\n</think>\n{C}", "<THINK>{T}</THINK>{C}", "<Think>{T}</Think>",
    "<think>{T}</think>{C}</think>", "<think>{T}</think></think>{C}", "<think>{T}</think>{C}<think>more</think>",
    "</think>{C}", "</think>", "{C}</think>", "{C}</think>{T}", "<think>{T}</think >{C}", "<think>{T}</ think>{C}",
    "<think>{T}</think\n>{C}", "<think>{T}<\\think>{C}", "<think>{T}</thinking>{C}", "<thinking>{T}</thinking>{C}",
    "<think>{T}</thin\u212a>{C}", "<think>{T}</th\u0131nk>{C}", "<think>{T}</TH\u0130NK>{C}",
    "<think>{T}</think>{C}\nConfidence: 80%", "<think>{T}</think>I'm not sure.", "<think>{T}</think>...",
    "<think>{T}</think>I cannot tell from the image.", "<think>{T}</think>None of the above",
    "<think>{T}</think>**{C}**", "{T}\n</think>\n\n{C}", "<think></think>{C}", "<think>{T}</think>\u00a0",
)

_THINK_TAILS = (
    "{L}", "{L}.", "Answer: {L}", "The answer is {L}", "**{L}**", "({L})", "I choose {L}.", "a {L}", "",
    "Final answer: {L}", "{L}) the left one", "It must be {L}",
)

_PROSE = (
    "A robot arm should grasp the cup first, so D.", "The gripper holds a cup; option D fits.",
    "A and C are wrong; E.", "I think it's B.", "I would choose C because the cup is closer.",
    "a", "A good choice is B.", "A", "An answer of C seems right.", "The robot is at position B.",
    "I believe the best option is E", "As seen in the image, the arm moves left (B).",
    "It's a tough one but I'd go with D", "Both A and B are plausible, but A is better.",
    "Not A. Not B. Definitely C.", "The object is a box. B", "THE GRIPPER HOLDS A CUP; OPTION D FITS",
    "A ROBOT ARM SHOULD GRASP THE CUP, SO D", "I.e. the arm moves, e.g. left: C", "Plan B is better than plan A.",
    "Vitamin C is not relevant here; the answer is E.", "Use a D-pad to move.", "The ABCs of robotics; choose D",
    "Mr. A and Mrs. B met at C.", "Grade: A+", "Type-C connector", "Section 4.B says so", "option-B",
    "A/B testing suggests D", "E-stop is pressed, so B", "It is C-shaped.", "Look at image 2 (B)",
    "I'm going with c.", "my pick: d", "b)", "e.", "the last one, e", "probably b or c", "I don't know.",
    "None of the options are correct.", "Cannot determine.", "I am unable to view images.",
    "Sorry, I can't help with that.", "The correct option is (b).", "Option (c) is correct.",
    "In image A the arm is up; in image B it is down. So E.", "Step 1: locate. Step 2: grasp. Answer D",
)

_MULTI_TEMPLATES = (
    "{X} or {Y}", "{X} and {Y}", "{X}, {Y}", "{X}/{Y}", "{X} {Y}", "{X}{Y}", "{X}, {Y}, or {Z}", "{X} {Y} {Z}",
    "Not {X}, it's {Y}", "{X} is wrong, {Y} is right", "Between {X} and {Y}, {Y}", "Either {X} or {Y}.",
    "({X}) or ({Y})", "{X}. {Y}. {Z}.", "{X}) {Y}) {Z})", "options {X} and {Y} are close", "{X}-{Y}",
    "The answer is {X} or {Y}", "{X} is the correct answer, not {Y}", "I'd say {X}; maybe {Y}; or {Z}",
    "first {X}, then {Y}, finally {Z}", "{x} {y} {z}", "{X} {y}", "{x}, {Y}", "not {X} but {Y}",
)

_CONFIDENCE = (
    "{L}\nConfidence: 85%", "{L} Confidence: 85%", "{L}. Confidence: 90%", "Answer: {L}\nConfidence: 70%",
    "Answer: {L} (Confidence: 70%)", "Confidence: 90%\nAnswer: {L}", "Confidence: 90% {L}", "{L}\nconfidence: 0.8",
    "{L}\nConfidence level: 60%", "{L}\n**Confidence:** 75%", "{L} (confidence 55%)", "I am 80% confident it is {L}",
    "{L}\nConfidence: 100%", "{L}\nConfidence: 0%", "Confidence: 85%", "confidence: {L}", "{L}, confidence = 40 %",
    "The answer is {L}. Confidence: 65%.", "{L}\n\nConfidence: 85 %", "Confidence:85%\n{L}", "{L} [Confidence: 80%]",
    "{L}\nConfidence: A-grade", "{L}\nCONFIDENCE: 95%", "Confidence: 50%. I choose {L}.",
)

_BLANKS = (
    "", " ", "  ", "\n", "\n\n", "\t", " \t\n\r\x0b\x0c ", "\u00a0", "\u3000", "\u2028", "\u2029", "\u200b",
    "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u2003\u2009", "\r\n", " \n \n ", "\ufeff",
)

_UNICODE = (
    "Ｃ", "Ａｎｓｗｅｒ: Ｃ", "ＡＮＳＷＥＲ: C", "Ⓒ", "ⓒ", "Answer: Ⓒ", "\u1e9a", "\u1e9a.", "\u1e9a is the answer",
    "ß", "C ß", "ßC", "é", "C é", "Cé", "éC", "C\u0301", "\u0301C", "A\u0300 robot", "C\u200d", "Α", "Answer: Α",
    "Β.", "С", "Answer: С", "Е", "🤖 C", "C 🤖", "C🤖", "👍", "א C", "C א", "\u202eC\u202c", "ﬁ C", "Cﬁ",
    "Answer: C\u0308", "ANSWER: \u0130", "answer: ı", "ǅ", "Ǆ C", "ǈB", "ŉ", "\u2160", "C\u2163", "Ⅽ", "ⅽ",
    "the answer is ｃ", "答案: C", "答案是C", "选项 C", "C。", "Antwort: C", "Réponse : C", "Ответ: С", "Ответ: C",
    "\u00aaB", "B\u00ba", "\u00b2C", "C\u00b2", "\u2170", "Ꭺ", "𝐂", "𝐀𝐧𝐬𝐰𝐞𝐫: C", "C\ufe0f", "\U0001f170",
)

_FRAGMENTS = (
    "A", "B", "C", "D", "E", "F", "G", "I", "Z", "a", "b", "c", "d", "e", "f", "i", "z", "answer", "Answer", "ANSWER",
    "the", "The", "THE", "is", "IS", "Is", ":", " : ", ".", "..", ")", "(", "**", "*", "_", "`", "```", "</think>",
    "<think>", "</THINK>", "</think >", "correct", "right", "best", "option", "final", "not", "or", "and", "so",
    "a robot", "A robot", "an", "I", "I'm", "confidence", "Confidence: 80%", "85%", "1", "2", "-", "/", ",", ";",
    "!", "?", "'", '"', "\n", "\n\n", "\t", " ", "  ", "\u00a0", "é", "ß", "\u1e9a", "\u212a", "Ｃ", "🤖", "\u0301",
    "[", "]", "{", "}", "<", ">", "is the correct answer", "is the best answer", "the answer is", "Answer:",
    "Final answer:", "e.g.", "i.e.", "vs", "THIS", "His", "x" * 41,
)

_SEPARATORS = ("", " ", " ", " ", "\n", ", ", ". ", "\t")

_LOREM = (
    "The robot arm approaches the table and the gripper opens before it reaches the red cup. "
    "Considering the position of the camera, the object on the left is closer to the end effector. "
    "I think the safest plan is to move slowly and re-check the grasp. "
)


def _fill(template: str, letter: str) -> str:
    return template.replace("{L}", letter).replace("{{", "{").replace("}}", "}")


def _bare(rng: random.Random) -> list[tuple[str, str]]:
    letters = UPPER + LOWER
    return [("bare", _fill(t, letter)) for t in _BARE_TEMPLATES for letter in letters]


def _answer_forms(rng: random.Random) -> list[tuple[str, str]]:
    letters = "ABCDEFGHJZ" + "abcdefz"
    return [("answer_form", _fill(t, letter)) for t in _ANSWER_TEMPLATES for letter in letters]


def _think(rng: random.Random) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for shape in _THINK_SHAPES:
        for content in _THINK_CONTENTS:
            inner = rng.choice("ABCDEFabcdez")
            tail = _fill(rng.choice(_THINK_TAILS), rng.choice("ABCDEFGabcde"))
            out.append(("think", shape.replace("{T}", _fill(content, inner)).replace("{C}", tail)))
    return out


def _final_window(rng: random.Random) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    leads = ("the best option is ", "It is ", "this is ", "Answer:", "answer : ", "THUS IS ", "x: ", "x :", "his ")
    clean = (".", " ", "\n", "x", "!", "é", "-", "\u00a0")  # none of them is A-E once upper-cased
    noisy = (*clean, "a", "b", "F")
    wraps = ("<think>{X}</think>", "<think>{X}</think>\n\n", "{X}</think>", "<think>{X}</think>?")
    for lead in leads:
        for letter in "ABCDEFbe":
            for n in (0, 1, 5, 24, 30, 31, 32, 33, 34, 38, 39, 40, 41, 42, 60):
                for fillers in (clean, noisy):
                    filler = "".join(rng.choice(fillers) for _ in range(n))
                    wrap = rng.choice(wraps)
                    out.append(("final_window", wrap.replace("{X}", f"Reasoning. {lead}{letter}{filler}")))
    return out


def _markdown(rng: random.Random) -> list[tuple[str, str]]:
    shapes = (
        "**{L}**", "**Answer:** {L}", "**Answer: {L}**", "**Answer**: {L}", "### Answer\n{L}",
        "## Final answer\n\n**{L}**",
        "- {L}", "* {L}", "1. {L}", "> **{L}**", "`{L}`", "```\n{L}\n```", "```text\nAnswer: {L}\n```", "__{L}__",
        "~~A~~ {L}", "*{L}.*", "**{L}.**", "**({L})**", "**{L})** move left", "| Answer | {L} |", "<b>{L}</b>",
        "**The answer is {L}**", "***{L}***", "_The answer is_ {L}", "**Option {L}**", "[{L}](#)", "**{L}** - left",
        "\\textbf{{{L}}}", "The answer is **{L}**.", "I pick **{L}**", "Answer:\n- {L}", "**Answer:**\n\n{L}",
    )
    return [("markdown", _fill(s, letter)) for s in shapes for letter in "ABCDEFGZabcde"]


def _prose(rng: random.Random) -> list[tuple[str, str]]:
    out = [("prose", p) for p in _PROSE]
    starts = ("A", "a", "I", "An", "The", "E", "B", "C", "D")
    words = ("robot", "cup", "gripper", "moves", "is", "and", "so", "arm", "left", "right", "image", "grasp")
    for _ in range(1500):
        n = rng.randint(2, 14)
        sentence = " ".join([rng.choice(starts)] + [rng.choice(words) for _ in range(n)])
        end = rng.choice(("", ".", ", so D.", " (B)", "; E", " so c", ". Answer: B", " C", " - option d", "!"))
        out.append(("prose", sentence + end))
    return out


def _multi(rng: random.Random) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pool = "ABCDEFGZ"
    for t in _MULTI_TEMPLATES:
        for _ in range(60):
            x, y, z = rng.sample(pool, 3)
            out.append(("multi", t.format(X=x, Y=y, Z=z, x=x.lower(), y=y.lower(), z=z.lower())))
    for _ in range(400):  # every subset order of A-E, as isolated letters in prose
        k = rng.randint(2, 5)
        picked = rng.sample(IN_RANGE, k)
        out.append(("multi", "Considering " + ", ".join(picked) + " carefully, none is obvious"))
    return out


_CLAUSES = (
    "Confidence: 80%", "confidence: 0.9", "Confidence level: 60%", "**Confidence:** 75%", "(confidence 55%)",
    "Confidence=40 %", "CONFIDENCE: 95%", "Confidence score: 70", "_Confidence: 10%_",
)


def _confidence(rng: random.Random, base: list[str]) -> list[tuple[str, str]]:
    out = [("confidence", _fill(t, letter)) for t in _CONFIDENCE for letter in "ABCDEFZbe"]
    for _ in range(1500):  # a clause before, inside or after another response: it shifts first/last characters
        text = rng.choice(base)
        at = rng.choice((0, len(text), rng.randint(0, len(text))))
        clause = rng.choice(("", " ", "\n")) + rng.choice(_CLAUSES) + rng.choice(("", " ", "\n"))
        out.append(("confidence", text[:at] + clause + text[at:]))
    return out


def _blank(rng: random.Random) -> list[tuple[str, str]]:
    out = [("blank", b) for b in _BLANKS]
    out += [("blank", "".join(rng.choice(_BLANKS) for _ in range(rng.randint(1, 6)))) for _ in range(40)]
    return out


def _unicode(rng: random.Random) -> list[tuple[str, str]]:
    out = [("unicode", u) for u in _UNICODE]
    wraps = ("{U}", "<think>x</think>{U}", "{U}</think>", "Answer: {U}", "{U}.", "The answer is {U}")
    for _ in range(600):
        out.append(("unicode", rng.choice(wraps).replace("{U}", rng.choice(_UNICODE))))
    return out


def _long(rng: random.Random) -> list[tuple[str, str]]:
    sizes = (2_000, 20_000, 120_000)
    out: list[tuple[str, str]] = []
    for size in sizes:
        prose = (_LOREM * (size // len(_LOREM) + 1))[:size]
        letter = rng.choice(IN_RANGE)
        out += [
            ("long", prose),
            ("long", prose + f" So the answer is {letter}."),
            ("long", f"<think>{prose}</think>{letter}"),
            ("long", f"<think>{prose} The best option is {letter}.</think>"),
            ("long", f"<think>{prose}</think>"),
            ("long", f"<think>{prose}"),
            ("long", f"{letter}. " + prose),
            ("long", " " * size + letter + " " * size),
            ("long", "A " * (size // 2)),
            ("long", "*" * size + "1"),
            ("long", "{" * size),
            ("long", "IS " * (size // 3) + "D"),
            ("long", "THE" + " " * size + "ANSWER IS B"),
            ("long", "ANSWER" + "\n" * size + ": C"),
            ("long", "</think>" * (size // 8) + "E"),
            ("long", f"<think>is {letter}" + " " * size + "</think>"),
            ("long", "".join(rng.choice("ABCDEabcde .,:\n") for _ in range(size))),
        ]
    return out


def _fuzz(rng: random.Random, count: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for _ in range(count):
        parts = [rng.choice(_FRAGMENTS) for _ in range(rng.randint(1, 12))]
        text = "".join(p + rng.choice(_SEPARATORS) for p in parts)
        if rng.random() < 0.3:
            text = text.strip()
        out.append(("fuzz", text))
    return out


def generate(seed: int = DEFAULT_SEED) -> list[tuple[str, str]]:
    """(family, response) pairs without duplicate responses, identical for identical seeds; at least MIN_SIZE."""
    rng = random.Random(seed)
    corpus: list[tuple[str, str]] = []
    for build in (_bare, _answer_forms, _think, _final_window, _markdown, _prose, _multi):
        corpus += build(rng)
    corpus += _confidence(rng, [text for _, text in corpus if len(text) < 200])
    for build in (_blank, _unicode, _long):
        corpus += build(rng)
    corpus += _fuzz(rng, 10_000)
    unique: dict[str, str] = {}  # response -> family; insertion-ordered, so deterministic
    for family, text in corpus:
        unique.setdefault(text, family)
    while len(unique) < MIN_SIZE:
        for family, text in _fuzz(rng, MIN_SIZE - len(unique)):
            unique.setdefault(text, family)
    return [(family, text) for text, family in unique.items()]
