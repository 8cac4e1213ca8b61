"""The round loop of `agentx_tools` (lmms-eval's `generate_until_agentic`), batched by default: the unfinished
episodes advance together, many per `generate_until` call to the model backend, their `doc_to_text` steps (and so
their tool calls) running concurrently on a thread pool.

Which loop runs (`install()`, at document loading; recorded in the results file as `round_loop` and
`round_loop_switch`): the batched one unless `LMMS_AGENTIC_AGENTIC_BATCH=0` (`false`, `no`, `off`) asks for
lmms-eval's own sequential loop (one document at a time, a batch of one per round); `1` names the default; any other
value stops the run with one line.  The batched loop takes only `agentx_tools` requests: another task's
`generate_until_agentic` requests in the same run go through lmms-eval's loop, as they would without this package.
Either way the model is called from one thread, one `generate_until` at a time, so in-process backends that are not
thread-safe (vLLM, Hugging Face) see what a plain `generate_until` task sends them.  Whether tool steps run while
a model call is in flight is the backend's (`pipelined.py`): for API backends the episodes are served in two
cohorts, one cohort's tools running while the other's batch is with the model; in-process backends get every
unfinished episode in each call and the round's tools between calls, unless `LMMS_AGENTIC_AGENTIC_COHORTS` says
otherwise.  `LMMS_AGENTIC_AGENTIC_WORKERS` sets the tool concurrency (default 16; the pool persists in the process).

Per-sample results are those of lmms-eval's sequential `_run_generate_until_agentic` (same requests per round, same
contexts, same visuals, same terminal payloads, the same step-limit fallback and `--agentic_trace_mode full` trace),
because a document's rounds depend only on its own earlier rounds, provided the backend's reply to a request does
not depend on the other requests of its batch (API backends, the scripted model, a batch size of one; a batching
vLLM or Hugging Face backend can differ in the last digits, as on any `generate_until` task).  `perf/agentx_tools.py`
and the tests compare the two response by response, and the e2e tests compare the whole logged samples.  In both
loops a stored response is valid UTF-8 (a round's `model_output` in the full trace has lone surrogates replaced with
U+FFFD, which lmms-eval's sample writer would fail on, dropping the task's whole log).

Step limits never drop a record: in both loops (`install()` always wraps lmms-eval's), an `agentx_tools` request
whose `max_agentic_steps` (lmms-eval's limit, e.g. `--gen_kwargs max_agentic_steps=4`) is below the task's
`max_steps` runs with the task's limit lowered to it, prompt included (`step_limited`), so the task ends every
episode itself and stores its whole record (`stopped: "step_limit"`) instead of lmms-eval's fallback.
"""

from __future__ import annotations

import concurrent.futures
import copy
import functools
import json
import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from lmms_agentic.tasks.agentx.tools import pipelined
from lmms_agentic.tasks.agentx.tools.protocol import max_steps
from lmms_agentic.tasks.agentx.tools.runtime import utf8_text

ENV_BATCH = "LMMS_AGENTIC_AGENTIC_BATCH"
ENV_WORKERS = "LMMS_AGENTIC_AGENTIC_WORKERS"
LMMS_EVAL_DEFAULT_STEPS = 12
"""lmms-eval's `max_agentic_steps` when the generation kwargs name none."""
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
                               response_cache: Any = None, workers: int | None = None) -> list[str]:
    """Drop-in for `lmms_eval.evaluator._run_generate_until_agentic`: the `agentx_tools` requests batched by round,
    any other task's through lmms-eval's own loop (`run_sequential`); responses in the requests' order."""
    limited = step_limited(lm, requests)
    ours = [index for index, request in enumerate(limited) if _ours(request.args[3])]
    others = [index for index, request in enumerate(limited) if not _ours(request.args[3])]
    responses: list[Any] = [None] * len(limited)
    if others:
        answered = run_sequential(lm, [limited[i] for i in others], agentic_trace_mode=agentic_trace_mode,
                                  response_cache=response_cache)
        for index, response in zip(others, answered, strict=True):
            responses[index] = response
    batched = _run_batched(lm, [limited[i] for i in ours], agentic_trace_mode, response_cache, workers)
    for index, response in zip(ours, batched, strict=True):
        responses[index] = response
    return responses


