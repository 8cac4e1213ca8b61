"""The `replay` backend: a tool's recorded output from the task's reference (gold) trace, for an identical call only.

A call is answered from the first unused gold step that it matches; any other call gets `unavailable(tool)`, one
fixed text that does not depend on the trace.  A step matches when:
- its `tool` names exactly one tool (legacy names canonicalised) and it is the call's ("Final Answer", "OCR,
  Calculator" match nothing);
- its input determines every non-image argument and each equals the call's after normalisation.  An optional
  argument the step does not give is its default; a required one it does not give (ObjectCounter "image") makes the
  step match no call;
- the call's image is one of the task's inputs (`image_1` .. `image_n`, n = `n_inputs`; never a tool-produced image)
  and, when the step names one, that one: `image_2` / `<image 2>` / `picture 2`, "the second image", or one of the
  task's file names.  A step that names no particular image ("image", "the photo", "the first frame" of a video, a
  file name the task does not have) means any input.
Gold inputs are objects (argument -> value, keys in any case; also an object written as text), lists (in catalogue
order) or free text: a one-argument tool takes the whole text; else a bracketed group (a bbox) is kept whole, the
rest is split on commas; parts written `name=value` / `name: value` go to that argument, leading parts that name an
image to the image argument and the others to the remaining arguments in catalogue order (the last takes the rest).
Values compare in the canonical forms of `replay_values.py`: numbers by value (`5.0` = `5`), arithmetic parsed and
never evaluated with the operands of `+` and `*` in any order, boxes as 4 numbers, OverlayText positions and colours
as drawn, other text without case, whitespace and quotes.
A matching step's output is returned even when it equals the final answer: the call is the gold call, and its
recorded output is what the tool returned for it.  Gold outputs of image tools are descriptions, so a replayed image
tool returns that text and no image.  It is the default for MathOCR and WebSearch (paid services).
"""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lmms_agentic.tasks.agentx.core.release_data import LEGACY_ALIASES, TOOL_NAMES
from lmms_agentic.tasks.agentx.core.trace import canonical_tool
from lmms_agentic.tasks.agentx.tools.catalogue import ArgSpec, ToolSpec, catalogue
from lmms_agentic.tasks.agentx.tools.replay_values import canonical, number

ANY_INPUT = -1
"""A gold step's image argument that names no particular image: any of the task's inputs."""

_BRACKETED = re.compile(r"[(\[{][^()\[\]{}]*[)\]}]")
_TOOL_SEPARATOR = re.compile(r"[,;/&+|]|\b(?:and|or|then)\b", re.IGNORECASE)
_NAMED_IMAGE = re.compile(r"<?\s*(?:image|img|picture|photo)\s*[_ #-]?\s*(\d+)\s*>?", re.IGNORECASE)
_NAMED_ARGUMENT = re.compile(r"^\s*[\"']?([a-z_][a-z0-9_]*)[\"']?\s*[=:]\s*(.*)$", re.IGNORECASE | re.DOTALL)
_WORD = re.compile(r"[a-z0-9_.-]+")
_STILL_WORDS = frozenset({"image", "images", "img", "picture", "photo", "photograph", "screenshot"})
_IMAGE_WORDS = _STILL_WORDS | {"frame", "frames", "video"}
_FILLER_WORDS = frozenset({"the", "a", "an", "this", "that", "input", "original", "given", "provided", "uploaded",
                           "current", "source", "query", "task", "full", "entire", "whole", "of"})
_ORDINALS = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3, "fifth": 4,
             "5th": 4, "sixth": 5, "6th": 5, "seventh": 6, "7th": 6, "eighth": 7, "8th": 7}
_MEDIA_FILE = re.compile(r".+\.(?:jpe?g|png|gif|bmp|webp|tiff?|mp4|avi|mov|mkv|webm)")


def _image_reference(part: object, media: Sequence[str] = ()) -> int | None:
    """The image a gold input part names: its index (`image_2`, "the second image", one of the task's file names in
    `media`), ANY_INPUT for a generic one ("image", "the photo", a file name the task does not have), or None when
    the part is no image reference."""
    if not isinstance(part, str):
        return None
    text = part.strip().strip("'\"`").strip()
    named = _NAMED_IMAGE.fullmatch(text)
    if named is not None:
        return int(named.group(1)) - 1
    words = _WORD.findall(text.casefold())
    if not words or len(words) > 6:
        return None
    files = [w for w in words if _MEDIA_FILE.fullmatch(w)]
    ordinals = [_ORDINALS[w] for w in words if w in _ORDINALS]
    if not any(w in _IMAGE_WORDS for w in words) and not files:
        return None
    if len(files) + len(ordinals) > 1 or not all(
            w in _IMAGE_WORDS or w in _FILLER_WORDS or w in _ORDINALS or w in files for w in words):
        return None
    if files:
        return media.index(files[0]) if files[0] in media else ANY_INPUT
    if ordinals and not any(w in _STILL_WORDS for w in words):
        return None  # "the first frame" counts the video's frames, not the sampled ones
    return ordinals[0] if ordinals else ANY_INPUT


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


