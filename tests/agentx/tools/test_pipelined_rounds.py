"""The batched round loop in cohorts (`cohorts.py`): one cohort's tool steps run while the other cohort's model
call is in flight (shown with a barrier, no timing), the model is still called one `generate_until` at a time, a
late tool step does not hold the model, and the responses are lmms-eval's sequential loop's; which backends get
cohorts.  Tests that check the exact batches wait for late steps as long as it takes (`exact_batches`)."""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from PIL import Image

from lmms_agentic.adapters.agentic import cohorts, loop
from lmms_agentic.adapters.agentic.tool_runtime import Observation
from lmms_agentic.tasks.agentx.tools import hooks
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall

from .scripts import call, final

KWARGS = {"max_steps": 8, "video_mode": "frames", "n_frames": 8}
REPLIES_SO_FAR = re.compile(r"\n\nReply \d+:\n")
DEADLOCK_GUARD_S = 20.0
"""How long a side waits at the barrier before the test calls the overlap missing (never reached when it holds)."""


@pytest.fixture
def exact_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batches as the cohorts give them: a due step is always waited for (never left to a later call)."""
    monkeypatch.setattr(cohorts, "LAG_GRACE_S", DEADLOCK_GUARD_S)


@pytest.fixture(scope="module")
def docs() -> list[dict[str, Any]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        from lmms_agentic.tasks.agentx import hooks as agentx_hooks

        return [dict(row) for row in agentx_hooks.all_docs()][:8]


class ScriptedModel:
    """A simple model: document `i` calls Calculator `stops[i]` times, then answers; it records each call's
    documents and fails the test if two calls overlap.  `barrier`: calls `meet` (1-based) wait there for the tool
    steps of the other cohort, which must be running at the same time."""

    is_simple = True
    agentic_tool_overlap = True

    def __init__(self, docs: list[dict[str, Any]], stops: list[int], barrier: threading.Barrier | None = None,
                 meet: Sequence[int] = ()) -> None:
        self.task_dict = {"t": {"test": docs}}
        self.stops, self.barrier, self.meet = stops, barrier, set(meet)
        self.calls: list[list[int]] = []
        self.busy = threading.Lock()
        self.problems: list[str] = []

    def generate_until(self, requests: list[Any]) -> list[str]:
        if not self.busy.acquire(blocking=False):
            self.problems.append("two model calls at once")
            return [""] * len(requests)
        try:
            self.calls.append([request.args[3] for request in requests])
            if self.barrier is not None and len(self.calls) in self.meet:
                try:
                    self.barrier.wait(DEADLOCK_GUARD_S)
                except threading.BrokenBarrierError:
                    self.problems.append(f"model call {len(self.calls)}: no tool step ran beside it")
            return [final("4") if len(REPLIES_SO_FAR.findall(r.args[0])) >= self.stops[r.args[3]] else
                    call("Calculator", {"expression": "2+2"}) for r in requests]
        finally:
            self.busy.release()


class Tools:
    """A tool runtime answering every call with "4"; with a barrier, each call waits there for a model call."""

    def __init__(self, model: ScriptedModel | None = None) -> None:
        self.model = model

    def execute(self, doc: Mapping[str, Any], bound: BoundCall, visuals: Sequence[Image.Image],
                used_gold_steps: Sequence[int] = (), n_inputs: int | None = None) -> Observation:
        if self.model is not None and self.model.barrier is not None:
            try:
                self.model.barrier.wait(DEADLOCK_GUARD_S)
            except threading.BrokenBarrierError:
                self.model.problems.append(f"a tool step of {doc['id']} saw no model call in flight")
        return Observation("4", "ok", "local", 0.01)


def _requests(docs: list[dict[str, Any]], runtime: Tools) -> list[Any]:
    from lmms_eval.api.instance import Instance

    to_text = functools.partial(hooks.doc_to_text, lmms_eval_specific_kwargs=KWARGS, runtime=runtime)
    to_visual = functools.partial(hooks.doc_to_visual, lmms_eval_specific_kwargs=KWARGS)
    return [Instance(request_type="generate_until_agentic", idx=0, metadata={"task": "t", "doc_id": i, "repeats": 1},
                     arguments=(hooks.doc_to_text(doc, KWARGS), {"max_agentic_steps": 8, "until": []}, to_visual,
                                to_text, i, "t", "test"))
            for i, doc in enumerate(docs)]


def _sequential(docs: list[dict[str, Any]], stops: list[int]) -> list[str]:
    return list(loop.run_sequential(ScriptedModel(docs, stops), _requests(docs, Tools()),
                                       agentic_trace_mode="full"))


@pytest.mark.usefixtures("exact_batches")
def test_one_cohorts_tools_run_while_the_others_model_call_is_in_flight(docs: list[dict[str, Any]],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Four episodes, three tool calls each, in two cohorts: calls 2 to 7 each wait at a barrier for the two tool
    steps of the cohort the previous call served, and those steps wait there for the model call; without the
    overlap a side would time out.  The first call has no tools beside it, nor has the last (the other cohort is
    done)."""
    monkeypatch.delenv(cohorts.ENV_COHORTS, raising=False)
    four, stops = docs[:4], [3, 3, 3, 3]
    model = ScriptedModel(four, stops, threading.Barrier(3), meet=range(2, 8))
    responses = loop.run_generate_until_agentic(model, _requests(four, Tools(model)), agentic_trace_mode="full")
    assert model.problems == []
    assert model.calls == [[0, 1], [2, 3]] * 4  # cohorts in turn: three calls and the answer each
    assert responses == _sequential(four, stops)