def _run_batched(lm: Any, requests: list[Any], agentic_trace_mode: str, response_cache: Any,
                 workers: int | None) -> list[str]:
    """The round loop over step-limited requests: `generate_until` calls from this thread only, one at a time, the
    unfinished episodes served in cohorts (`pipelined.py`)."""
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
    log.info("agentx_tools: batched round loop, %d cohort(s) (%s)", n_cohorts,
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


_EPISODE_HOOK = ("lmms_agentic.tasks.agentx.tools.hooks", "doc_to_text")  # named, not imported: hooks imports us


def _ours(to_text: Any) -> bool:
    """Whether a request's `doc_to_text` is `agentx_tools`'s episode hook."""
    func = to_text.func if isinstance(to_text, functools.partial) else None
    return (getattr(func, "__module__", None), getattr(func, "__name__", None)) == _EPISODE_HOOK


def _limited(lm: Any, request: Any) -> Any:
    """`request`, its task limit lowered to lmms-eval's where that is smaller (see the module docstring)."""
    context, kwargs, to_visual, to_text, doc_id, task, split = request.args
    if not _ours(to_text):
        return request
    task_kwargs = dict(to_text.keywords.get("lmms_eval_specific_kwargs") or {})
    agentic = int((kwargs or {}).get("max_agentic_steps", LMMS_EVAL_DEFAULT_STEPS))
    if agentic < 1:
        raise ValueError(f"{task}: max_agentic_steps is {agentic}; an episode needs at least one reply")
    if agentic >= max_steps(task_kwargs):
        return request
    keywords = {**to_text.keywords, "lmms_eval_specific_kwargs": {**task_kwargs, "max_steps": agentic}}
    lowered = functools.partial(to_text.func, *to_text.args, **keywords)
    doc = lm.task_dict[task][split][doc_id]
    first, first_lowered = to_text(doc), lowered(doc)  # the first round's context (lmms-eval's `ctx` holds it)
    if isinstance(context, str) and isinstance(first, str) and isinstance(first_lowered, str):
        context = context.replace(first, first_lowered)
    request.arguments = (context, kwargs, to_visual, lowered, doc_id, task, split)  # in place: the sample log shows it
    return request


def step_limited(lm: Any, requests: list[Any]) -> list[Any]:
    """The requests as either loop runs them: each `agentx_tools` one with the smaller of the two step limits
    (changed in place, so the logged `input` is the context the model got)."""
    return [_limited(lm, request) for request in requests]


_LMMS_EVAL_LOOP: Any = None
BATCH_OFF = ("0", "false", "no", "off")
BATCH_ON = ("1", "true", "yes", "on")


def lmms_eval_loop() -> Any:
    """lmms-eval's own `_run_generate_until_agentic` (the one `install()` wrapped or replaced, if it ran)."""
    if _LMMS_EVAL_LOOP is not None:
        return _LMMS_EVAL_LOOP
    import lmms_eval.evaluator as evaluator

    return evaluator._run_generate_until_agentic


def run_sequential(lm: Any, requests: list[Any], *args: Any, **kwargs: Any) -> list[Any]:
    """lmms-eval's own sequential loop, on the step-limited requests; our responses made valid UTF-8 (as in
    `_advance`: its full trace logs each raw reply)."""
    limited = step_limited(lm, requests)
    responses = lmms_eval_loop()(lm, limited, *args, **kwargs)
    return [utf8_text(response) if isinstance(response, str) and _ours(request.args[3]) else response
            for request, response in zip(limited, responses, strict=True)]


def wants_batch(environ: Any = None) -> bool:
    """Whether the batched loop is asked for: yes unless `LMMS_AGENTIC_AGENTIC_BATCH` is 0/false/no/off; a value
    that is neither stops the run (`ValueError`, one line)."""
    env = os.environ if environ is None else environ
    value = str(env.get(ENV_BATCH) or "").strip().lower()
    if value in BATCH_OFF:
        return False
    if value in ("", *BATCH_ON):
        return True
    raise ValueError(f"{ENV_BATCH}={env.get(ENV_BATCH)!r}: use 0 for lmms-eval's sequential loop, 1 or nothing for the "
                     f"batched loop (the default)")


def describe(batch: bool, environ: Any = None) -> dict[str, str]:
    """What the results file records about the loop that runs: its name and what chose it."""
    env = os.environ if environ is None else environ
    given = str(env.get(ENV_BATCH) or "").strip()
    return {"round_loop": "batched" if batch else "lmms-eval sequential",
            "round_loop_switch": f"{ENV_BATCH}={given}" if given else f"default ({ENV_BATCH} unset)"}


def install(environ: Any = None) -> bool:
    """Replace lmms-eval's agentic loop with the batched one (`run_generate_until_agentic`), or wrap it
    (`run_sequential`) when `LMMS_AGENTIC_AGENTIC_BATCH=0`; returns whether the batched loop runs."""
    global _LMMS_EVAL_LOOP
    import lmms_eval.evaluator as evaluator

    batch = wants_batch(environ)
    current = getattr(evaluator, "_run_generate_until_agentic", None)
    if current is None:
        log.warning("agentx_tools: lmms_eval.evaluator has no _run_generate_until_agentic; the step limits and the "
                    "batched loop are not installed")
        return False
    if current not in (run_sequential, run_generate_until_agentic):
        _LMMS_EVAL_LOOP = current
    evaluator._run_generate_until_agentic = run_generate_until_agentic if batch else run_sequential
    return batch
