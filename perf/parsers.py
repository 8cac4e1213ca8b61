"""Every parser on pathological 1 MB inputs (target: well under 50 ms per call; the figure is each parser's worst).

Parsers: the strict extractor (``adapters/core/extract.py``: ``extract_choice`` with a count and with option texts,
``split_confidence``), the RoboVista parity parser (``tasks/robovista/core/parity.py``, both released versions), the
Agent-X trace parser (``tasks/agentx/core/trace.py``), the judge reply parsers (``judges/parsers.py``: score, yes/no,
letter, refusal; ``judges/rubric.py``: the Agent-X JSON rubric, with Python literals) and the loop detector
(``adapters/loops.py``).

Inputs (``INPUTS``): ordinary chain-of-thought prose (ASCII, and with curly quotes), CJK, long runs ("*", "{", "_",
"(", quotes, spaces, newlines, digits, letters), "A A A ...", deep nesting (closed and unclosed braces, JSON and
lists), loops of answers, declarations, articles, "not X", verdicts and scores, many distinct lines, echoed fenced
data, unclosed ``<think>``, lmms-eval's failed-request marker; and the worst of these with one non-ASCII letter.
Each call gets ``TIMEOUT_S`` (a call still running then is stopped and reported as "> 10 s"); the best of
``REPEATS`` CPU times counts (on a shared 2-core machine single calls vary by +-20%; the fastest is the parser's own
cost).
"""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Callable
from typing import Any

from perf.common import Figure, at_most

SECTION = "parsers"
LIMIT_MS = 50.0
TIMEOUT_S = 10.0
SIZE = 1_000_000
REPEATS = 5


def _prose(seed: int = 0) -> str:
    rng = random.Random(seed)
    text = ("the robot arm should move left because a cup is on the table and I think option B is not right so "
            "the answer might be C but looking again at the image the gripper is open which is a problem")
    words = text.split(" ")
    out, n = [], 0
    while n < SIZE:
        sentence = " ".join(rng.choice(words) for _ in range(rng.randint(6, 18))).capitalize() + rng.choice(
            [". ", ".\n", "? ", ", ", ".\n\n"])
        out.append(sentence)
        n += len(sentence)
    return "".join(out)[:SIZE]


