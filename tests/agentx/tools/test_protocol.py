"""The executed protocol without lmms-eval: replay, scripted policies (correct, bad arguments, loops, never
finishing), the execution metrics and the batched loop against lmms-eval's sequential one."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest

from lmms_agentic.adapters.agentic.tool_runtime import ToolRuntime
from lmms_agentic.tasks.agentx.tools import execution, hooks, protocol

from .scripts import KWARGS, call, final, gold_script, play


def test_gold_policy_runs_real_local_tools_and_replays_the_rest(docs: dict[str, Any], runtime: ToolRuntime) -> None:
    # task "2"'s gold ObjectCounter steps give only the image: no call is identical to them, so neither replays
    record = play(docs["2"], gold_script()["2"], runtime)
    tools = [(e["tool"], e["backend"], e["status"]) for e in record["rounds"] if e["kind"] == "call"]
    assert tools == [("ObjectCounter", "replay", "unavailable"), ("ObjectCounter", "replay", "unavailable"),
                     ("Calculator", "local", "ok")]
    assert [e["observation"] for e in record["rounds"]][2] == "2"
    assert record["execution"]["finished"] and record["execution"]["valid"] == 3
    assert record["toolset_f1_prog"] == 1.0
    # task "7"'s gold step gives the image and the text: the gold call replays its recorded output
    record = play(docs["7"], gold_script()["7"], runtime)
    entry = record["rounds"][0]
    assert (entry["tool"], entry["backend"], entry["status"], entry["observation"], entry["gold_step"]) == \
        ("ObjectCounter", "replay", "ok", "4", 0)


def test_replay_miss_is_an_unavailable_observation(docs: dict[str, Any], runtime: ToolRuntime) -> None:
    record = play(docs["9"], [call("WebSearch", {"query": "weather today"}), final("x")], runtime)
    entry = record["rounds"][0]
    assert entry["status"] == "unavailable"
    assert entry["observation"] == ("WebSearch has no recorded output for this call "
                                    "(replay answers only a call identical to a reference step).")


def test_bad_arguments_do_not_end_the_run(docs: dict[str, Any], runtime: ToolRuntime) -> None:
    replies = [call("Calculator", {"expr": "1+1"}), "I think it is 46", call("Calculator", {"expression": "8*2+5*6"}),
               final("46")]
    record = play(docs["3"], replies, runtime)
    kinds = [(e["kind"], e["status"]) for e in record["rounds"]]
    assert kinds == [("call", "invalid_arguments"), ("invalid", None), ("call", "ok"), ("final", None)]
    assert record["exact_match"] is True
    summary = record["execution"]
    assert execution.valid_call_rate([summary]) == pytest.approx(1 / 3)
    assert execution.tool_error_rate([summary]) == 0.0


def test_loop_and_never_finishing_stop_at_the_step_limit(docs: dict[str, Any], runtime: ToolRuntime) -> None:
    record = play(docs["3"], [call("Calculator", {"expression": "1+1"})], runtime)
    assert record["execution"]["steps"] == 4 and not record["execution"]["finished"]
    assert record["execution"]["stopped"] == "step_limit" and record["loop"]["loop"] is True
    assert execution.finished_rate([record["execution"]]) == 0.0


def test_image_outputs_become_new_visuals(docs: dict[str, Any], runtime: ToolRuntime) -> None:
    outputs = [call("DrawBoundingBox", {"image": "image_1", "bbox": "(2, 2, 30, 30)"})]
    visuals, context, terminal, _, info = hooks.doc_to_text(docs["6"], KWARGS, previous_output=outputs, round_idx=1,
                                                            runtime=runtime)
    assert not terminal and len(visuals) == 2 and "attached as image_2" in context
    assert info["state"]["rounds"][0]["image"] == "image_2"


def test_aggregations_pool_over_gathered_ranks() -> None:
    a = {"calls": 2, "valid": 1, "errors": 1, "unavailable": 0, "invalid_replies": 0, "steps": 3, "finished": True,
         "per_tool": {"OCR": {"calls": 2, "valid": 1, "errors": 1, "unavailable": 0, "seconds": 1.0,
                              "backends": ["local"]}}}
    b = {"calls": 2, "valid": 2, "errors": 0, "unavailable": 1, "invalid_replies": 2, "steps": 5, "finished": False,
         "per_tool": {"OCR": {"calls": 2, "valid": 2, "errors": 0, "unavailable": 1, "seconds": 1.0,
                              "backends": ["replay"]}}}
    assert execution.valid_call_rate([a, b]) == pytest.approx(3 / 6)
    assert execution.tool_error_rate([a, b]) == pytest.approx(1 / 3)
    assert execution.steps_used([a, b]) == 4.0 and execution.finished_rate([a, b]) == 0.5
    assert execution.tool_breakdown([b, a])["OCR"] == {"calls": 4, "valid_rate": 0.75, "error_rate": 1 / 3,
                                                        "unavailable_rate": 1 / 3, "mean_seconds": 2 / 3,
                                                        "backends": ["local", "replay"]}


def test_batched_loop_matches_lmms_eval_sequential_loop(docs: dict[str, Any], runtime: ToolRuntime) -> None:
    from lmms_eval.api.instance import Instance

    from lmms_agentic.adapters.agentic import loop as batched_module
    from lmms_agentic.adapters.agentic.loop import lmms_eval_loop, run_generate_until_agentic

    rows = [docs[k] for k in ("2", "3", "6", "9")]
    script = {**gold_script(), "6": [call("Calculator", {"expression": "1+1"})]}  # "6" never finishes

    class Scripted:
        is_simple = True
        def __init__(self) -> None:
            self.task_dict = {"t": {"test": rows}}
            self.turns: dict[int, int] = {}
            self.batches: list[int] = []

        def generate_until(self, requests: list[Any]) -> list[str]:
            self.batches.append(len(requests))
            out = []
            for request in requests:
                doc_id = request.args[3]
                turn = self.turns.get(doc_id, 0)
                self.turns[doc_id] = turn + 1
                replies = script[rows[doc_id]["id"]]
                out.append(replies[min(turn, len(replies) - 1)])
            return out

    to_text = functools.partial(hooks.doc_to_text, lmms_eval_specific_kwargs=KWARGS, runtime=runtime)

    def requests() -> list[Any]:
        return [Instance(request_type="generate_until_agentic", idx=0,
                         metadata={"task": "t", "doc_id": i, "repeats": 1},
                         arguments=(hooks.doc_to_text(doc, KWARGS), {"max_agentic_steps": 4, "until": []},
                                    functools.partial(hooks.doc_to_visual, lmms_eval_specific_kwargs=KWARGS),
                                    to_text, i, "t", "test")) for i, doc in enumerate(rows)]

    def untimed(responses: list[str]) -> list[Any]:
        data = [json.loads(r) for r in responses]
        for item in data:
            for entry in item["state"]["rounds"]:
                entry.pop("seconds")
                entry.pop("cached")
        return data

    sequential_model, batched_model = Scripted(), Scripted()
    sequential = lmms_eval_loop()(sequential_model, requests(), agentic_trace_mode="basic")
    batched = run_generate_until_agentic(batched_model, requests(), workers=4)
    assert untimed(sequential) == untimed(batched)
    assert len(sequential_model.batches) == sum(batched_model.batches) and max(batched_model.batches) == 4
    assert protocol.state_of(batched[2])["stopped"] == "step_limit"
    assert batched_module._round_pool(4) is batched_module._round_pool(4)  # the round pool persists between runs
