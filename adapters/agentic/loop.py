"""The batched round loop (a drop-in for lmms-eval's `_run_generate_until_agentic`): the unfinished episodes of
the tasks that ask for it (`steps.batched_rounds`) advance together, many per `generate_until` call to the model
backend, their `doc_to_text` steps (and so their tool calls) running concurrently on a thread pool; and lmms-eval's
own sequential loop on the step-limited requests (`run_sequential`, what `LMMS_AGENTIC_AGENTIC_BATCH=0` installs).

Other tasks' `generate_until_agentic` requests in the same run go through lmms-eval's loop, as they would without this
package.  Either way the model is called from one thread, one `generate_until` at a time, so in-process backends
that are not thread-safe (vLLM, Hugging Face) see what a plain `generate_until` task sends them.  Whether tool steps
run while a model call is in flight is the backend's (`cohorts.py`).  `LMMS_AGENTIC_AGENTIC_WORKERS` sets the tool
concurrency (default 16; the pool persists in the process).

Per-sample results are those of lmms-eval's sequential `_run_generate_until_agentic` (same requests per round, same
contexts, same visuals, same terminal payloads, the same step-limit fallback and `--agentic_trace_mode full` trace),
because a document's rounds depend only on its own earlier rounds, provided the backend's reply to a request does
not depend on the other requests of its batch (API backends, the scripted model, a batch size of one; a batching
vLLM or Hugging Face backend can differ in the last digits, as on any `generate_until` task).  In both loops a
stored response of a marked task is valid UTF-8 (a round's `model_output` in the full trace has lone surrogates
replaced with U+FFFD, which lmms-eval's sample writer would fail on, dropping the task's whole log).
Extra keyword arguments lmms-eval passes to its loop (e.g. `batch_rounds` from `docs/upstream/`) are accepted; they
reach lmms-eval's own loop for the requests that go there.
"""

from __future__ import annotations

import concurrent.futures
import copy
import json
import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from lmms_agentic.adapters.agentic import cohorts as pipelined
from lmms_agentic.adapters.agentic.steps import (
    LMMS_EVAL_DEFAULT_STEPS,
    asks_for_loop,
    note_run,
    prepare,
    step_limited,
    utf8_text,
)

ENV_WORKERS = "LMMS_AGENTIC_AGENTIC_WORKERS"
log = logging.getLogger(__name__)


@dataclass
class _Episode:
    context: Any
    generation_kwargs: dict[str, Any]
    doc_to_visual: Any
    doc_to_text: Any
    doc_id: Any
    task: str
    split: str
    metadata: Any
    max_steps: int
    outputs: list[str] = field(default_factory=list)
    info: Any = None
    final: str = ""
    trace: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False
    round_input: Any = None
    rounds: int = 0

    @property
    def active(self) -> bool:
        """Whether the episode gets another reply: not ended by its task, under lmms-eval's step limit."""
        return not self.done and self.rounds < self.max_steps


def _single_request(lm: Any, episode: _Episode) -> Any:
    from lmms_eval.api.instance import Instance

    kwargs = copy.deepcopy(episode.generation_kwargs)
    arguments: tuple[Any, ...]
    if getattr(lm, "is_simple", False):
        arguments = (episode.context, kwargs, episode.doc_to_visual, episode.doc_id, episode.task, episode.split)
    else:
        context, to_visual = episode.context, episode.doc_to_visual

        def to_messages(doc: Any) -> list[dict[str, Any]]:
            content: list[dict[str, Any]] = []
            for visual in to_visual(doc) or []:
                kind = "audio" if isinstance(visual, dict) else ("video" if isinstance(visual, str) else "image")
                content.append({"type": kind, "url": visual})
            content.append({"type": "text", "text": context})
            return [{"role": "user", "content": content}]

        arguments = (episode.context, to_messages, kwargs, episode.doc_id, episode.task, episode.split)
    return Instance(request_type="generate_until", arguments=arguments, idx=0, metadata=episode.metadata)


