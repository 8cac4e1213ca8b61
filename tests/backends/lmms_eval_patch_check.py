"""Checks that run inside a patched copy of lmms-eval (copied there by `tests/backends/test_lmms_eval_patch.py`).

Not collected by this project's suite (it imports the copy, not the installed lmms-eval, and no lmms_agentic): the
subprocess that runs the patch's own test runs these too. They check that the copy is what was imported and that
lmms-eval's `evaluate()` with the parsed `--agentic_batch_rounds` switch on or off gives every request of a fake
agentic task the same response, the switch on in one `generate_until` call per round.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any
from unittest.mock import patch

import lmms_eval
import pytest
from lmms_eval import __main__ as main_module
from lmms_eval import evaluator
from lmms_eval.api.instance import Instance

TASK = "fake_agentic"
ROUNDS = {0: 2, 1: 1, 2: 3}
"""Rounds each document needs before its step ends it."""


class _Stop(Exception):
    """Raised by the fake model's `clean()`, which `evaluate()` calls once every request has its response."""


def _step(doc: dict[str, int], previous_output: list[str] | None = None, round_idx: int | None = None,
          previous_round_info: Any = None) -> Any:
    if round_idx is None:
        return f"start {doc['id']}"
    assert previous_output is not None
    info = {"state": {"doc": doc["id"], "round": round_idx}, "tool_calls": round_idx, "last_tool_result": round_idx}
    if round_idx >= ROUNDS[doc["id"]]:
        return None, None, True, [*previous_output, json.dumps({"doc": doc["id"], "outputs": previous_output})], info
    return [f"view {doc['id']}.{round_idx}"], f"{doc['id']}.{round_idx + 1} <- {previous_output[-1]}", False, None, info


class _Task:
    VERSION = 0

    def __init__(self) -> None:
        self._instances = [
            Instance(request_type="generate_until_agentic",
                     arguments=(_step(doc), {"max_agentic_steps": 5}, lambda doc: [], _step, doc["id"], TASK, "test"),
                     idx=0, metadata={"task": TASK, "doc_id": doc["id"], "repeats": 1})
            for doc in self.docs()]

    @property
    def instances(self) -> list[Instance]:
        return self._instances

    @staticmethod
    def docs() -> list[dict[str, int]]:
        return [{"id": doc_id} for doc_id in ROUNDS]

    def dump_config(self) -> dict[str, Any]:
        return {"task": TASK}

    def build_all_requests(self, **kwargs: Any) -> None:
        return None


class _Model:
    is_simple = True
    accelerator = None

    def __init__(self) -> None:
        self.task_dict = {TASK: {"test": _Task.docs()}}
        self.batch_sizes: list[int] = []

    def generate_until(self, requests: list[Instance]) -> list[str]:
        self.batch_sizes.append(len(requests))
        return [f"reply to ({request.args[0]}) seeing {request.args[2](None)}" for request in requests]

    def clean(self) -> None:
        raise _Stop


def _evaluate(*flags: str) -> tuple[list[list[str]], list[int]]:
    argv = ["lmms-eval", "--model", "fake", "--tasks", TASK, "--agentic_trace_mode", "full", *flags]
    with patch.object(sys, "argv", argv):
        _, args = main_module.parse_eval_args()
    task, model = _Task(), _Model()
    with pytest.raises(_Stop):
        evaluator.evaluate(lm=model, task_dict={TASK: task}, cli_args=args)
    return [list(request.resps) for request in task.instances], model.batch_sizes


def test_the_patched_copy_is_imported() -> None:
    copy = Path(os.environ["LMMS_EVAL_PATCHED_COPY"]).resolve()
    assert Path(lmms_eval.__file__).resolve().parent == copy / "lmms_eval"
    assert evaluator._run_generate_until_agentic.__module__ == "lmms_eval.evaluator"


def test_evaluate_gives_the_same_responses_with_the_switch_on_and_off() -> None:
    sequential, sequential_calls = _evaluate()
    batched, batched_calls = _evaluate("--agentic_batch_rounds")
    assert batched == sequential
    assert [json.loads(responses[0])["doc"] for responses in batched] == list(ROUNDS)
    assert sequential_calls == [1] * sum(ROUNDS.values())
    assert batched_calls == [3, 2, 1]