@pytest.mark.usefixtures("exact_batches")
@pytest.mark.parametrize("n_cohorts", ["1", "2", "3"])
def test_episodes_of_different_lengths_give_the_sequential_results(docs: list[dict[str, Any]], n_cohorts: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Episodes ending at different rounds (one at the step limit): every episode gets each of its replies once,
    the cohorts shrink as episodes end, and each response is the sequential loop's (full trace)."""
    monkeypatch.setenv(cohorts.ENV_COHORTS, n_cohorts)
    docs, stops = docs[:6], [0, 1, 2, 5, 9, 3]  # 9 > the limit: stopped at 8 rounds
    model = ScriptedModel(docs, stops)
    responses = loop.run_generate_until_agentic(model, _requests(docs, Tools()), agentic_trace_mode="full")
    assert model.problems == []
    assert responses == _sequential(docs, stops)
    sent = [doc for batch in model.calls for doc in batch]
    assert {doc: sent.count(doc) for doc in range(len(docs))} == {i: min(stop + 1, 8) for i, stop in enumerate(stops)}
    if n_cohorts == "1":  # round-synchronous: every unfinished episode in each call
        assert model.calls[:3] == [[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5], [2, 3, 4, 5]]
    else:
        assert max(len(batch) for batch in model.calls) == -(-len(docs) // int(n_cohorts))


class LateTools(Tools):
    """Tools whose first call for document `late` returns only once the model has had `until` calls."""

    def __init__(self, model: ScriptedModel, late: int, until: int) -> None:
        super().__init__()
        self.late_model, self.late, self.until, self.held = model, late, until, False

    def execute(self, doc: Mapping[str, Any], bound: BoundCall, visuals: Sequence[Image.Image],
                used_gold_steps: Sequence[int] = (), n_inputs: int | None = None) -> Observation:
        if doc["id"] == self.late_model.task_dict["t"]["test"][self.late]["id"] and not self.held:
            self.held = True
            deadline = time.monotonic() + DEADLOCK_GUARD_S
            while len(self.late_model.calls) < self.until and time.monotonic() < deadline:
                time.sleep(0.005)
            if len(self.late_model.calls) < self.until:
                self.late_model.problems.append(f"the model waited for {doc['id']}'s late tool step")
        return super().execute(doc, bound, visuals, used_gold_steps, n_inputs)


def test_a_late_tool_step_does_not_hold_the_model(docs: list[dict[str, Any]],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Four episodes in two cohorts, two tool calls each; the first tool step of episode 0 ends only after the
    third model call: that call goes without it (two other episodes whose steps ended), episode 0 follows in a later
    call, and every response is still the sequential loop's."""
    monkeypatch.delenv(cohorts.ENV_COHORTS, raising=False)
    four, stops = docs[:4], [2, 2, 2, 2]
    model = ScriptedModel(four, stops)
    responses = loop.run_generate_until_agentic(model, _requests(four, LateTools(model, late=0, until=3)),
                                                agentic_trace_mode="full")
    assert model.problems == []
    assert model.calls[:2] == [[0, 1], [2, 3]]
    assert 0 not in model.calls[2] and len(model.calls[2]) == 2
    sent = [doc for batch in model.calls for doc in batch]
    assert {doc: sent.count(doc) for doc in range(4)} == {doc: 3 for doc in range(4)}
    assert responses == _sequential(four, stops)


class ApiLike:
    pass


ApiLike.__module__ = "lmms_eval.models.chat.openai"


class DerivedApi(ApiLike):
    pass


class Declared:
    agentic_tool_overlap = False


@pytest.mark.parametrize(("lm", "environ", "expected"), [
    (object(), {}, 1),  # an unknown (in-process) backend: tools between model calls
    (ApiLike(), {}, 2), (DerivedApi(), {}, 2),  # an API client, or a subclass of one
    (Declared(), {}, 1), (ApiLike(), {cohorts.ENV_COHORTS: "1"}, 1), (object(), {cohorts.ENV_COHORTS: " 3 "}, 3),
])
def test_cohorts_follow_the_variable_then_the_backend(lm: object, environ: dict[str, str], expected: int) -> None:
    assert cohorts.cohorts(lm, environ) == expected


@pytest.mark.parametrize("value", ["0", "9", "two", "-1"])
def test_a_bad_cohort_count_stops_the_run(value: str) -> None:
    with pytest.raises(ValueError, match=f"{cohorts.ENV_COHORTS}='{value}': use a whole number"):
        cohorts.cohorts(object(), {cohorts.ENV_COHORTS: value})


def test_the_scripted_model_declares_itself_api_like() -> None:
    """`agentic_scripted` does no model work, so the e2e tests run the cohorts through lmms-eval."""
    from lmms_agentic.harness.offline_model import ScriptedChoice

    assert ScriptedChoice.__module__ in cohorts.API_BACKENDS


@pytest.mark.usefixtures("exact_batches")
def test_a_backend_serving_two_at_once_gets_whole_waves(docs: list[dict[str, Any]],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """With `num_concurrent = 2` every call is a whole number of pairs: when an episode ends early, the odd one
    out of a cohort waits for the next call instead of taking a wave alone."""
    monkeypatch.delenv(cohorts.ENV_COHORTS, raising=False)
    eight = docs[:8]
    stops = [0] + [2] * 7
    model = ScriptedModel(eight, stops)
    model.num_concurrent = 2  # type: ignore[attr-defined]  # as lmms-eval's OpenAI client declares it
    responses = loop.run_generate_until_agentic(model, _requests(eight, Tools()), agentic_trace_mode="full")
    assert model.problems == []
    assert model.calls == [[0, 1, 2, 3], [4, 5, 6, 7], [1, 2], [3, 4, 5, 6], [7, 1], [2, 3, 4, 5], [6, 7]]
    assert responses == _sequential(eight, stops)


@pytest.mark.parametrize(("declared", "expected"), [(16, 16), (1, 1), (0, 1), (True, 1), ("16", 1), (None, 1)])
def test_the_wave_size_is_the_backends_declared_concurrency(declared: object, expected: int) -> None:
    class Backend:
        num_concurrent = declared

    assert cohorts.quantum(Backend()) == expected