def _advance(lm: Any, episode: _Episode, round_idx: int, trace_mode: str) -> None:
    doc = lm.task_dict[episode.task][episode.split][episode.doc_id]
    reply = episode.outputs[-1] if episode.outputs else ""
    payload = episode.doc_to_text(doc, previous_output=episode.outputs, round_idx=round_idx + 1,
                                  previous_round_info=episode.info)
    if isinstance(payload, tuple) and len(payload) == 5:
        visuals, next_context, terminal, updated, info = payload
        if updated is not None:
            episode.outputs = list(updated)
            if episode.outputs:
                episode.final = episode.outputs[-1]
        episode.info = info
        if trace_mode == "full":
            record: dict[str, Any] = {"round_idx": round_idx + 1, "round_input": episode.round_input,
                                      "model_output": utf8_text(reply) if isinstance(reply, str) else reply,
                                      "terminal": bool(terminal)}
            if isinstance(info, dict):
                record["state"] = info.get("state")
                record["tool_result"] = info.get("last_tool_result")
                record["tool_calls"] = info.get("tool_calls")
                record["valid_tool_calls"] = info.get("valid_tool_calls")
                record["invalid_steps"] = info.get("invalid_steps")
            if next_context is not None:
                record["next_input"] = next_context
            episode.trace.append(record)
        if terminal:
            episode.done = True
            return
        if next_context is not None:
            episode.context = next_context
        if visuals is not None:
            episode.doc_to_visual = lambda _doc, _visuals=visuals: _visuals
    elif isinstance(payload, str):
        episode.context = payload
    else:
        episode.done = True


def _finish(episode: _Episode, trace_mode: str) -> str:
    """lmms-eval's post-processing of one document: the step-limit fallback payload and the full trace."""
    final, info = episode.final, episode.info
    if info is not None and not (isinstance(final, str) and final.strip().startswith("{")):
        state = info.get("state", {}) if isinstance(info, dict) else {}
        valid = float(info.get("valid_tool_calls", info.get("tool_calls", 0)) or 0) if isinstance(info, dict) else 0.0
        invalid = float(info.get("invalid_steps", 0.0)) if isinstance(info, dict) else 0.0
        fallback: dict[str, Any] = {
            "success": False, "error": "max_agentic_steps_reached",
            "tool_calls": float(info.get("tool_calls", 0)) if isinstance(info, dict) else 0.0,
            "valid_tool_calls": valid, "invalid_steps": invalid, "state": state, "last_model_output": final,
            "trace": episode.outputs}
        if isinstance(state, dict):
            for key in ("cash", "days_elapsed", "inventory", "mobile_data_working"):
                if key in state:
                    fallback[key] = state[key]
        final = json.dumps(fallback, ensure_ascii=False)
    if trace_mode == "full":
        try:
            parsed = json.loads(final) if isinstance(final, str) else None
            if isinstance(parsed, dict):
                parsed["agentic_trace_mode"] = "full"
                parsed["agentic_rounds"] = episode.trace
                final = json.dumps(parsed, ensure_ascii=False)
        except (TypeError, json.JSONDecodeError):
            pass
    return final


def run_generate_until_agentic(lm: Any, requests: list[Any], agentic_trace_mode: str = "basic",
                               response_cache: Any = None, workers: int | None = None, **extra: Any) -> list[str]:
    """Drop-in for `lmms_eval.evaluator._run_generate_until_agentic`: the requests of the tasks that ask for it
    batched by round, any other task's through lmms-eval's own loop (`run_sequential`, given `extra` too);
    responses in the requests' order."""
    limited = step_limited(lm, requests)
    prepare(limited)
    ours = [index for index, request in enumerate(limited) if asks_for_loop(request.args[3])]
    others = [index for index, request in enumerate(limited) if not asks_for_loop(request.args[3])]
    responses: list[Any] = [None] * len(limited)
    if others:
        answered = run_sequential(lm, [limited[i] for i in others], agentic_trace_mode=agentic_trace_mode,
                                  response_cache=response_cache, **extra)
        for index, response in zip(others, answered, strict=True):
            responses[index] = response
    batched = _run_batched(lm, [limited[i] for i in ours], agentic_trace_mode, response_cache, workers)
    for index, response in zip(ours, batched, strict=True):
        responses[index] = response
    return responses


