"""Which round loop runs `agentx_tools` (`adapters/agentic/loop.py`): the batched one by default, lmms-eval's own with
`LMMS_AGENTIC_AGENTIC_BATCH=0`; only `agentx_tools` requests are batched; the model is called one `generate_until`
at a time from one thread, never while the round's tools run."""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from PIL import Image

from lmms_agentic.adapters.agentic import loop, switch
from lmms_agentic.adapters.agentic.tool_runtime import Observation
from lmms_agentic.tasks.agentx.tools import hooks
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall

from .scripts import call, final

KWARGS = {"max_steps": 4, "video_mode": "frames", "n_frames": 8}
REPLIES_SO_FAR = re.compile(r"\n\nReply \d+:\n")


@pytest.fixture
def evaluator(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """lmms-eval's evaluator module; its agentic loop (and ours' memory of it) put back after the test."""
    import lmms_eval.evaluator as module

    monkeypatch.setattr(module, "_run_generate_until_agentic", module._run_generate_until_agentic)
    monkeypatch.setattr(loop, "_LMMS_EVAL_LOOP", loop._LMMS_EVAL_LOOP)
    yield module


@pytest.mark.parametrize(("value", "batch"), [
    (None, True), ("", True), ("1", True), ("true", True), (" Yes ", True), ("on", True),
    ("0", False), ("false", False), ("NO", False), ("off", False),
], ids=lambda v: repr(v))
def test_batched_unless_switched_off(value: str | None, batch: bool, evaluator: Any) -> None:
    environ = {} if value is None else {switch.ENV_BATCH: value}
    assert switch.install(environ) is batch
    assert evaluator._run_generate_until_agentic is (loop.run_generate_until_agentic if batch
                                                      else loop.run_sequential)
    described = switch.describe(batch, environ)
    assert described["round_loop"] == ("batched" if batch else "lmms-eval sequential")
    assert described["round_loop_switch"] == (f"{switch.ENV_BATCH}={value.strip()}" if value
                                              else f"default ({switch.ENV_BATCH} unset)")


@pytest.mark.parametrize("value", ["2", "batched", "maybe"])
def test_an_unknown_switch_value_stops_the_run(value: str, evaluator: Any) -> None:
    before = evaluator._run_generate_until_agentic
    with pytest.raises(ValueError, match=f"{switch.ENV_BATCH}='{value}': use 0"):
        switch.install({switch.ENV_BATCH: value})
    assert evaluator._run_generate_until_agentic is before


@pytest.fixture(scope="module")
def docs() -> list[dict[str, Any]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        from lmms_agentic.tasks.agentx import hooks as agentx_hooks

        return [dict(row) for row in agentx_hooks.all_docs()][:4]


class OneAtATime:
    """A simple model that fails the test if `generate_until` is entered twice at once or while a tool runs; it
    calls Calculator until its round `stop`, then answers."""

    is_simple = True

    def __init__(self, docs: list[dict[str, Any]], stop: int = 3) -> None:
        self.task_dict = {"t": {"test": docs}}
        self.stop = stop
        self.calls: list[int] = []
        self.busy = threading.Lock()
        self.tools_running = 0
        self.overlaps: list[str] = []

    def generate_until(self, requests: list[Any]) -> list[str]:
        if not self.busy.acquire(blocking=False):
            self.overlaps.append("two model calls at once")
            return [""] * len(requests)
        try:
            if self.tools_running:
                self.overlaps.append("a model call while tools ran")
            self.calls.append(len(requests))
            time.sleep(0.01)  # room for a concurrent caller to show
            return [final("4") if len(REPLIES_SO_FAR.findall(request.args[0])) >= self.stop else
                    call("Calculator", {"expression": "2+2"}) for request in requests]
        finally:
            self.busy.release()


class WatchedTools:
    """A tool runtime that answers every call and tells the model while a call runs."""

    def __init__(self, model: OneAtATime) -> None:
        self.model = model
        self.lock = threading.Lock()

    def execute(self, doc: Mapping[str, Any], bound: BoundCall, visuals: Sequence[Image.Image],
                used_gold_steps: Sequence[int] = (), n_inputs: int | None = None) -> Observation:
        with self.lock:
            self.model.tools_running += 1
        try:
            if self.model.busy.locked():
                self.model.overlaps.append("a tool ran during a model call")
            time.sleep(0.01)
            return Observation("4", "ok", "local", 0.01)
        finally:
            with self.lock:
                self.model.tools_running -= 1


def _requests(docs: list[dict[str, Any]], to_text: Any) -> list[Any]:
    from lmms_eval.api.instance import Instance

    return [Instance(request_type="generate_until_agentic", idx=0, metadata={"task": "t", "doc_id": i, "repeats": 1},
                     arguments=(hooks.doc_to_text(doc, KWARGS), {"max_agentic_steps": 4, "until": []},
                                functools.partial(hooks.doc_to_visual, lmms_eval_specific_kwargs=KWARGS), to_text, i,
                                "t", "test"))
            for i, doc in enumerate(docs)]


def test_one_model_call_at_a_time_and_never_during_tools(docs: list[dict[str, Any]], evaluator: Any) -> None:
    """What in-process backends (vLLM, Hugging Face) need: the batched loop sends one `generate_until` per round
    (every unfinished episode in it) and runs the round's tools between model calls."""
    model = OneAtATime(docs)
    to_text = functools.partial(hooks.doc_to_text, lmms_eval_specific_kwargs=KWARGS, runtime=WatchedTools(model))
    assert switch.install({}) is True
    responses = evaluator._run_generate_until_agentic(model, _requests(docs, to_text))
    assert model.overlaps == []
    assert model.calls == [len(docs)] * 4  # three calls and the answer, every episode in each round's batch
    for doc, response in zip(docs, responses, strict=True):
        record = hooks.record(doc, [response], judge=False)
        assert [r["kind"] for r in record["rounds"]] == ["call", "call", "call", "final"]


def test_only_agentx_tools_requests_are_batched(docs: list[dict[str, Any]], evaluator: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Another task's `generate_until_agentic` requests in the same run keep lmms-eval's loop (its `doc_to_text`
    was never meant to run on a thread pool); the responses stay in the requests' order."""
    def other_task(doc: Any, lmms_eval_specific_kwargs: Any = None, previous_output: Any = None,
                   round_idx: Any = None, previous_round_info: Any = None) -> Any:
        if round_idx is None:
            return "the other task's prompt"
        return None, None, True, [json.dumps({"other": round_idx})], {"state": {}}

    model = OneAtATime(docs)
    ours = _requests(docs[:2], functools.partial(hooks.doc_to_text, lmms_eval_specific_kwargs=KWARGS,
                                                 runtime=WatchedTools(model)))
    foreign = _requests(docs[2:], functools.partial(other_task, lmms_eval_specific_kwargs={}))
    seen_by_lmms_eval: list[Any] = []
    real_loop = loop.lmms_eval_loop()

    def spy(lm: Any, requests: list[Any], *args: Any, **kwargs: Any) -> list[Any]:
        seen_by_lmms_eval.extend(requests)
        return list(real_loop(lm, requests, *args, **kwargs))

    assert switch.install({}) is True
    monkeypatch.setattr(loop, "_LMMS_EVAL_LOOP", spy)
    mixed = [ours[0], foreign[0], ours[1], foreign[1]]
    responses = evaluator._run_generate_until_agentic(model, mixed)
    assert seen_by_lmms_eval == foreign
    assert responses[1] == responses[3] == '{"other": 1}'
    assert all(hooks.record(docs[i], [responses[j]], judge=False)["execution"]["finished"]
               for i, j in ((0, 0), (1, 2)))
    assert model.calls[:2] == [1, 1] and model.calls[2:] == [2] * 4 and model.overlaps == []
