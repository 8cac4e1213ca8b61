"""The `replay` backend: a tool's recorded output from the task's reference (gold) trace.

A call is answered from the first unused gold step whose tool is the same (legacy names canonicalised) and whose
arguments match after normalisation; otherwise the observation says the tool is unavailable in replay.  Gold inputs are
free text (`"image, red block"`, `"5 - 3"`) or objects: a text input of a one-input tool is the whole string, else it
is split on commas into the tool's inputs in catalogue order.  Normalisation: case-folded, every whitespace and
quote removed; image arguments always match (the gold traces name no particular image); a gold step that gives fewer
values than the tool takes matches on the values it gives.  Gold outputs of image tools are descriptions, so a
replayed image tool returns that text and no image.  It is the default for MathOCR and WebSearch (paid services).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lmms_agentic.tasks.agentx.core.release_data import LEGACY_ALIASES, TOOL_NAMES
from lmms_agentic.tasks.agentx.core.trace import canonical_tool
from lmms_agentic.tasks.agentx.tools.catalogue import ToolSpec, catalogue

_DROP = re.compile(r"[\s'\"`]+")


def normalise(value: object) -> str:
    return _DROP.sub("", str(value)).casefold().rstrip(".")


def gold_values(spec: ToolSpec, raw: object) -> list[str | None]:
    """The gold step's input as one normalised value per catalogue input (None: not given or an image)."""
    if isinstance(raw, Mapping):
        values: list[object] = [raw.get(arg.name) for arg in spec.inputs]
    elif isinstance(raw, (list, tuple)):
        values = list(raw)
    else:
        text = "" if raw is None else str(raw)
        values = [text] if len(spec.inputs) == 1 else [part for part in text.split(",", len(spec.inputs) - 1)]
    out: list[str | None] = []
    for arg, value in zip(spec.inputs, values, strict=False):
        out.append(None if arg.type == "image" or value is None or not normalise(value) else normalise(value))
    return out


@functools.lru_cache(maxsize=4096)
def _parsed_steps(text: str) -> tuple[dict[str, Any], ...]:
    return tuple(dict(step) for step in json.loads(text) if isinstance(step, Mapping))


def gold_steps(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The task's gold steps (objects only), parsed once per distinct text; callers must not modify them."""
    return list(_parsed_steps(doc["gt_steps_flat_json"]))


def matches(spec: ToolSpec, step: Mapping[str, Any], arguments: Mapping[str, Any]) -> bool:
    if canonical_tool(str(step.get("tool", "")), TOOL_NAMES, LEGACY_ALIASES) != spec.name:
        return False
    for arg, gold in zip(spec.inputs, gold_values(spec, step.get("input")), strict=False):
        if gold is not None and normalise(arguments.get(arg.name, "")) != gold:
            return False
    return True


def replay(doc: Mapping[str, Any], tool: str, arguments: Mapping[str, Any],
           used: Sequence[int]) -> tuple[int, str] | None:
    """(gold step position, its recorded output) for the first unused matching step, or None."""
    spec = catalogue()[tool]
    for position, step in enumerate(gold_steps(doc)):
        if position not in used and matches(spec, step, arguments):
            output = step.get("output", "")
            return position, output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    return None


def unavailable(tool: str) -> str:
    return (f"{tool} is unavailable in replay: no step of the reference trace calls it with these arguments "
            f"(replay returns only recorded outputs).")