def _run_batched(lm: Any, requests: list[Any], agentic_trace_mode: str, response_cache: Any,
                 workers: int | None) -> list[str]:
    """The round loop over step-limited requests: `generate_until` calls from this thread only, one at a time, the
    unfinished episodes served in cohorts (`cohorts.py`)."""
    from lmms_eval.evaluator import unwrap_generation_output

    episodes = []
    for request in requests:
        context, kwargs, to_visual, to_text, doc_id, task, split = request.args
        if not callable(to_text):
            raise ValueError("generate_until_agentic requires callable doc_to_text")
        base = copy.deepcopy(kwargs)
        steps = int(base.pop("max_agentic_steps", LMMS_EVAL_DEFAULT_STEPS))
        episodes.append(_Episode(context, base, to_visual, to_text, doc_id, task, split, request.metadata, steps))
    pool = _round_pool(workers or int(os.environ.get(ENV_WORKERS, "16")))
    n_cohorts = pipelined.cohorts(lm)
    if episodes:
        note_run(sorted({e.task for e in episodes}), round_loop="batched", cohorts=n_cohorts)
        log.info("agentic round loop: batched, %d cohort(s) (%s)", n_cohorts,
                 "tool steps overlap model calls" if n_cohorts > 1 else "tools run between model calls")

    def call_model(batch: list[_Episode]) -> None:
        requests = [_single_request(lm, e) for e in batch]
        for episode in batch:
            episode.round_input = episode.context
        if response_cache is not None:
            raw = response_cache.execute(lm, "generate_until", requests)
        else:
            raw = lm.generate_until(requests)
        for episode, output in zip(batch, raw, strict=True):
            text, _ = unwrap_generation_output(output)
            episode.outputs.append(text)
            episode.final = text

    def step(episode: _Episode) -> None:
        _advance(lm, episode, episode.rounds, agentic_trace_mode)
        episode.rounds += 1

    pipelined.run_rounds(episodes, call_model, step, pool, n_cohorts, pipelined.quantum(lm))
    return [_finish(e, agentic_trace_mode) for e in episodes]


_POOLS: dict[int, concurrent.futures.ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _round_pool(threads: int) -> concurrent.futures.ThreadPoolExecutor:
    """The process's pool for the rounds' `doc_to_text` steps, one per size, kept between runs (its threads start
    once, not once per task)."""
    threads = max(1, threads)
    with _POOLS_LOCK:
        if threads not in _POOLS:
            _POOLS[threads] = concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix="agentic-round")
        return _POOLS[threads]


_LMMS_EVAL_LOOP: Any = None


def keep_lmms_eval_loop(original: Any) -> None:
    """Remember lmms-eval's own loop before `switch.install()` replaces it."""
    global _LMMS_EVAL_LOOP
    _LMMS_EVAL_LOOP = original


def lmms_eval_loop() -> Any:
    """lmms-eval's own `_run_generate_until_agentic` (the one `switch.install()` replaced, if it ran)."""
    if _LMMS_EVAL_LOOP is not None:
        return _LMMS_EVAL_LOOP
    import lmms_eval.evaluator as evaluator

    return evaluator._run_generate_until_agentic


def run_sequential(lm: Any, requests: list[Any], *args: Any, **kwargs: Any) -> list[Any]:
    """lmms-eval's own sequential loop, on the step-limited requests; our responses made valid UTF-8 (as in
    `_advance`: its full trace logs each raw reply)."""
    limited = step_limited(lm, requests)
    prepare(limited)
    marked = sorted({request.args[5] for request in limited if asks_for_loop(request.args[3])})
    if marked:
        note_run(marked, round_loop="lmms-eval sequential")
    responses = lmms_eval_loop()(lm, limited, *args, **kwargs)
    return [utf8_text(response) if isinstance(response, str) and asks_for_loop(request.args[3]) else response
            for request, response in zip(limited, responses, strict=True)]
