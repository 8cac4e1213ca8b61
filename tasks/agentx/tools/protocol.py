"""The executed multi-turn protocol of `agentx_tools`: prompt, reply format, one round of the loop.

Declared format (shown to the model in `instructions()`): every reply is exactly one JSON object, either a tool call
`{"thought": "...", "tool": "<name>", "arguments": {...}}` or the end `{"thought": "...", "final_answer": {"value":
"...", "justification": "..."}}` (a plain string answer is accepted).  The object may be fenced or surrounded by
prose; it is read with `json.loads`, then `ast.literal_eval`, never executed.  A fence inside the object's strings is
part of a value, not a fence of the reply: Solver's and CodePlotter's `command` is "Python code in markdown", so
`{"tool": "Solver", "arguments": {"command": "```python\\n...\\n```"}}` is that call (`parse_reply` says how the
fenced and unfenced objects are weighed).  A reply with no such object, or with both a call and an answer, is an
invalid step: the model is told why and the loop goes on.

Each round's context is the whole transcript as text (lmms-eval's agentic loop sends one user turn per round):
instructions and catalogue, the query, then every earlier reply with its observation.  Visuals are the task's images
(or its sampled video frames) as `image_1..image_n`, then each image a tool returned, appended as a new visual.
The loop ends with a final answer or at the declared step limit (`max_steps` replies), whichever comes first.
`state` (JSON-able) holds every round; lmms-eval logs it per round (`--agentic_trace_mode full`).  A round whose
tool returned an image logs a thumbnail of it with its size and digest (`returned_image`, `returned_image.py`),
made here so that both round loops log the same entry.

Replies are hostile input, and every reply ends as a round, never as an exception: only its first `MAX_REPLY_CHARS`
characters are read and kept (the rest is noted); an object nested deeper than `MAX_DEPTH`, a number longer than
`MAX_INT_DIGITS` digits, or a Python literal holding a value JSON cannot express (set, bytes, complex, non-text keys)
is an invalid step saying so; lone surrogates become U+FFFD, so every round is valid UTF-8 JSON.
"""

from __future__ import annotations

import ast
import json
import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PIL import Image

from lmms_agentic.adapters.agentic.steps import utf8_text
from lmms_agentic.adapters.agentic.tool_runtime import ToolRuntime
from lmms_agentic.tasks.agentx.tools import returned_image
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall, CallError, bind, catalogue_text

PROTOCOL_VERSION = "1"
MAX_REPLY_CHARS = 100_000
MAX_DEPTH = 64
MAX_INT_DIGITS = 1_000
_FENCE = re.compile(r"```(?:json|python)?\s*(.*?)```", re.DOTALL)
log = logging.getLogger(__name__)


DEFAULT_MAX_STEPS = 8


def max_steps(kwargs: Mapping[str, Any] | None) -> int:
    """The task's step limit (`lmms_eval_specific_kwargs.max_steps`, default `DEFAULT_MAX_STEPS`)."""
    return int((kwargs or {}).get("max_steps", DEFAULT_MAX_STEPS))


def instructions(max_steps: int) -> str:
    return "\n".join((
        "You are an intelligent multi-modal agent. Answer the query about the given visual content by calling tools, "
        "one tool per reply; you will receive each tool's real output before your next reply.",
        "",
        "Tools (arguments by name; an image argument names an image of this task: image_1, image_2, ...):",
        catalogue_text(),
        "",
        "Reply with exactly one JSON object and nothing else, either a tool call:",
        '{"thought": "why this tool", "tool": "<tool name>", "arguments": {"<argument>": <value>}}',
        "or, when you can answer:",
        '{"thought": "how the outputs answer the query", "final_answer": {"value": "<answer>", '
        '"justification": "<why>"}}',
        f"You have at most {max_steps} replies in total; the last one must be the final answer.",
    ))


def image_names(start: int, count: int) -> str:
    return ", ".join(f"image_{i}" for i in range(start + 1, start + count + 1))


def initial_context(query: str, n_inputs: int, max_steps: int) -> str:
    return f"{instructions(max_steps)}\n\nImages of this task: {image_names(0, n_inputs)}.\n\nQuery: {query}\n"


@dataclass(frozen=True)
class Action:
    kind: str
    """"call", "final" or "invalid"."""
    thought: str = ""
    tool: Any = None
    arguments: Any = None
    value: str = ""
    justification: str = ""
    error: str = ""


