"""lmms-eval hooks of `agentx_tools` (`output_type: generate_until_agentic`): the executed protocol's glue.

`doc_to_text` is lmms-eval's agentic callable: called with only the task kwargs it returns the first round's
context; called with `previous_output`/`round_idx`/`previous_round_info` it applies the model's last reply
(`protocol.round_step`: one tool call executed by the runtime, an answer, or an invalid step) and returns
`(visuals, next_context, terminal, outputs, round_info)`.  The step limit is `max_steps` in
`lmms_eval_specific_kwargs` (declared next to `max_agentic_steps` in the YAML; the smaller one wins: the shared round
loop, which `doc_to_text` asks for with `batched_rounds` (`adapters/agentic/`), lowers `max_steps` to lmms-eval's
limit, so the task always ends the episode and stores its whole record; the state keeps the limit it ran under).
`process_results` rebuilds the executed trace in the one-shot Agent-X record shape (each call a step whose
`tool_output` is the real observation), reads it as an object (`trace.trace_from_object`, parse_path
`episode`: no JSON text in between, so a `<think>` marker in a thought or an observation stays text) and scores
it with the existing path: the core's deterministic fields
(`core/scoring.py`), the ten judged metrics (`judge.py`, so the judge sees the real outputs), plus the execution
summary (`execution.py`).  `process_docs` only loads the documents: the round loop makes the tool runtime
(`prepare_episodes`) and the plugin writes its facts into the results file (`results_facts`).  The documents
are `agentx`'s (`tasks/agentx/hooks.py`), so both protocols see the same tasks; their scores are not comparable
(README).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import datasets
from PIL import Image

from lmms_agentic.adapters import provenance
from lmms_agentic.adapters.agentic.steps import batched_rounds
from lmms_agentic.adapters.agentic.tool_runtime import ToolRuntime
from lmms_agentic.judges.client import default_client
from lmms_agentic.tasks.agentx import hooks as agentx_hooks
from lmms_agentic.tasks.agentx.core import metrics, release_data
from lmms_agentic.tasks.agentx.core.records import BENCHMARK
from lmms_agentic.tasks.agentx.core.scoring import score_trace
from lmms_agentic.tasks.agentx.core.trace import trace_from_object
from lmms_agentic.tasks.agentx.judge import judge_doc, style_for
from lmms_agentic.tasks.agentx.tools import EXECUTION_METRICS, execution, protocol
from lmms_agentic.tasks.agentx.tools.toolset import default_runtime

DEFAULT_MAX_STEPS = protocol.DEFAULT_MAX_STEPS
LOOP_REPEATS = 3
RUNTIME_KEY = execution.RUNTIME_KEY


def prepare_episodes(runtime: ToolRuntime | None = None) -> None:
    """Run by the round loop before the first model call (`batched_rounds(prepare=...)`): the tool runtime made and
    its tool server checked (one that cannot serve the `remote` tools stops the run here, `ToolServerError`, one
    line); the runtime's facts asked for when the results file is written (`results_facts`)."""
    runtime = runtime or default_runtime()
    runtime.check_server()
    provenance.provide(RUNTIME_KEY, functools.partial(results_facts, runtime))


def results_facts(runtime: ToolRuntime) -> dict[str, Any]:
    """The results file's `lmms_agentic.data.agentx_tools` at the end of the run: tool backends (a `remote` one with
    the server's backend), limits, sandbox, diffusion settings, the protocol version and the infrastructure failures
    (each also a warning line, `execution.failure_lines`)."""
    facts: dict[str, Any] = {"tools": runtime.describe(), "protocol": protocol.PROTOCOL_VERSION}
    failures = runtime.failures.counts()
    if failures:
        facts["infrastructure_failures"] = failures
        execution.failure_lines(failures)
    return facts


def docs_text_answer(placeholder: datasets.Dataset) -> datasets.Dataset:
    return agentx_hooks.docs_text_answer(placeholder)


def docs_generative(placeholder: datasets.Dataset) -> datasets.Dataset:
    return agentx_hooks.docs_generative(placeholder)


max_steps = protocol.max_steps


def _kwargs(kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"video_mode": "frames", "n_frames": 8, **(kwargs or {})}


def input_visuals(doc: Mapping[str, Any], kwargs: Mapping[str, Any] | None = None) -> list[Image.Image]:
    """The task's images, or its sampled video frames (never a video path: tools take images)."""
    visuals = agentx_hooks.doc_to_visual(doc, {**_kwargs(kwargs), "video_mode": "frames"})
    return [v for v in visuals if isinstance(v, Image.Image)]


def doc_to_visual(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
                  ) -> list[Image.Image]:
    return input_visuals(doc, lmms_eval_specific_kwargs)


def doc_to_target(doc: Mapping[str, Any]) -> str:
    return agentx_hooks.doc_to_target(doc)


