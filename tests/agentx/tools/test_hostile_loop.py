"""Hostile replies through the loop itself: each reply of the table is a model's first reply in an episode run by
lmms-eval's own sequential loop and by the batched loop (`adapters/agentic/loop.py`), the second reply answers, and
the stored response is scored by `hooks.record` as `process_results` does.  Every reply must become a round (an
invalid step the model is told about, or a call) and every episode a scored record, the same in both loops; none may
stop the evaluation (a Python set or bytes value once ended the run with no results file)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from PIL import Image

from lmms_agentic.adapters.agentic import switch
from lmms_agentic.adapters.agentic.tool_runtime import Observation
from lmms_agentic.tasks.agentx.tools import hooks
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall

from .scripts import final
from .test_e2e import _comparable

KWARGS = {"max_steps": 3, "video_mode": "frames", "n_frames": 8}
ANSWER = final("42", "after a hostile reply")


def _nested(levels: int, opener: str, closer: str, inner: str = "") -> str:
    return '{"tool": "Calculator", "arguments": ' + opener * levels + inner + closer * levels + "}"


# (id, first reply, the round it must become, a phrase its observation must hold)
HOSTILE: list[tuple[str, object, str, str]] = [
    ("set under args", '{"tool": "Calculator", "args": {1, 2}}', "invalid", "Python set"),
    ("set argument", "{'tool': 'Calculator', 'arguments': {'expression': {1, 2}}}", "invalid", "Python set"),
    ("set in a final list", '{"final_answer": [1, {"a": {2}}]}', "invalid", "Python set"),
    ("a set literal naming a tool", '{"tool", "Calculator"}', "invalid", "no JSON object"),
    ("bytes argument", '{"tool": "Calculator", "arguments": {"expression": b"1+1"}}', "invalid", "Python bytes"),
    ("bytes answer", "{'final_answer': {'value': b'x', 'justification': b'y'}}", "invalid", "Python bytes"),
    ("bytes around a call", "b'{\"tool\": \"Calculator\", \"arguments\": {\"expression\": \"1+1\"}}'", "call", "4"),
    ("complex", "{'tool': 'Calculator', 'arguments': 1+2j}", "invalid", "Python complex"),
    ("Ellipsis", "{'tool': ..., 'arguments': ...}", "invalid", "Python ellipsis"),
    ("tuple key", "{('a',): 1, 'tool': 'Calculator'}", "invalid", "key is a tuple"),
    ("NaN argument", '{"tool": "Calculator", "arguments": {"expression": NaN}}', "call", "4"),
    ("infinite argument", '{"tool": "Calculator", "arguments": {"expression": 1e99999}}', "call", "4"),
    ("5000-digit integer", _nested(1, "", "", "9" * 5000), "invalid", "5,000 digits"),
    ("1M nested lists", _nested(1_000_000, "[", "]"), "invalid", "first 100,000 characters"),
    ("30k nested Python dicts", _nested(30_000, "{'a': ", "}", "1"), "invalid", "Invalid reply"),
    ("500 nested lists", _nested(500, "[", "]"), "invalid", "nested more than 64"),
    ("50k unary minus", "{'tool': " + "-" * 50_000 + "1}", "invalid", "neither JSON nor a Python literal"),
    ("50k parentheses", "{'tool': " + "(" * 50_000 + "1" + ")" * 50_000 + "}", "invalid", "Invalid reply"),
    ("10 MB of braces", "{" * 10_000_000, "invalid", "Invalid reply"),
    ("20,000 calls", '{"tool": "OCR"}' * 20_000, "invalid", "several actions"),
    ("null bytes", '{"tool": "Calculator\x00", "arguments": {"expression": "1\x00"}}', "invalid",
     "neither JSON nor a Python literal"),
    ("lone surrogates", '{"thought": "a\ud800", "tool": "Calculator", "arguments": {"expression": "\\udfff"}}',
     "call", "4"),
    ("tool as an object", '{"tool": {"name": "OCR"}, "arguments": [1, 2]}', "call", "unknown tool"),
    ("arguments as a string", '{"tool": "OCR", "arguments": "image_1"}', "call", "must be a JSON object"),
    ("a JSON array", '[{"tool": "Calculator", "arguments": {"expression": "1+1"}}]', "call", "4"),
    ("empty", "", "invalid", "no JSON object"),
    ("not text: None", None, "invalid", "no JSON object"),
    ("not text: a list", ['{"final_answer": "x"}'], "invalid", "no JSON object"),
]


class AnyTool:
    """Answers every type-checked call with "4" (the tools are not what this file tests)."""

    def execute(self, doc: Mapping[str, Any], bound: BoundCall, visuals: Sequence[Image.Image],
                used_gold_steps: Sequence[int] = (), n_inputs: int | None = None) -> Observation:
        return Observation("4", "ok", "local", 0.0)


class Scripted:
    """A simple model: document i's first reply is HOSTILE[i]'s, then the answer."""

    is_simple = True

    def __init__(self, doc: dict[str, Any]) -> None:
        self.task_dict = {"t": {"test": [doc] * len(HOSTILE)}}
        self.rounds: dict[int, int] = {}

    def generate_until(self, requests: list[Any]) -> list[object]:
        replies = []
        for request in requests:
            doc_id = request.args[3]
            self.rounds[doc_id] = self.rounds.get(doc_id, 0) + 1
            replies.append(HOSTILE[doc_id][1] if self.rounds[doc_id] == 1 else ANSWER)
        return replies


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        from lmms_agentic.tasks.agentx import hooks as agentx_hooks

        return dict(next(iter(agentx_hooks.all_docs())))


def _run(doc: dict[str, Any], batch: bool) -> list[dict[str, Any]]:
    import lmms_eval.evaluator as evaluator
    from lmms_eval.api.instance import Instance

    to_text = functools.partial(hooks.doc_to_text, lmms_eval_specific_kwargs=KWARGS, runtime=AnyTool())
    to_visual = functools.partial(hooks.doc_to_visual, lmms_eval_specific_kwargs=KWARGS)
    first = hooks.doc_to_text(doc, KWARGS)
    requests = [Instance(request_type="generate_until_agentic", idx=0,
                         metadata={"task": "t", "doc_id": i, "repeats": 1},
                         arguments=(first, {"max_agentic_steps": 3, "until": []}, to_visual, to_text, i, "t", "test"))
                for i in range(len(HOSTILE))]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(evaluator, "_run_generate_until_agentic", evaluator._run_generate_until_agentic)
        assert switch.install({} if batch else {switch.ENV_BATCH: "0"}) is batch
        responses = evaluator._run_generate_until_agentic(Scripted(doc), requests, agentic_trace_mode="full")
    return [hooks.record(doc, [response], judge=False) for response in responses]


@pytest.fixture(scope="module")
def records(doc: dict[str, Any]) -> Iterator[dict[str, list[dict[str, Any]]]]:
    yield {"lmms-eval sequential": _run(doc, batch=False), "batched": _run(doc, batch=True)}


@pytest.mark.parametrize("loop", ["lmms-eval sequential", "batched"])
@pytest.mark.parametrize(("index", "kind", "phrase"), [(i, case[2], case[3]) for i, case in enumerate(HOSTILE)],
                         ids=[case[0] for case in HOSTILE])
def test_a_hostile_reply_is_a_round_of_a_scored_episode(records: dict[str, list[dict[str, Any]]], loop: str,
                                                        index: int, kind: str, phrase: str) -> None:
    record = records[loop][index]
    assert record["episode_error"] is None
    first, answer = record["rounds"]
    assert first["kind"] == kind and phrase in first["observation"], first["observation"][:300]
    assert answer["kind"] == "final" and record["execution"]["finished"] and record["exact_match"] is not None
    json.dumps(record, ensure_ascii=False, allow_nan=True).encode("utf-8")


def test_both_loops_score_every_hostile_episode_alike(records: dict[str, list[dict[str, Any]]]) -> None:
    assert _comparable(records["lmms-eval sequential"]) == _comparable(records["batched"])
