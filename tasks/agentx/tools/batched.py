"""Batched execution of lmms-eval's `generate_until_agentic` loop: every unfinished document advances one round
together (one `generate_until` batch to the model backend per round; the documents' `doc_to_text` steps, and so
their tool calls, run concurrently).

Per-sample results are those of lmms-eval's sequential `_run_generate_until_agentic` (same requests per round, same
contexts, same visuals, same terminal payloads, the same step-limit fallback and `--agentic_trace_mode full` trace),
because a document's rounds depend only on its own earlier rounds; `perf/agentx_tools.py` and the tests compare the
two response by response.  One deliberate difference: a round's `model_output` in the full trace has lone surrogates
replaced (U+FFFD), so a hostile reply cannot make lmms-eval's UTF-8 sample log unwritable.  Opt in with
`LMMS_AGENTIC_AGENTIC_BATCH=1` (then `install()` replaces lmms-eval's loop in `lmms_eval.evaluator` for the run;
the results file records it); `LMMS_AGENTIC_AGENTIC_WORKERS` sets the tool concurrency (default 16; the pool
persists in the process).
"""

from __future__ import annotations

import concurrent.futures
import copy
import json
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from lmms_agentic.tasks.agentx.tools.runtime import utf8_text

ENV_BATCH = "LMMS_AGENTIC_AGENTIC_BATCH"
ENV_WORKERS = "LMMS_AGENTIC_AGENTIC_WORKERS"


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
                               response_cache: Any = None, workers: int | None = None) -> list[str]:
    """Drop-in for `lmms_eval.evaluator._run_generate_until_agentic`, batched by round."""
    from lmms_eval.evaluator import unwrap_generation_output

    episodes = []
    for request in requests:
        context, kwargs, to_visual, to_text, doc_id, task, split = request.args
        if not callable(to_text):
            raise ValueError("generate_until_agentic requires callable doc_to_text")
        base = copy.deepcopy(kwargs)
        steps = int(base.pop("max_agentic_steps", 12))
        episodes.append(_Episode(context, base, to_visual, to_text, doc_id, task, split, request.metadata, steps))
    pool = _round_pool(workers or int(os.environ.get(ENV_WORKERS, "16")))
    round_idx = 0
    while True:
        active = [e for e in episodes if not e.done and round_idx < e.max_steps]
        if not active:
            break
        batch = [_single_request(lm, e) for e in active]
        for episode in active:
            episode.round_input = episode.context
        if response_cache is not None:
            raw = response_cache.execute(lm, "generate_until", batch)
        else:
            raw = lm.generate_until(batch)
        for episode, output in zip(active, raw, strict=True):
            text, _ = unwrap_generation_output(output)
            episode.outputs.append(text)
            episode.final = text
        list(pool.map(lambda e, r=round_idx: _advance(lm, e, r, agentic_trace_mode), active))
        round_idx += 1
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


def install(environ: Any = None) -> bool:
    """Replace lmms-eval's sequential agentic loop with the batched one when `LMMS_AGENTIC_AGENTIC_BATCH=1`."""
    env = os.environ if environ is None else environ
    if str(env.get(ENV_BATCH, "")).strip().lower() not in ("1", "true", "yes"):
        return False
    import lmms_eval.evaluator as evaluator

    evaluator._run_generate_until_agentic = run_generate_until_agentic
    return True