def _named(spec: ToolSpec, part: object) -> tuple[str, str] | None:
    """(argument, value) for a part written `name=value` or `name: value` with one of the tool's argument names."""
    found = _NAMED_ARGUMENT.match(part) if isinstance(part, str) else None
    names = {arg.name.casefold(): arg.name for arg in spec.inputs}
    if found is None or found.group(1).casefold() not in names:
        return None
    return names[found.group(1).casefold()], found.group(2).strip()


def _assign(spec: ToolSpec, parts: Sequence[object], media: Sequence[str]) -> dict[str, object]:
    """Gold values -> {argument: value}: parts written `name=value` by name; of the others, image references
    first, then the other arguments in catalogue order."""
    values: dict[str, object] = {}
    rest: list[object] = []
    for part in parts:
        named = _named(spec, part)
        if named is not None and named[0] not in values:
            values[named[0]] = named[1]
        else:
            rest.append(part)
    for arg in spec.inputs:
        if arg.type == "image" and arg.name in values:
            reference = _image_reference(values[arg.name], media)
            values[arg.name] = ANY_INPUT if reference is None else reference
        elif arg.type == "image":
            reference = _image_reference(rest[0], media) if rest else None
            values[arg.name] = ANY_INPUT if reference is None else reference
            if reference is not None:
                rest.pop(0)
    others = [arg for arg in spec.inputs if arg.type != "image" and arg.name not in values]
    previous: ArgSpec | None = None
    piece: object
    for position, arg in enumerate(others):
        if not rest:
            break
        if arg.name == "bbox" and len(rest) >= 4 and all(number(str(p)) is not None for p in rest[:4]):
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


def _as_object(raw: object) -> object:
    """A gold input written as the text of an object (`'{"image": "image_1", "bbox": ...}'`) as that object, read
    as data (JSON, else a Python literal; never evaluated); anything else unchanged."""
    if not isinstance(raw, str) or not raw.strip().startswith("{") or len(raw) > 10_000:
        return raw
    for read in (json.loads, ast.literal_eval):
        try:
            value = read(raw.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, Mapping):
            return value
    return raw


def gold_call(spec: ToolSpec, raw: object, media: Sequence[str] = ()) -> dict[str, Any] | None:
    """What a gold step's input determines: image argument -> index or ANY_INPUT, other argument -> canonical value;
    None when it leaves a required non-image argument open (such a step matches no call).  `media`: the task's
    image file names, case-folded (a step may name its image by file)."""
    raw = _as_object(raw)
    if isinstance(raw, Mapping):
        keys = {str(key).casefold(): value for key, value in raw.items()}
        given: dict[str, object] = {arg.name: keys.get(arg.name.casefold()) for arg in spec.inputs}
        for arg in spec.inputs:
            if arg.type == "image":
                reference = _image_reference(given[arg.name], media)
                given[arg.name] = ANY_INPUT if reference is None else reference
    else:
        others = [arg for arg in spec.inputs if arg.type != "image"]
        text = "" if raw is None else raw if isinstance(raw, str) else json.dumps(raw)
        if isinstance(raw, (list, tuple)):
            parts: list[object] = [item if isinstance(item, str) else json.dumps(item) for item in raw]
        elif len(spec.inputs) == 1 and others:
            named = _named(spec, text)
            parts = [f"{named[0]}={named[1]}" if named else text] if text.strip() else []
        else:
            parts = list(_parts(text))
        given = _assign(spec, parts, media)
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
            n_inputs: int, media: Sequence[str] = ()) -> bool:
    """Whether the call (bound arguments, image argument -> visual index) is the gold step's call."""
    if step_tool(step) != spec.name:
        return False
    gold = gold_call(spec, step.get("input"), media)
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


def media_names(doc: Mapping[str, Any]) -> list[str]:
    """The task's image file names, case-folded, in input order (a video's file names no frame: none)."""
    media = doc.get("media")
    if doc.get("media_type") == "video" or not isinstance(media, list):
        return []
    return [str(name).replace("\\", "/").rsplit("/", 1)[-1].strip().casefold() for name in media]


def _input_count(doc: Mapping[str, Any]) -> int:
    """The task's input images when the caller does not say: its image files, or 1 (the first video frame)."""
    media = doc.get("media")
    return len(media) if doc.get("media_type") != "video" and isinstance(media, list) else 1


def replay(doc: Mapping[str, Any], tool: str, arguments: Mapping[str, Any], used: Sequence[int],
           images: Mapping[str, int] | None = None, n_inputs: int | None = None) -> tuple[int, str] | None:
    """(gold step position, its recorded output) for the first unused step the call matches, or None.
    `images`: the call's image argument -> index into the episode's visuals (default: read from `arguments`);
    `n_inputs`: how many of those visuals are the task's inputs (default: its image files, or 1 for a video)."""
    spec = catalogue()[tool]
    call_images = _call_images(spec, arguments) if images is None else images
    inputs = _input_count(doc) if n_inputs is None else n_inputs
    media = media_names(doc)
    for position, step in enumerate(gold_steps(doc)):
        if position not in used and matches(spec, step, arguments, call_images, inputs, media):
            output = step.get("output", "")
            text = "" if output is None else output if isinstance(output, str) else json.dumps(output,
                                                                                                ensure_ascii=False)
            return position, text
    return None


def unavailable(tool: str) -> str:
    """The observation of every call replay cannot answer: the same text whatever the gold trace holds."""
    return f"{tool} has no recorded output for this call (replay answers only a call identical to a reference step)."