@batched_rounds(step_limit="max_steps", default_steps=protocol.DEFAULT_MAX_STEPS, prepare=prepare_episodes)
def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None,
                previous_output: list[str] | None = None, round_idx: int | None = None,
                previous_round_info: Mapping[str, Any] | None = None,
                runtime: ToolRuntime | None = None) -> Any:
    limit = max_steps(lmms_eval_specific_kwargs)
    if round_idx is None:
        return protocol.initial_context(doc["query"], len(input_visuals(doc, lmms_eval_specific_kwargs)), limit)
    if previous_round_info is None:
        visuals = input_visuals(doc, lmms_eval_specific_kwargs)
        state = protocol.new_state(len(visuals), limit)
    else:
        visuals = list(previous_round_info["visuals"])
        state = {**previous_round_info["state"], "rounds": list(previous_round_info["state"]["rounds"])}
    reply = (previous_output or [""])[-1]
    entry, _ = protocol.round_step(doc, reply, state, visuals, runtime or default_runtime(), limit)
    summary = execution.summarise(state, limit)
    info = {"state": state, "visuals": visuals, "tool_calls": summary["calls"],
            "valid_tool_calls": summary["valid"], "invalid_steps": summary["invalid_replies"],
            "last_tool_result": entry["observation"]}
    if state["finished"] or state["stopped"]:
        return None, None, True, [protocol.episode_payload(state)], info
    kept = [protocol.stored_reply(output) for output in previous_output or []]  # (lmms-eval logs them at its limit)
    return list(visuals), protocol.transcript(doc["query"], state, limit), False, kept, info


# --------------------------------------------------------------------------- scoring
def executed_trace(state: Mapping[str, Any]) -> dict[str, Any]:
    """The executed episode in the one-shot record shape the Agent-X parser and judges read."""
    steps = [{"step": i, "task": entry.get("thought", ""), "tool_used": entry.get("tool") or "",
              "tool_input": entry.get("arguments"), "tool_output": entry.get("observation", ""),
              "thought": entry.get("thought", "")}
             for i, entry in enumerate((e for e in state.get("rounds", []) if e.get("kind") == "call"), start=1)]
    final = state.get("final_answer") or {"value": "", "justification": ""}
    return {"reasoning_steps": steps, "final_answer": final}


def _loop(state: Mapping[str, Any]) -> dict[str, Any]:
    calls = [json.dumps([e.get("tool"), e.get("arguments")], sort_keys=True, default=str)
             for e in state.get("rounds", []) if e.get("kind") == "call"]
    longest, run = 0, 0
    for i, call in enumerate(calls):
        run = run + 1 if i and call == calls[i - 1] else 1
        longest = max(longest, run)
    return {"loop": longest >= LOOP_REPEATS, "longest_repeat": longest, "truncated": False}


def record(doc: Mapping[str, Any], results: list[Any], judge: bool = True,
           kwargs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    response = results[0] if results else ""
    state = protocol.state_of(response if isinstance(response, str) else "")
    episode_error = None
    if state is None:
        episode_error = "the response holds no agentx_tools episode (was the task run with generate_until_agentic?)"
        state = protocol.new_state(0)
    limit = int(state.get("max_steps") or max_steps(kwargs))
    trace = trace_from_object(executed_trace(state), release_data.TOOL_NAMES, release_data.LEGACY_ALIASES,
                              parse_path="episode")
    scored = score_trace(doc, trace)
    blocker = doc.get("judge_blocker") or ""
    judged: dict[str, Any] = judge_doc(doc, scored["prediction"]) if judge else {}
    return {"benchmark": BENCHMARK, "protocol": "agentx_tools", "id": doc["id"],
            "is_generative": bool(doc["is_generative"]), "query_type": doc["query_type"],
            "media_type": doc["media_type"], "judge": judged, **scored,
            "execution": execution.summarise(state, limit, bool(doc["is_generative"])),
            "episode_error": episode_error,
            "rounds": state.get("rounds", []), "loop": _loop(state), "not_judged": blocker or None,
            "judge_style": style_for(default_client().config) if judge and not blocker else None}


JUDGED_NAMES = tuple(name for name in metrics.METRICS
                     if not name.startswith("err_")
                     and name not in ("format_error_rate", "parse_failure_rate", "truncation_rate"))


def metric_names(is_generative: bool) -> tuple[str, ...]:
    kept = set(metrics.metric_names(is_generative))
    return (*(name for name in JUDGED_NAMES if name in kept), *EXECUTION_METRICS)


def process_results(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The record under the first metric (`ground_s`), then each other metric's view of it."""
    sample = record(doc, results)
    first, *others = metric_names(bool(doc["is_generative"]))
    views = {name: (execution.view(sample) if name in EXECUTION_METRICS else metrics.VIEWS[name](sample))
             for name in others}
    return {first: sample, **views}
