"""The 14 Agent-X tools typed from `core/toolmeta.json`, and argument binding for one call.

Owns `ToolSpec`/`ArgSpec` (name, type, optional, default and the descriptions, exactly as the catalogue declares
them; `catalogue_text` shows all of them to the model) and `bind`, which
turns a model's `{"tool": ..., "arguments": {...}}` into a `BoundCall` or a `CallError` whose message says what is
wrong and how to fix it (never an exception: a bad call is an observation, not the end of the run).

Conventions: image arguments name a visual of the episode, `image_1` ... `image_n` (the task's images or video
frames first, then each image a tool produced, in order); the bare name `image` means the latest produced image,
else `image_1`.  Tool names go through the benchmark's legacy aliases (`DrawBox` -> `DrawBoundingBox`, ...).
Argument types: `text` takes a string (numbers are written as text), `int` an integer or an integer string, `bool`
true/false (or the strings "true"/"false").
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from lmms_agentic.tasks.agentx.core.release_data import LEGACY_ALIASES, TOOL_NAMES, toolmeta
from lmms_agentic.tasks.agentx.core.trace import canonical_tool

ARG_TYPES = ("text", "image", "int", "bool")
_IMAGE_NAME = re.compile(r"^\s*<?\s*image(?:[_ ]?(\d+))?\s*>?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class ArgSpec:
    name: str
    type: str
    optional: bool
    default: Any = None
    description: str = ""

    @property
    def has_default(self) -> bool:
        return self.default is not None


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    inputs: tuple[ArgSpec, ...]
    output_type: str
    output_name: str = ""
    output_description: str = ""

    @property
    def image_output(self) -> bool:
        return self.output_type == "image"


@dataclass(frozen=True)
class BoundCall:
    """A call whose arguments type-check: values coerced, optional defaults filled, image names resolved to
    indices into the episode's visuals (0-based)."""

    tool: str
    arguments: Mapping[str, Any]
    images: Mapping[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": dict(self.arguments)}


@dataclass(frozen=True)
class CallError:
    """A call that cannot run; `message` is the observation the model gets."""

    tool: str | None
    message: str


@cache
def catalogue() -> dict[str, ToolSpec]:
    """Every tool of the released catalogue, typed; raises on an argument type the runtime does not know."""
    specs = {}
    for name, entry in toolmeta().items():
        inputs = []
        for arg in entry["inputs"]:
            if arg["type"] not in ARG_TYPES:
                raise ValueError(f"toolmeta.json: {name}.{arg['name']} has type {arg['type']!r}; known: {ARG_TYPES}")
            inputs.append(ArgSpec(arg["name"], arg["type"], bool(arg.get("optional")), arg.get("default"),
                                  str(arg.get("description", ""))))
        output = entry["outputs"][0]
        specs[name] = ToolSpec(name, entry["description"], tuple(inputs), output["type"], str(output.get("name", "")),
                               str(output.get("description", "")))
    return specs


def image_index(value: object, n_visuals: int, n_inputs: int) -> int | None:
    """0-based index of the visual an image argument names, or None when it names none that exists."""
    if not isinstance(value, str):
        return None
    match = _IMAGE_NAME.match(value)
    if match is None:
        return None
    if match.group(1) is None:
        return n_visuals - 1 if n_visuals > n_inputs else (0 if n_visuals else None)
    index = int(match.group(1)) - 1
    return index if 0 <= index < n_visuals else None


def _coerce(spec: ArgSpec, value: object) -> tuple[bool, Any]:
    if spec.type == "text":
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return False, None
        return True, str(value)
    if spec.type == "int":
        if isinstance(value, bool):
            return False, None
        if isinstance(value, int):
            return True, value
        if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            return True, int(value)
        return False, None
    if spec.type == "bool":
        if isinstance(value, bool):
            return True, value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return True, value.strip().lower() == "true"
        return False, None
    return False, None


def _usage(spec: ToolSpec) -> str:
    parts = [f'"{a.name}": <{a.type}{", optional" if a.optional else ""}>' for a in spec.inputs]
    return f'{{"tool": "{spec.name}", "arguments": {{{", ".join(parts)}}}}}'


def bind(tool: object, arguments: object, n_visuals: int, n_inputs: int) -> BoundCall | CallError:
    """Type-check one call against the catalogue (see the module docstring for the conventions)."""
    name = canonical_tool(str(tool), TOOL_NAMES, LEGACY_ALIASES) if isinstance(tool, str) and tool.strip() else None
    if name is None:
        return CallError(None, f"Error: unknown tool {tool!r}. Available tools: {', '.join(TOOL_NAMES)}.")
    spec = catalogue()[name]
    if not isinstance(arguments, Mapping):
        return CallError(name, f"Error: the arguments of {name} must be a JSON object, like {_usage(spec)}.")
    known = {a.name for a in spec.inputs}
    unknown = sorted(str(k) for k in arguments if k not in known)
    if unknown:
        return CallError(name, f"Error: {name} has no argument(s) {', '.join(unknown)}; call it as {_usage(spec)}.")
    bound: dict[str, Any] = {}
    images: dict[str, int] = {}
    for arg in spec.inputs:
        if arg.name not in arguments or arguments[arg.name] is None:
            if not arg.optional:
                return CallError(name, f"Error: {name} needs the argument {arg.name!r} ({arg.type}); "
                                       f"call it as {_usage(spec)}.")
            bound[arg.name] = arg.default
            continue
        value = arguments[arg.name]
        if arg.type == "image":
            index = image_index(value, n_visuals, n_inputs)
            if index is None:
                return CallError(name, f"Error: {name}.{arg.name} must name an image of this task, image_1 to "
                                       f"image_{n_visuals}; got {value!r}.")
            images[arg.name] = index
            bound[arg.name] = f"image_{index + 1}"
            continue
        ok, coerced = _coerce(arg, value)
        if not ok:
            return CallError(name, f"Error: {name}.{arg.name} must be of type {arg.type}; got {value!r}.")
        bound[arg.name] = coerced
    return BoundCall(name, bound, images)


def _argument_line(arg: ArgSpec) -> str:
    kind = arg.type + (", optional" if arg.optional else "")
    if arg.has_default:
        kind += f", default {json.dumps(arg.default)}"
    return f'    "{arg.name}" ({kind})' + (f": {arg.description}" if arg.description else "")


def catalogue_text() -> str:
    """The tool list shown to the model, from the released metadata: per tool its description, each argument's name,
    type, optionality, default and description, and what it returns."""
    blocks = []
    for spec in catalogue().values():
        output = spec.output_type + (f" ({spec.output_name})" if spec.output_name else "")
        lines = [f"- {spec.name}: {spec.description}", *(_argument_line(arg) for arg in spec.inputs),
                 f"    returns {output}" + (f": {spec.output_description}" if spec.output_description else "")]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