def _object_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of the top-level {...} spans of `text` (double-quoted strings respected); one linear scan."""
    spans, depth, start, in_string, escape = [], 0, -1, False, False
    for index, char in enumerate(text):
        if in_string:
            escape = (char == "\\") and not escape
            if char == '"' and not escape:
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char == "{":
            start = index if depth == 0 else start
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, index + 1))
    return spans


def _objects(text: str) -> list[str]:
    """Top-level {...} spans of `text` (strings respected)."""
    return [text[start:end] for start, end in _object_spans(text)]


def _fenced_blocks(text: str, spans: Sequence[tuple[int, int]]) -> list[str]:
    """The markdown fences of `text` that lie outside every object span (a fence written inside an object, e.g. in
    Solver's `command` string, is no fence of the reply); each block's text as written, objects included."""
    parts, done = [], 0
    for start, end in spans:  # "o": no backtick or space, so a fence and its tag read as written
        parts += [text[done:start], "o" * (end - start)]
        done = end
    masked = "".join([*parts, text[done:]])
    return [text[found.start(1):found.end(1)] for found in _FENCE.finditer(masked)]


class Unreadable(ValueError):
    """An object in a reply that cannot become a JSON action; the message says why, for the model."""


def _parse_int(digits: str) -> int:
    if len(digits.lstrip("+-")) > MAX_INT_DIGITS:
        raise Unreadable(f"a number has {len(digits.lstrip('+-')):,} digits (the limit is {MAX_INT_DIGITS:,}); "
                         f"write long numbers as strings")
    return int(digits)


def jsonable(value: Any, depth: int = 0) -> Any:
    """`value` (from `json.loads` or `ast.literal_eval`) as JSON data with valid UTF-8 text; tuples become lists.
    Raises `Unreadable` for deeper nesting than `MAX_DEPTH`, longer integers than `MAX_INT_DIGITS` and any value
    JSON cannot express."""
    if depth > MAX_DEPTH:
        raise Unreadable(f"the object is nested more than {MAX_DEPTH} levels deep")
    if value is None or isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        if value.bit_length() > MAX_INT_DIGITS * 3.33:
            raise Unreadable(f"a number has more than {MAX_INT_DIGITS:,} digits; write long numbers as strings")
        return value
    if isinstance(value, str):
        return utf8_text(value)
    if isinstance(value, list | tuple):
        return [jsonable(item, depth + 1) for item in value]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise Unreadable(f"an object key is a {type(key).__name__}, not a string")
            out[utf8_text(key)] = jsonable(item, depth + 1)
        return out
    raise Unreadable(f"it holds a Python {type(value).__name__} value, which JSON cannot express; use a list, a "
                     f"string or a number")


def _load(span: str) -> Any:
    """The value written in `span`: JSON first, else a Python literal (never executed); `Unreadable` if neither."""
    try:
        return json.loads(span, parse_int=_parse_int)
    except Unreadable:
        raise
    except RecursionError:
        raise Unreadable(f"the object is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:  # not JSON: a Python literal?
        pass
    try:
        return ast.literal_eval(span)
    except RecursionError:
        raise Unreadable(f"the object is nested more than {MAX_DEPTH} levels deep") from None
    except Exception as err:  # SyntaxError, ValueError (malformed or too long a number), MemoryError, ...
        raise Unreadable(f"it is neither JSON nor a Python literal ({err.__class__.__name__})") from None


def _action(data: Mapping[str, Any]) -> Action:
    thought = str(data.get("thought", "") or "")
    if "tool" in data and "final_answer" in data:
        return Action("invalid", thought, error="the reply has both a tool call and a final answer; send one")
    if "final_answer" in data:
        answer = data["final_answer"]
        if isinstance(answer, Mapping):
            return Action("final", thought, value=str(answer.get("value", "") or ""),
                          justification=str(answer.get("justification", "") or ""))
        return Action("final", thought, value="" if answer is None else str(answer),
                      justification=str(data.get("justification", "") or ""))
    return Action("call", thought, tool=data.get("tool"), arguments=data.get("arguments", {}))


def _actions(spans: Sequence[str], loaded: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The actions among `spans` (objects with "tool" or "final_answer") and why action-like spans could not be read;
    `loaded` memoises each span's value (or its `Unreadable`) across readings."""
    actions, problems = [], []
    for span in spans:
        if span not in loaded:
            try:
                loaded[span] = _load(span)
            except Unreadable as err:
                loaded[span] = err
        data = loaded[span]
        if isinstance(data, Unreadable):
            if "tool" in span or "final_answer" in span:
                problems.append(str(data))
        elif isinstance(data, dict) and ("tool" in data or "final_answer" in data):
            actions.append(data)
    return actions, problems


def _readings(body: str) -> Iterator[list[str]]:
    """The candidate objects of a reply, in the order they are tried (see `parse_reply`); each made when asked for."""
    spans = _object_spans(body)
    yield [obj for block in _fenced_blocks(body, spans) for obj in _objects(block)]
    yield [body[start:end] for start, end in spans]
    yield [obj for block in (_FENCE.findall(body) or [body]) for obj in _objects(block)]


def parse_reply(text: str) -> Action:
    """The action of one reply (see the module docstring); never raises.

    Readings, the first that finds an action decides (two actions in it are an invalid step): the objects inside the
    reply's markdown fences (a fenced action wins over objects in the prose around it); every top-level object of
    the reply (so an object whose strings hold fences, e.g. Solver's `command` as the catalogue asks for it, is
    read as written, as is an action with a code block beside it); the objects inside every ``` pair found by a plain
    search (the reading used before fences inside strings were told apart, kept for prose whose stray quote mark
    hides the objects from the string-aware scan)."""
    body = text if isinstance(text, str) else ""
    cut = len(body) > MAX_REPLY_CHARS
    body = utf8_text(body[:MAX_REPLY_CHARS])
    loaded: dict[str, Any] = {}
    problems: list[str] = []
    actions: list[dict[str, Any]] = []
    for candidates in _readings(body):
        actions, found = _actions(candidates, loaded)
        problems += found
        if actions:
            break
    if not actions:
        why = f"an object could not be read: {problems[0]}" if problems else \
            "no JSON object with \"tool\" or \"final_answer\" was found"
        note = f" (only the first {MAX_REPLY_CHARS:,} characters of the reply were read)" if cut else ""
        return Action("invalid", error=why + note)
    if len(actions) > 1:
        return Action("invalid", error="the reply holds several actions; send one tool call or the final answer")
    try:
        return _action(jsonable(actions[0]))
    except Unreadable as err:
        return Action("invalid", error=f"the object could not be used: {err}")


def new_state(n_inputs: int, max_steps: int | None = None) -> dict[str, Any]:
    """A new episode; `max_steps` is the step limit it runs under (recorded for the execution summary)."""
    return {"protocol": PROTOCOL_VERSION, "n_inputs": n_inputs, "max_steps": max_steps, "rounds": [],
            "finished": False, "stopped": None, "final_answer": None}


def transcript(query: str, state: Mapping[str, Any], max_steps: int) -> str:
    """The next round's context: the initial context and every round so far."""
    parts = [initial_context(query, int(state["n_inputs"]), max_steps)]
    for entry in state["rounds"]:
        parts.append(f"Reply {entry['round']}:\n{entry['reply']}\nObservation {entry['round']}: {entry['observation']}")
    left = max_steps - len(state["rounds"])
    parts.append("This is your last reply: give the final answer now." if left == 1
                 else f"Your next reply (one JSON object; {left} replies left):")
    return "\n\n".join(parts)


def stored_reply(reply: object) -> str:
    """The reply as a round keeps it: valid UTF-8, its first `MAX_REPLY_CHARS` characters and a note of the rest."""
    text = reply if isinstance(reply, str) else "" if reply is None else str(reply)
    if len(text) <= MAX_REPLY_CHARS:
        return utf8_text(text)
    return utf8_text(text[:MAX_REPLY_CHARS]) + f" [... {len(text) - MAX_REPLY_CHARS:,} more characters not read]"


def round_step(doc: Mapping[str, Any], reply: str, state: dict[str, Any], visuals: list[Image.Image],
               runtime: ToolRuntime, max_steps: int) -> tuple[dict[str, Any], Image.Image | None]:
    """Apply one reply: execute its call (or record its answer or its format error); returns the round entry and the
    new visual, if the tool produced one.  `state` and `visuals` are the episode's, updated in place.  Never raises
    for any reply: whatever goes wrong is the round's observation."""
    number = len(state["rounds"]) + 1
    action = parse_reply(reply)
    entry: dict[str, Any] = {"round": number, "reply": stored_reply(reply), "kind": action.kind,
                             "thought": action.thought, "tool": None, "arguments": None, "valid": False,
                             "status": None, "backend": None, "seconds": 0.0, "image": None, "returned_image": None,
                             "gold_step": None, "cached": False, "observation": ""}
    produced: Image.Image | None = None
    if action.kind == "final":
        state["finished"] = True
        state["final_answer"] = {"value": action.value, "justification": action.justification}
        entry["observation"] = "(final answer received)"
    elif action.kind == "invalid":
        entry["observation"] = f"Invalid reply: {action.error}. Reply with one JSON object as described."
    else:
        entry["arguments"] = action.arguments if isinstance(action.arguments, Mapping) else str(action.arguments)
        try:
            bound = bind(action.tool, action.arguments, len(visuals), int(state["n_inputs"]))
        except Exception as err:  # a value the binder cannot convert (an over-long integer string, ...)
            bound = CallError(None, f"Error: the arguments could not be read ({err.__class__.__name__}).")
        entry["tool"] = bound.tool
        if isinstance(bound, CallError):
            entry.update(status="invalid_arguments", observation=utf8_text(bound.message))
        else:
            entry.update(_execute(doc, bound, state, visuals, runtime))
            produced = visuals[-1] if entry["image"] else None
    state["rounds"].append(_checked(entry))
    if not state["finished"] and number >= max_steps:
        state["stopped"] = "step_limit"
    return entry, produced


def _checked(entry: dict[str, Any]) -> dict[str, Any]:
    """`entry`, which must serialise as UTF-8 JSON (every field is built to); a stray value is kept as its repr."""
    try:
        json.dumps(entry, ensure_ascii=False).encode("utf-8")
        return entry
    except (TypeError, ValueError, RecursionError) as err:
        log.warning("agentx_tools: round %s had a value that is not UTF-8 JSON (%s); stored as text",
                    entry.get("round"), err.__class__.__name__)
    for key, value in list(entry.items()):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError, RecursionError):
            entry[key] = utf8_text(repr(value)[:MAX_REPLY_CHARS])
    return entry


