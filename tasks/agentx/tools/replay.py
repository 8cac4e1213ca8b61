"""The `replay` backend: a tool's recorded output from the task's reference (gold) trace, for an identical call only.

A call is answered from the first unused gold step that it matches; any other call gets `unavailable(tool)`, one
fixed text that does not depend on the trace.  A step matches when:
- its `tool` names exactly one tool (legacy names canonicalised) and it is the call's ("Final Answer", "OCR,
  Calculator" match nothing);
- its input determines every non-image argument and each equals the call's after normalisation.  An optional
  argument the step does not give is its default; a required one it does not give (ObjectCounter "image") makes the
  step match no call;
- the call's image is one of the task's inputs (`image_1` .. `image_n`, n = `n_inputs`; never a tool-produced image)
  and, when the step names one (`image_2`), that one.  A step that names no image ("image", "the photo") means any
  input.
Gold inputs are objects (argument -> value), lists (in catalogue order) or free text: a one-argument tool takes the
whole text; else a bracketed group (a bbox) is kept whole, the rest is split on commas, leading parts that name an
image go to the image argument and the others to the other arguments in catalogue order (the last takes the rest).
Normalisation: numbers compare by value (`5.0` = `5`, a whole `1,000` = `1000`); an arithmetic expression compares
parsed (never evaluated), the operands of + and * as multisets (`3 + 5` = `5 + 3`, `5 - 3` != `3 - 5`); a bbox is
its 4 numbers (any brackets, commas, spaces); other text ignores case, whitespace, quotes and a final period.
A matching step's output is returned even when it equals the final answer: the call is the gold call, and its
recorded output is what the tool returned for it.  Gold outputs of image tools are descriptions, so a replayed image
tool returns that text and no image.  It is the default for MathOCR and WebSearch (paid services).
"""

from __future__ import annotations

import ast
import functools
import json
import math
import re
from collections.abc import Mapping, Sequence
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation
from typing import Any

from lmms_agentic.tasks.agentx.core.release_data import LEGACY_ALIASES, TOOL_NAMES
from lmms_agentic.tasks.agentx.core.trace import canonical_tool
from lmms_agentic.tasks.agentx.tools.catalogue import ArgSpec, ToolSpec, catalogue

MAX_EXPRESSION = 200
"""Characters of a value parsed as an arithmetic expression (longer values compare as text)."""
MAX_NODES = 100
"""Syntax-tree nodes of such an expression."""
ANY_INPUT = -1
"""A gold step's image argument that names no particular image: any of the task's inputs."""

_DROP = re.compile(r"[\s'\"`]+")
_SIGN_SPACE = re.compile(r"^([+-])\s+")
_EXACT = Context(prec=80, Emax=MAX_EMAX, Emin=MIN_EMIN)
"""Exact for every number replay reads (at most 64 characters): no rounding, no overflow."""
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?", re.IGNORECASE)
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_BOX_SEPARATORS = re.compile(r"[\s,;()\[\]{}]+")
_BRACKETED = re.compile(r"[(\[{][^()\[\]{}]*[)\]}]")
_TOOL_SEPARATOR = re.compile(r"[,;/&+|]|\b(?:and|or|then)\b", re.IGNORECASE)
_NAMED_IMAGE = re.compile(r"<?\s*(?:image|img)\s*[_ #-]?\s*(\d+)\s*>?", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9_.-]+")
_IMAGE_WORDS = frozenset({"image", "images", "img", "picture", "photo", "photograph", "frame", "frames", "video",
                          "screenshot"})
_FILLER_WORDS = frozenset({"the", "a", "an", "this", "that", "input", "original", "given", "provided", "uploaded",
                           "current", "source", "query", "task", "full", "entire", "whole", "of"})
_MEDIA_FILE = re.compile(r".+\.(?:jpe?g|png|gif|bmp|webp|tiff?|mp4|avi|mov|mkv|webm)")
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_SYMBOLS = str.maketrans({"×": "*", "÷": "/", "−": "-"})


def normalise(value: object) -> str:
    """Text as compared: case-folded, without whitespace, quotes and a final period."""
    return _DROP.sub("", str(value)).casefold().rstrip(".")


def _number(text: str) -> str | None:
    """The canonical text of a number written alone, or None."""
    text = _SIGN_SPACE.sub(r"\1", text.strip())
    if len(text) > 64:
        return None
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    if not _NUMBER.fullmatch(text):
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return "0" if value == 0 else str(value.normalize(_EXACT))


def _negated(number: str) -> str:
    value = _EXACT.minus(Decimal(number))
    return "0" if value == 0 else str(value.normalize(_EXACT))


