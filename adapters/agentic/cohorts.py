"""Which unfinished episodes go in each `generate_until` call of the batched round loop (`loop.py`), and how
their tool steps overlap the model's work.

Cohorts: with `n` cohorts the unfinished episodes are served in turn, about `1/n` of them per call, so one cohort's
tool steps (`doc_to_text` on the round pool) run while another cohort's model batch is in flight.  Before call `t`
the loop waits for the tool steps of the episodes that call `t - n` (or earlier) sent, and takes only those (so,
while the tools keep up, the batches do not depend on thread timing); it then sends the waiting episodes, at most
`ceil(unfinished / n)`, fewest rounds first, then in the requests' order (so the cohorts even out as episodes end).
Stragglers do not hold the model: when some of those steps are still running `LAG_GRACE_S` after the call could
go (a slow tool, a busy machine), the call takes every episode whose step has ended, whichever call sent it, as
soon as they fill its size (or the late steps end), and the late episodes go with a later call; each episode's
rounds still come one after another, so its requests and response are unchanged.  A backend that says how many
requests it serves at once (`num_concurrent`, `q`) gets whole waves: the size is rounded up to a multiple of `q`,
and while other episodes are in their tool steps a part-filled last wave is held back to go with the next call (a
wave of 4 takes as long as one of 16; 20 and 20 ready in turn go as 16 then 24, three waves instead of four).  One
cohort (`n = 1`) is the round-synchronous loop: every unfinished episode in each call, the model never called while
tools run.  Either way the model is called from the caller's thread, one `generate_until` at a time.

How many cohorts (`cohorts()`): `LMMS_AGENTIC_AGENTIC_COHORTS` when set (1 to 8; any other value stops the run),
else what the backend declares (`agentic_tool_overlap = True` on the model: 2; `False`: 1), else 2 for a backend
whose model calls leave the process (`API_BACKENDS`: lmms-eval's OpenAI-compatible, Gemini, Claude, LiteLLM ... clients)
and for `agentic_scripted` (replies from a script: no model work to disturb), else 1.  An in-process backend (vLLM,
Hugging Face and every model not listed) stays at one cohort unless asked: tool steps running beside its model call
would be thread-safe (the model is still called from one thread, one call at a time, and no tool calls the model),
but they take CPU, GPU memory (the diffusion and detector tools) and the GIL from its generation, and splitting its
batch costs it a whole decode per call; declaring or asking for overlap is the user's choice there.
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import os
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

ENV_COHORTS = "LMMS_AGENTIC_AGENTIC_COHORTS"
MAX_COHORTS = 8
OVERLAP_ATTRIBUTE = "agentic_tool_overlap"
API_BACKENDS = frozenset({
    "lmms_eval.models.chat.openai", "lmms_eval.models.chat.async_openai", "lmms_eval.models.chat.gemini",
    "lmms_eval.models.chat.litellm", "lmms_eval.models.simple.openai", "lmms_eval.models.simple.gpt4v",
    "lmms_eval.models.simple.batch_gpt4", "lmms_eval.models.simple.gemini", "lmms_eval.models.simple.litellm",
    "lmms_eval.models.simple.claude", "lmms_eval.models.simple.reka", "lmms_eval.models.simple.qwen_vl_api",
    "lmms_eval.models.simple.srt_api", "lmms_eval.models.simple.gpt4o_audio",
    "lmms_agentic.harness.offline_model",
})
"""Modules of backends whose `generate_until` leaves the process (HTTP clients) or does no model work."""
LAG_GRACE_S = 0.02
"""How long the loop waits for a call's due tool steps before it fills the call with other ended steps instead."""
log = logging.getLogger(__name__)


class Episode(Protocol):
    """What the scheduler reads of an episode: whether it goes on, and how many rounds it has had."""

    rounds: int

    @property
    def active(self) -> bool: ...


E = TypeVar("E", bound=Episode)


