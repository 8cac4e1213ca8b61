"""How a task asks for the batched round loop, the step limits both loops apply to its requests, and what ran.

A task asks by marking its episode hook (the `doc_to_text` its YAML names for `output_type: generate_until_agentic`)
with `batched_rounds(...)`: its requests then go through the loop the plugin installed at start-up (`switch.py`),
batched by default; every other task's requests go through lmms-eval's own loop untouched.  The mark names the key
of `lmms_eval_specific_kwargs` that holds the task's own step limit and its default.

Step limits never drop a record: a marked request whose `max_agentic_steps` (lmms-eval's limit, e.g.
`--gen_kwargs max_agentic_steps=4`) is below the task's limit runs with the task's limit lowered to it, prompt
included (`step_limited`), so the task ends every episode itself and stores its whole record instead of lmms-eval's
fallback; this holds in both loops.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

LMMS_EVAL_DEFAULT_STEPS = 12
"""lmms-eval's `max_agentic_steps` when the generation kwargs name none."""
MARK = "__lmms_agentic_round_loop__"
F = TypeVar("F", bound=Callable[..., Any])
_RAN: dict[str, Any] = {}
_RAN_LOCK = threading.Lock()


def batched_rounds(step_limit: str, default_steps: int,
                   prepare: Callable[[], None] | None = None) -> Callable[[F], F]:
    """Mark an episode hook: its task's requests run in the installed round loop; `step_limit` is the key of
    `lmms_eval_specific_kwargs` holding the task's step limit (`default_steps` when absent); `prepare()`, if given,
    runs in the loop before the task's first model call (it makes and checks what the episodes need, e.g. a tool
    runtime; it may stop the run there)."""

    def mark(func: F) -> F:
        setattr(func, MARK, (step_limit, default_steps, prepare))
        return func

    return mark


def _mark(to_text: Any) -> tuple[str, int, Callable[[], None] | None] | None:
    func = to_text.func if isinstance(to_text, functools.partial) else None
    mark = getattr(func, MARK, None)
    return mark if isinstance(mark, tuple) else None


def prepare(requests: list[Any]) -> None:
    """Run the `prepare` of every marked task among `requests`, once each, before any model call."""
    done: list[Any] = []
    for request in requests:
        mark = _mark(request.args[3])
        if mark is not None and mark[2] is not None and mark[2] not in done:
            done.append(mark[2])
            mark[2]()


def asks_for_loop(to_text: Any) -> bool:
    """Whether a request's `doc_to_text` is an episode hook marked with `batched_rounds`."""
    return _mark(to_text) is not None


def utf8_text(text: str) -> str:
    """`text` as valid UTF-8: surrogate pairs joined, lone surrogates replaced with U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _limited(lm: Any, request: Any) -> Any:
    """`request`, its task limit lowered to lmms-eval's where that is smaller (see the module docstring)."""
    context, kwargs, to_visual, to_text, doc_id, task, split = request.args
    mark = _mark(to_text)
    if mark is None:
        return request
    key, default, _ = mark
    task_kwargs = dict(to_text.keywords.get("lmms_eval_specific_kwargs") or {})
    agentic = int((kwargs or {}).get("max_agentic_steps", LMMS_EVAL_DEFAULT_STEPS))
    if agentic < 1:
        raise ValueError(f"{task}: max_agentic_steps is {agentic}; an episode needs at least one reply")
    if agentic >= int(task_kwargs.get(key, default)):
        return request
    keywords = {**to_text.keywords, "lmms_eval_specific_kwargs": {**task_kwargs, key: agentic}}
    lowered = functools.partial(to_text.func, *to_text.args, **keywords)
    doc = lm.task_dict[task][split][doc_id]
    first, first_lowered = to_text(doc), lowered(doc)  # the first round's context (lmms-eval's `ctx` holds it)
    if isinstance(context, str) and isinstance(first, str) and isinstance(first_lowered, str):
        context = context.replace(first, first_lowered)
    request.arguments = (context, kwargs, to_visual, lowered, doc_id, task, split)  # in place: the sample log shows it
    return request


def step_limited(lm: Any, requests: list[Any]) -> list[Any]:
    """The requests as either loop runs them: each marked one with the smaller of the two step limits (changed in
    place, so the logged `input` is the context the model got)."""
    return [_limited(lm, request) for request in requests]


def note_run(tasks: list[str], **facts: Any) -> None:
    """Remember that the installed loop ran requests of `tasks` (and how: its name, the cohort count)."""
    with _RAN_LOCK:
        _RAN["tasks"] = sorted(set(_RAN.get("tasks", [])) | set(tasks))
        _RAN.update(facts)


def ran() -> dict[str, Any]:
    """What the installed loop ran in this process ({} when no marked task's request reached it)."""
    with _RAN_LOCK:
        return dict(_RAN)


def clear() -> None:
    with _RAN_LOCK:
        _RAN.clear()