def _tree(node: ast.AST) -> tuple[Any, ...]:
    """An expression in canonical form: chains of + and of * flattened into sorted operand lists."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        if isinstance(node.value, float) and not math.isfinite(node.value):
            raise ValueError("not a finite number")
        number = _number(str(node.value) if isinstance(node.value, int) else repr(node.value))
        if number is None:
            raise ValueError("not a plain number")
        return ("n", number)
    if isinstance(node, ast.Name):
        return ("v", node.id.casefold())
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _tree(node.operand)
        if isinstance(node.op, ast.UAdd):
            return inner
        return ("n", _negated(inner[1])) if inner[0] == "n" else ("neg", inner)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _OPERATORS):
        if isinstance(node.op, (ast.Add, ast.Mult)):
            operands: list[tuple[Any, ...]] = []
            stack: list[ast.AST] = [node]
            while stack:
                item = stack.pop()
                if isinstance(item, ast.BinOp) and type(item.op) is type(node.op):
                    stack += [item.left, item.right]
                else:
                    operands.append(_tree(item))
            return (type(node.op).__name__, tuple(sorted(operands, key=repr)))
        return (type(node.op).__name__, _tree(node.left), _tree(node.right))
    raise ValueError(f"not arithmetic: {type(node).__name__}")


def _expression(text: str) -> tuple[Any, ...] | None:
    """The canonical form of an arithmetic expression with at least one operator, or None (never evaluated)."""
    text = text.translate(_SYMBOLS).strip()
    if len(text) > MAX_EXPRESSION or not text:
        return None
    try:
        parsed = ast.parse(text, mode="eval")
        nodes = list(ast.walk(parsed))
        if len(nodes) > MAX_NODES or not any(isinstance(n, ast.BinOp) for n in nodes):
            return None
        return _tree(parsed.body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _box(text: str) -> tuple[str, ...] | None:
    """A bbox's 4 numbers in canonical form, whatever brackets and separators surround them, or None."""
    parts = [part for part in _BOX_SEPARATORS.split(text.strip()) if part]
    numbers = [_number(part) for part in parts]
    if len(numbers) != 4 or any(number is None for number in numbers):
        return None
    return tuple(str(number) for number in numbers)


def canonical(arg: ArgSpec, value: object) -> tuple[Any, ...]:
    """One argument value in the form replay compares: numbers, expressions and boxes by value, else as text."""
    if value is None:
        return ("none",)
    if isinstance(value, bool):
        return ("bool", value)
    text = str(value)
    if arg.type == "bool" and text.strip().casefold() in ("true", "false"):
        return ("bool", text.strip().casefold() == "true")
    if arg.name == "bbox" and (box := _box(text)) is not None:
        return ("box", box)
    if (number := _number(text)) is not None:
        return ("num", number)
    if (tree := _expression(text)) is not None:
        return ("expr", tree)
    return ("text", normalise(text))


def _image_reference(part: object) -> int | None:
    """The image a gold input part names: its index, ANY_INPUT for a generic one ("image", "the photo"), or None
    when the part is no image reference."""
    if not isinstance(part, str):
        return None
    named = _NAMED_IMAGE.fullmatch(part.strip())
    if named is not None:
        return int(named.group(1)) - 1
    words = _WORD.findall(part.casefold())
    if not words or len(words) > 6:
        return None
    imagey = [w in _IMAGE_WORDS or bool(_MEDIA_FILE.fullmatch(w)) for w in words]
    if any(imagey) and all(flag or w in _FILLER_WORDS for flag, w in zip(imagey, words, strict=True)):
        return ANY_INPUT
    return None


def _parts(text: str) -> list[str]:
    """Free text split on commas, a bracketed group (a bbox) kept whole."""
    kept: list[str] = []

    def keep(match: re.Match[str]) -> str:
        kept.append(match.group(0))
        return f"\x00{len(kept) - 1}\x00"

    protected = _BRACKETED.sub(keep, text)
    parts = [part.strip() for part in protected.split(",")]
    restored = [re.sub(r"\x00(\d+)\x00", lambda m: kept[int(m.group(1))], part) for part in parts]
    return [part for part in restored if part]


def _assign(spec: ToolSpec, parts: Sequence[object]) -> dict[str, object]:
    """Positional gold values -> {argument: value}: image references first, then the other arguments in order."""
    values: dict[str, object] = {}
    rest = list(parts)
    for arg in spec.inputs:
        if arg.type == "image":
            reference = _image_reference(rest[0]) if rest else None
            values[arg.name] = ANY_INPUT if reference is None else reference
            if reference is not None:
                rest.pop(0)
    others = [arg for arg in spec.inputs if arg.type != "image"]
    previous: ArgSpec | None = None
    piece: object
    for position, arg in enumerate(others):
        if not rest:
            break
        if arg.name == "bbox" and len(rest) >= 4 and all(_number(str(p)) is not None for p in rest[:4]):
            piece, rest = ", ".join(str(p) for p in rest[:4]), rest[4:]
        elif position == len(others) - 1:
            piece, rest = rest[0] if len(rest) == 1 else ", ".join(str(p) for p in rest), []
        else:
            piece, rest = rest[0], rest[1:]
        if arg.type in ("int", "bool") and canonical(arg, piece)[0] not in ("num", "bool") and previous is not None:
            # the comma belonged to the previous text value ("Springfield, Illinois")
            values[previous.name] = ", ".join(str(p) for p in (values[previous.name], piece, *rest))
            break
        values[arg.name] = piece
        previous = arg if arg.type == "text" else previous
    return values