def _rep(unit: str) -> str:
    return unit * (SIZE // len(unit))


def inputs() -> dict[str, str]:
    prose = _prose()
    texts = {
        "cot prose": prose,
        "cot prose, curly quotes": prose.replace("is", "it’s").replace("the", "“the”")[:SIZE],
        "cjk prose": _rep("机器人应该向左移动，因为杯子在桌子上。"),
        "'*' x 1M + digit": "*" * SIZE + "1",
        "'A A A ...' + word": _rep("A ") + "word",
        "'{' x 1M": "{" * SIZE,
        "'{' x 500k + '}' x 500k": "{" * (SIZE // 2) + "}" * (SIZE // 2),
        "'{\"a\":' nested 1 MB": '{"a":' * (SIZE // 6) + "1" + "}" * (SIZE // 6),
        "'[' x 500k + ']' x 500k": "[" * (SIZE // 2) + "]" * (SIZE // 2),
        "'{' + '{}' x 500k": "{" + _rep("{}"),
        "'{}' x 500k": _rep("{}"),
        "'{a:b}' x 200k": _rep("{a:b}"),
        "spaces": " " * SIZE,
        "newlines": "\n" * SIZE,
        "'_' x 1M + 'C'": "_" * SIZE + "C",
        "'(' x 1M + 'C'": "(" * SIZE + "C",
        "'\" ' x 500k": _rep('" ') + "A cup",
        "'\"' x 1M": '"' * SIZE,
        "digits": "1" * SIZE,
        "'ab' x 500k": _rep("ab"),
        "one 1 MB word + ' B'": "x" * SIZE + " B",
        "loop 'The answer is A. '": _rep("The answer is A. "),
        "loop 'Answer: a cup. '": _rep("Answer: a cup. "),
        "loop 'correct option is B. Answer: B. '": _rep("The correct option is B. Answer: B. "),
        "loop 'I choose I '": _rep("I choose I "),
        "loop 'not A '": _rep("not A "),
        "loop 'A cup. '": _rep("A cup. "),
        "loop 'B is the correct answer. '": _rep("B is the correct answer. "),
        "loop 'I think '": _rep("I think "),
        "loop 'Confidence: 5% '": _rep("Confidence: 5% "),
        "'*' x 1M + 'confidence'": "*" * SIZE + "confidence",
        "'Answer:' + '*' x 1M": "Answer:" + "*" * SIZE,
        "loop 'move left slowly '": _rep("move left slowly "),
        "loop 'Score: 3\\n'": _rep("Score: 3\n"),
        "loop 'yes\\n'": _rep("yes\n"),
        "loop 'Verdict:\\n'": _rep("Verdict:\n"),
        "140k distinct lines": "".join(f"{i}\n" for i in range(SIZE // 7)),
        "unclosed fenced blocks": _rep("<<<DATA response 0123456789abcdef BEGIN>>>\n"),
        "python dict 1 MB": "{'Score': 1, " + _rep("'k': 1, ") + "}",
        "'{\"' + '}' x 1M": '{"' + "}" * SIZE,
        "unclosed <think> + prose": "<think>" + prose,
        "failed request + prose": "[LMMS_EVAL_REQUEST_FAILED after 3 retries] " + prose,
        "trace echo x 1 MB": _rep('{"reasoning_steps": [{"step": 1, "tool": "OCR", "output": "x"}], '),
    }
    # One dotless "ı" (which IGNORECASE reads as "i") makes a text non-ASCII: every pass over it is then slower.
    for label in ("cot prose, curly quotes", "loop 'Answer: a cup. '", "loop 'I choose I '", "loop 'A cup. '",
                  "loop 'not A '"):
        texts[f"{label} + 'ı'"] = texts[label][:-2] + " ı"
    return texts


def parsers() -> dict[str, Callable[[str], Any]]:
    from lmms_agentic.adapters.core.extract import extract_choice, split_confidence
    from lmms_agentic.adapters.loops import check_response
    from lmms_agentic.judges import AnyOf, ChoiceParser, JsonObjectParser, Number, ScoreParser, Text, YesNoParser
    from lmms_agentic.judges.parsers import clean_reply, looks_like_refusal
    from lmms_agentic.tasks.agentx.core import release_data
    from lmms_agentic.tasks.agentx.core.trace import parse_trace
    from lmms_agentic.tasks.robovista.core.parity import parse_answer

    options = ["move left", "move left slowly", "lift the cup", "stop"]
    score, yes_no, choice = ScoreParser(1, 5), YesNoParser(), ChoiceParser("ABCD")
    rubric = JsonObjectParser({"Score": Number(0, 1), "Justification": Text()}, score="Score",
                              numeric_strings=True, python_literals=True)
    agentx_judge = AnyOf([rubric, ScoreParser(0, 1, integer=False)])

    def fresh(parser: Callable[[str], Any]) -> Callable[[str], Any]:
        def call(text: str) -> Any:
            clean_reply.cache_clear()  # (AnyOf's shared cleaning must not make a repeat look free)
            return parser(text)

        return call

    return {
        "extract_choice (4 options)": lambda t: extract_choice(t, 4),
        "extract_choice (option texts)": lambda t: extract_choice(t, options),
        "split_confidence": split_confidence,
        "robovista parity_20260706": lambda t: parse_answer(t, 5, "parity_20260706"),
        "robovista parity_20260714": lambda t: parse_answer(t, 5, "parity_20260714"),
        "agentx parse_trace": lambda t: parse_trace(t, release_data.TOOL_NAMES, release_data.LEGACY_ALIASES),
        "judge ScoreParser": fresh(score),
        "judge YesNoParser": fresh(yes_no),
        "judge ChoiceParser": fresh(choice),
        "judge looks_like_refusal": fresh(looks_like_refusal),
        "judge JsonObjectParser (rubric)": fresh(rubric),
        "judge AnyOf(rubric, score)": fresh(agentx_judge),
        "loops check_response": lambda t: check_response(t, answered=False),
    }


class _Timeout(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def time_call(function: Callable[[str], Any], text: str, repeats: int) -> tuple[float | None, str]:
    """(best CPU ms or None on timeout, error name) of ``function(text)``."""
    best: float | None = None
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        for _ in range(repeats):
            signal.setitimer(signal.ITIMER_REAL, TIMEOUT_S)
            started = time.process_time()
            try:
                function(text)
            except _Timeout:
                return None, "timeout"
            except Exception as exc:  # a parser must never raise: reported as a failure
                return (time.process_time() - started) * 1000, type(exc).__name__
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            elapsed = (time.process_time() - started) * 1000
            best = elapsed if best is None else min(best, elapsed)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return best, ""


def run(quick: bool = False) -> list[Figure]:
    texts = inputs()
    if quick:
        texts = dict(list(texts.items())[::3])
    figures = []
    for name, parser in parsers().items():
        rows: list[tuple[str, float | None, str]] = []
        for label, text in texts.items():
            ms, error = time_call(parser, text, 1 if quick else REPEATS)
            rows.append((label, ms, error))
        timed_out = [label for label, ms, _ in rows if ms is None]
        raised = [f"{label} ({error})" for label, ms, error in rows if error and ms is not None]
        measured = sorted(((ms, label) for label, ms, _ in rows if ms is not None), reverse=True)
        worst = TIMEOUT_S * 1000 if timed_out else (measured[0][0] if measured else 0.0)
        median = measured[len(measured) // 2][0] if measured else 0.0
        detail = (f"worst: {timed_out[0] + ' (> 10 s)' if timed_out else measured[0][1]}; median {median:.1f} ms"
                  + (f"; raised on {', '.join(raised)}" if raised else ""))
        figure = at_most(SECTION, f"{name}: worst of {len(rows)} inputs", worst, LIMIT_MS, "ms", detail,
                         per_input_ms={label: ms for label, ms, _ in rows}, timeouts=timed_out, raised=raised)
        if raised:
            figure.ok = False
        figures.append(figure)
    return figures


if __name__ == "__main__":
    import sys

    for figure in run(quick="--quick" in sys.argv):
        print(f"{figure.name:55s} {figure.shown():>12s}  {figure.target:10s} {figure.detail}", flush=True)
