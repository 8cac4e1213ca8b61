"""Which round loop runs the tasks that ask for one (`steps.batched_rounds`), installed once by the plugin at
start-up (`lmms_agentic.harness.host`, when lmms-eval first builds its task index), and what the results file says.

The batched loop (`loop.run_generate_until_agentic`) unless `LMMS_AGENTIC_AGENTIC_BATCH=0` (`false`, `no`, `off`)
asks for lmms-eval's own sequential loop (`loop.run_sequential`: one document at a time, a batch of one per round,
the step limits still applied); `1` names the default; any other value stops the run with one line.  Either way only
marked tasks' requests are affected.  The results file records `lmms_agentic.agentic_loop` (`record()`): the loop
that ran (`round_loop`), what chose it (`round_loop_switch`), the cohort count of the batched loop (`cohorts`) and
the tasks it ran.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from lmms_agentic.adapters.agentic import loop, steps

ENV_BATCH = "LMMS_AGENTIC_AGENTIC_BATCH"
BATCH_OFF = ("0", "false", "no", "off")
BATCH_ON = ("1", "true", "yes", "on")
log = logging.getLogger(__name__)
_SWITCH: dict[str, str] = {}


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
    """What the results file records about the installed loop: its name and what chose it."""
    env = os.environ if environ is None else environ
    given = str(env.get(ENV_BATCH) or "").strip()
    return {"round_loop": "batched" if batch else "lmms-eval sequential",
            "round_loop_switch": f"{ENV_BATCH}={given}" if given else f"default ({ENV_BATCH} unset)"}


def install(environ: Any = None) -> bool:
    """Replace lmms-eval's agentic loop with the batched one, or with lmms-eval's own on the step-limited requests
    when `LMMS_AGENTIC_AGENTIC_BATCH=0`; returns whether the batched loop runs.  Idempotent."""
    import lmms_eval.evaluator as evaluator

    batch = wants_batch(environ)
    current = getattr(evaluator, "_run_generate_until_agentic", None)
    if current is None:
        log.warning("lmms_eval.evaluator has no _run_generate_until_agentic; the agentic round loop and its step "
                    "limits are not installed")
        return False
    if current not in (loop.run_sequential, loop.run_generate_until_agentic):
        loop.keep_lmms_eval_loop(current)
    evaluator._run_generate_until_agentic = loop.run_generate_until_agentic if batch else loop.run_sequential
    _SWITCH.clear()
    _SWITCH.update(describe(batch, environ))
    return batch


def install_or_refuse(environ: Any = None) -> None:
    """`install()`, where a bad switch value installs a loop that stops the run with it at the first agentic
    request (the plugin's start-up may not raise: lmms-eval swallows entry-point errors)."""
    try:
        install(environ)
    except ValueError as err:
        import lmms_eval.evaluator as evaluator

        message = str(err)

        def refuse(*_args: Any, **_kwargs: Any) -> Any:
            raise ValueError(message)

        evaluator._run_generate_until_agentic = refuse


def record() -> dict[str, Any]:
    """The results file's `lmms_agentic.agentic_loop`: {} unless a marked task's requests ran in this process."""
    ran = steps.ran()
    if not ran:
        return {}
    batch = ran.get("round_loop") == "batched"
    switch = _SWITCH or describe(batch)
    return {"round_loop": ran.get("round_loop"), "round_loop_switch": switch["round_loop_switch"],
            "cohorts": ran.get("cohorts") if batch else None, "tasks": ran.get("tasks", [])}
