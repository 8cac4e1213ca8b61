"""Step limits never drop a record: lmms-eval's `max_agentic_steps` below the task's `max_steps` (e.g. `--gen_kwargs
max_agentic_steps=3`) ends every episode through the task, whole (`stopped: "step_limit"`, every round), in
lmms-eval's sequential loop and in the batched one; in process (a scripted model) and through the real CLI."""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters.agentic import steps as agentic_steps
from lmms_agentic.adapters.agentic import switch
from lmms_agentic.tasks.agentx.tools import hooks

from ...conftest import run_lmms_eval
from .scripts import call, gold_script, gold_steps, mini_records, write
from .test_e2e import logged_samples

KWARGS = {"max_steps": 8, "video_mode": "frames", "n_frames": 8}
NEVER_ENDS = {"0": call("NoSuchTool", {}),  # starts with "{": lmms-eval stored the bare reply, no state at all
              "2": "Let me think about it first."}  # lmms-eval's own fallback JSON: the state, but never stopped
LIMIT_STEPS = re.compile(r"at most (\d+) replies")


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    os.environ.setdefault("LMMS_AGENTIC_DATA", "mini")
    from lmms_agentic.tasks.agentx import hooks as agentx_hooks

    found = {row["id"]: dict(row) for row in agentx_hooks.all_docs()}
    return [found[key] for key in NEVER_ENDS]


class NeverFinishes:
    """A model that never answers; it keeps every context it was sent."""

    is_simple = True

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.task_dict = {"t": {"test": rows}}
        self.contexts: list[str] = []

    def generate_until(self, requests: list[Any]) -> list[str]:
        self.contexts.extend(request.args[0] for request in requests)
        return [NEVER_ENDS[self.task_dict["t"]["test"][request.args[3]]["id"]] for request in requests]


def requests(rows: list[dict[str, Any]], agentic_steps: int, to_text: Any = None) -> list[Any]:
    from lmms_eval.api.instance import Instance

    to_text = to_text or functools.partial(hooks.doc_to_text, lmms_eval_specific_kwargs=KWARGS)
    return [Instance(request_type="generate_until_agentic", idx=0, metadata={"task": "t", "doc_id": i, "repeats": 1},
                     arguments=(f"Describe the task.\n{hooks.doc_to_text(doc, KWARGS)}",
                                {"max_agentic_steps": agentic_steps, "until": []},
                                functools.partial(hooks.doc_to_visual, lmms_eval_specific_kwargs=KWARGS), to_text, i,
                                "t", "test"))
            for i, doc in enumerate(rows)]


@pytest.mark.parametrize("batch", [False, True], ids=["lmms-eval sequential", "batched"])
def test_lmms_eval_limit_below_max_steps_keeps_every_record(rows: list[dict[str, Any]], batch: bool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import lmms_eval.evaluator as evaluator

    monkeypatch.setattr(evaluator, "_run_generate_until_agentic", evaluator._run_generate_until_agentic)
    assert switch.install({} if batch else {switch.ENV_BATCH: "0"}) is batch
    model = NeverFinishes(rows)
    responses = evaluator._run_generate_until_agentic(model, requests(rows, 3), agentic_trace_mode="full")
    for doc, response in zip(rows, responses, strict=True):
        sample = hooks.record(doc, [response], judge=False)
        assert sample["episode_error"] is None, (doc["id"], response[:200])
        assert sample["execution"]["stopped"] == "step_limit" and sample["execution"]["max_steps"] == 3
        assert [entry["round"] for entry in sample["rounds"]] == [1, 2, 3]
        assert [entry["reply"] for entry in sample["rounds"]] == [NEVER_ENDS[doc["id"]]] * 3
        assert [entry["round_idx"] for entry in json.loads(response)["agentic_rounds"]] == [1, 2, 3]
    # the model was told the limit it runs under, from the first round on
    assert len(model.contexts) == 6 and all(LIMIT_STEPS.findall(c) == ["3"] for c in model.contexts)
    assert sum(c.startswith("Describe the task.\n") for c in model.contexts) == 2  # each first round kept its frame


def test_only_a_smaller_lmms_eval_limit_changes_a_request(rows: list[dict[str, Any]]) -> None:
    model = NeverFinishes(rows)
    for steps in (8, 12):  # equal or larger: the task's limit already ends the episode first
        before = requests(rows, steps)
        arguments = [request.arguments for request in before]
        assert [r.arguments for r in agentic_steps.step_limited(model, before)] == arguments
    foreign = requests(rows, 3, to_text=functools.partial(lambda doc, **_: "x", lmms_eval_specific_kwargs=KWARGS))
    assert agentic_steps.step_limited(model, foreign)[0].arguments == foreign[0].arguments  # another task's request
    lowered = agentic_steps.step_limited(model, requests(rows, 5))[0]
    assert lowered.args[3].keywords["lmms_eval_specific_kwargs"] == {**KWARGS, "max_steps": 5}
    assert agentic_steps.step_limited(model, [lowered])[0].args == lowered.args  # idempotent (repeats share a request)
    with pytest.raises(ValueError, match="max_agentic_steps is 0"):
        agentic_steps.step_limited(model, requests(rows, 0))


@pytest.mark.e2e
def test_lowered_max_agentic_steps_in_the_cli_keeps_every_record(tmp_path: Path) -> None:
    """`--gen_kwargs max_agentic_steps=3`: both loops keep every record (the never-finishing tasks and the gold
    traces longer than 3 replies stop at the limit) and log the same samples."""
    script = write(tmp_path, {**gold_script(), **{key: [reply] for key, reply in NEVER_ENDS.items()}})
    args = ["--model", "agentic_scripted", "--model_args", f"policy=script,script={script}", "--tasks", "agentx_tools",
            "--gen_kwargs", "max_agentic_steps=3", "--agentic_trace_mode", "full"]
    env = {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_BASE_URL": None, "LMMS_AGENTIC_JUDGE_PRESET": None}
    runs = {"sequential": run_lmms_eval(args, tmp_path / "sequential", env={**env, switch.ENV_BATCH: "0"}),
            "batched": run_lmms_eval(args, tmp_path / "batched", env={**env, switch.ENV_BATCH: None})}
    replies = {key: len(gold_steps(record)) + 1 for key, record in mini_records().items()}
    replies.update({key: 99 for key in NEVER_ENDS})
    for name, run in runs.items():
        run.assert_ok()
        samples = [s for task in ("agentx_tools_text_answer", "agentx_tools_generative") for s in run.samples(task)]
        records = [r for task in ("agentx_tools_text_answer", "agentx_tools_generative") for r in run.records(task)]
        assert sorted(str(r["id"]) for r in records) == sorted(replies), name
        for sample in records:
            key, execution = str(sample["id"]), sample["execution"]
            assert sample["episode_error"] is None, (name, key)
            assert execution["max_steps"] == 3 and execution["steps"] == min(3, replies[key]), (name, key)
            assert execution["stopped"] == ("step_limit" if replies[key] > 3 else None), (name, key)
            assert execution["finished"] == (replies[key] <= 3), (name, key)
        assert all(LIMIT_STEPS.findall(s["input"]) == ["3"] for s in samples), name
    for task in ("agentx_tools_text_answer", "agentx_tools_generative"):
        assert logged_samples(runs["sequential"], task) == logged_samples(runs["batched"], task)