def gold_call(spec: ToolSpec, raw: object) -> dict[str, Any] | None:
    """What a gold step's input determines: image argument -> index or ANY_INPUT, other argument -> canonical value;
    None when it leaves a required non-image argument open (such a step matches no call)."""
    if isinstance(raw, Mapping):
        given: dict[str, object] = {arg.name: raw.get(arg.name) for arg in spec.inputs}
        for arg in spec.inputs:
            if arg.type == "image":
                reference = _image_reference(given[arg.name])
                given[arg.name] = ANY_INPUT if reference is None else reference
    else:
        others = [arg for arg in spec.inputs if arg.type != "image"]
        text = "" if raw is None else raw if isinstance(raw, str) else json.dumps(raw)
        if isinstance(raw, (list, tuple)):
            parts: list[object] = [item if isinstance(item, str) else json.dumps(item) for item in raw]
        elif len(spec.inputs) == 1 and others:
            parts = [text] if text.strip() else []
        else:
            parts = list(_parts(text))
        given = _assign(spec, parts)
    out: dict[str, Any] = {}
    for arg in spec.inputs:
        value = given.get(arg.name)
        if arg.type == "image":
            out[arg.name] = value
        elif value is not None and str(value).strip():
            out[arg.name] = canonical(arg, value)
        elif arg.optional:
            out[arg.name] = canonical(arg, arg.default)
        else:
            return None
    return out


def step_tool(step: Mapping[str, Any]) -> str | None:
    """The one tool a gold step calls, or None (no tool, an unknown one, or several)."""
    tool = step.get("tool")
    if not isinstance(tool, str):
        return None
    names = {canonical_tool(part, TOOL_NAMES, LEGACY_ALIASES) for part in [tool, *_TOOL_SEPARATOR.split(tool)]}
    names.discard(None)
    return names.pop() if len(names) == 1 else None


@functools.lru_cache(maxsize=4096)
def _parsed_steps(text: str) -> tuple[dict[str, Any], ...]:
    return tuple(dict(step) for step in json.loads(text) if isinstance(step, Mapping))


def gold_steps(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The task's gold steps (objects only), parsed once per distinct text; callers must not modify them."""
    return list(_parsed_steps(doc["gt_steps_flat_json"]))


def matches(spec: ToolSpec, step: Mapping[str, Any], arguments: Mapping[str, Any], images: Mapping[str, int],
            n_inputs: int) -> bool:
    """Whether the call (bound arguments, image argument -> visual index) is the gold step's call."""
    if step_tool(step) != spec.name:
        return False
    gold = gold_call(spec, step.get("input"))
    if gold is None:
        return False
    for arg in spec.inputs:
        if arg.type == "image":
            index = images.get(arg.name)
            if index is None or not 0 <= index < n_inputs or gold[arg.name] not in (ANY_INPUT, index):
                return False
        elif canonical(arg, arguments.get(arg.name, arg.default)) != gold[arg.name]:
            return False
    return True


def _call_images(spec: ToolSpec, arguments: Mapping[str, Any]) -> dict[str, int]:
    """Image indices read back from bound arguments (`bind` writes each image argument as `image_<k>`)."""
    images: dict[str, int] = {}
    for arg in spec.inputs:
        value = arguments.get(arg.name)
        named = re.fullmatch(r"image_(\d+)", value) if arg.type == "image" and isinstance(value, str) else None
        if named is not None:
            images[arg.name] = int(named.group(1)) - 1
    return images


def _input_count(doc: Mapping[str, Any]) -> int:
    """The task's input images when the caller does not say: its image files, or 1 (the first video frame)."""
    media = doc.get("media")
    return len(media) if doc.get("media_type") == "image" and isinstance(media, list) else 1


def replay(doc: Mapping[str, Any], tool: str, arguments: Mapping[str, Any], used: Sequence[int],
           images: Mapping[str, int] | None = None, n_inputs: int | None = None) -> tuple[int, str] | None:
    """(gold step position, its recorded output) for the first unused step the call matches, or None.
    `images`: the call's image argument -> index into the episode's visuals (default: read from `arguments`);
    `n_inputs`: how many of those visuals are the task's inputs (default: its image files, or 1 for a video)."""
    spec = catalogue()[tool]
    call_images = _call_images(spec, arguments) if images is None else images
    inputs = _input_count(doc) if n_inputs is None else n_inputs
    for position, step in enumerate(gold_steps(doc)):
        if position not in used and matches(spec, step, arguments, call_images, inputs):
            output = step.get("output", "")
            text = "" if output is None else output if isinstance(output, str) else json.dumps(output,
                                                                                                ensure_ascii=False)
            return position, text
    return None


def unavailable(tool: str) -> str:
    """The observation of every call replay cannot answer: the same text whatever the gold trace holds."""
    return f"{tool} has no recorded output for this call (replay answers only a call identical to a reference step)."