def _execute(doc: Mapping[str, Any], call: BoundCall, state: Mapping[str, Any], visuals: list[Image.Image],
             runtime: ToolRuntime) -> dict[str, Any]:
    used = [entry["gold_step"] for entry in state["rounds"] if entry.get("gold_step") is not None]
    try:
        observed = runtime.execute(doc, call, visuals, used, n_inputs=int(state["n_inputs"]))
    except Exception as err:  # the runtime answers every failure itself; this is the last line of defence
        return {"arguments": dict(call.arguments), "valid": True, "status": "error",
                "observation": f"Error: {call.tool} failed ({err.__class__.__name__})"}
    result: dict[str, Any] = {"arguments": dict(call.arguments), "valid": True, "status": observed.status,
                              "backend": observed.backend, "seconds": round(observed.seconds, 4),
                              "gold_step": observed.gold_step, "cached": observed.cached,
                              "observation": observed.text}
    if observed.image is not None:
        visuals.append(observed.image)
        name = f"image_{len(visuals)}"
        result["image"] = name
        result["returned_image"] = returned_image.reference(observed.image)  # what the sample log keeps of it
        result["observation"] = f"{observed.text} (attached as {name})"
    return result


def episode_payload(state: Mapping[str, Any]) -> str:
    """The terminal response lmms-eval stores for the document (starts with "{", as its loop requires)."""
    return json.dumps({"agentx_tools": PROTOCOL_VERSION, "state": state}, ensure_ascii=False)


def state_of(response: str) -> dict[str, Any] | None:
    """The episode state inside a stored response (ours, or lmms-eval's step-limit fallback); None if absent."""
    try:
        data = json.loads(response)
    except (TypeError, json.JSONDecodeError):
        return None
    state = data.get("state") if isinstance(data, dict) else None
    return state if isinstance(state, dict) and "rounds" in state else None


def visuals_after(inputs: Sequence[Image.Image], produced: Sequence[Image.Image]) -> list[Image.Image]:
    return [*inputs, *produced]