def cohorts(lm: Any, environ: Any = None) -> int:
    """How many cohorts the loop serves `lm` in (see the module docstring); a bad variable is a `ValueError`."""
    env = os.environ if environ is None else environ
    given = str(env.get(ENV_COHORTS) or "").strip()
    if given:
        if not given.isdigit() or not 1 <= int(given) <= MAX_COHORTS:
            raise ValueError(f"{ENV_COHORTS}={given!r}: use a whole number from 1 (no overlap of tools and model) "
                             f"to {MAX_COHORTS}")
        return int(given)
    declared = getattr(lm, OVERLAP_ATTRIBUTE, None)
    if isinstance(declared, bool):
        return 2 if declared else 1
    modules = {getattr(cls, "__module__", "") for cls in type(lm).__mro__}
    return 2 if modules & API_BACKENDS else 1


def quantum(lm: Any) -> int:
    """How many requests the backend serves at once, where it says (`num_concurrent`, as lmms-eval's OpenAI client
    names it); 1 where it does not."""
    given = getattr(lm, "num_concurrent", None)
    return given if isinstance(given, int) and not isinstance(given, bool) and given > 0 else 1


def _size(unfinished: int, n_cohorts: int, per_wave: int) -> int:
    """A call's size: its share of the unfinished episodes, rounded up to whole waves."""
    return per_wave * math.ceil(math.ceil(unfinished / n_cohorts) / per_wave)


def run_rounds(episodes: Sequence[E], call_model: Callable[[list[E]], None], step: Callable[[E], None],
               pool: concurrent.futures.Executor, n_cohorts: int, per_wave: int = 1) -> None:
    """Play every episode to its end: `call_model(batch)` (this thread, one call at a time) gives each episode in
    `batch` its reply; `step(episode)` (on `pool`) runs its tool step, after which `episode.rounds` is one more and
    `episode.active` says whether it goes on; batches are whole waves of `per_wave` requests where they can be.
    Returns when no episode is active; a failing step is raised here."""
    order = {id(episode): index for index, episode in enumerate(episodes)}
    ready = [episode for episode in episodes if episode.active]
    stepping: dict[concurrent.futures.Future[None], tuple[int, E]] = {}  # a running step: its call, its episode
    calls = 0

    def collect(done: set[concurrent.futures.Future[None]]) -> None:
        for future in done:
            _, episode = stepping.pop(future)
            future.result()
            if episode.active:
                ready.append(episode)

    while ready or stepping:
        due = {future for future, (sent_in, _) in stepping.items() if sent_in <= calls + 1 - n_cohorts}
        if not ready and not due:  # nothing to send: wait for the oldest call's steps
            oldest = min(sent_in for sent_in, _ in stepping.values())
            due = {future for future, (sent_in, _) in stepping.items() if sent_in == oldest}
        if n_cohorts == 1 or not concurrent.futures.wait(due, LAG_GRACE_S).not_done:
            concurrent.futures.wait(due)
            collect(due)
        else:  # late steps: send what has ended once it fills the call (or the late ones end)
            size = _size(len(ready) + len(stepping), n_cohorts, per_wave)
            while True:
                collect({future for future in stepping if future.done()})
                if len(ready) >= size or not due & stepping.keys():
                    break
                concurrent.futures.wait(set(stepping), return_when=concurrent.futures.FIRST_COMPLETED)
        if not ready:
            continue
        unfinished = len(ready) + len(stepping)
        ready.sort(key=lambda episode: (episode.rounds, order[id(episode)]))
        size = _size(unfinished, n_cohorts, per_wave)
        if per_wave > 1 and stepping and per_wave < min(size, len(ready)):
            size = min(size, len(ready)) // per_wave * per_wave  # a part-filled wave goes with the next call
        batch, ready[:] = ready[:size], ready[size:]
        calls += 1
        call_model(batch)
        for episode in batch:
            stepping[pool.submit(step, episode)] = (calls, episode)
