"""Per-source adapters for AgentVQA: how each source's options are rendered for a coordinate convention.

Sources whose options carry coordinates (click points, tap actions, grasp points, trajectories) store canonical pixel
coordinates per option in `option_coordinates` [ASSUMPTION, see README.md]: `None`, a point `[x, y]`, a box
`[x1, y1, x2, y2]` or a trajectory `[[x, y], ...]`. The adapter finds each pixel literal in the released option text
(e.g. the `(540, 1210)` of `tap (540, 1210)`) and replaces it with the same coordinates rendered in the run's
declared convention (`adapters.core.coords`). With the `pixel_xy` convention the released text comes back unchanged.

All or nothing: either every coordinate of every option is re-rendered (`status="rerendered"`), or, when any one
cannot be (no structured coordinates, a literal not found in the text, a value outside the image, no image size),
the item is shown exactly as released and flagged (`status="as_released"`, with the reason in `note`), so a model
never sees a mix of conventions. Items without coordinates have `status="not_applicable"`. Every sample record logs
the status (`scoring.py`) and the task reports the share of coordinate items shown as released (`coords_as_released`).
`check_coordinates` validates the structure of a record's coordinates at load time (one entry per option).

`ADAPTERS` maps the canonical source slug to its adapter; sources not listed use `TEXT_OPTIONS`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lmms_agentic.adapters.core import coords

PIXEL_FORMATS = {"", "point_xy_abs", "bbox_xyxy_abs", "trajectory_xy_abs"}


STATUSES = ("not_applicable", "rerendered", "as_released")


@dataclass(frozen=True)
class RenderedOptions:
    texts: tuple[str, ...]
    convention: str
    status: str
    note: str = ""

    @property
    def rerendered(self) -> bool:
        return self.status == "rerendered"

    def log(self) -> dict[str, Any]:
        return {"coord_convention": self.convention, "coords_status": self.status, "coords_note": self.note}


def _literal_pattern(values: Sequence[float]) -> re.Pattern[str]:
    numbers = [re.escape(f"{v:g}") for v in values]
    return re.compile(r"[\(\[]\s*" + r"\s*,\s*".join(numbers) + r"\s*[\)\]]")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _shapes(entry: Any) -> list[list[float]]:
    """The point/box shapes of one option's coordinates (a trajectory gives several points)."""
    if entry is None:
        return []
    if isinstance(entry, (list, tuple)) and len(entry) in (2, 4) and all(_number(v) for v in entry):
        return [list(entry)]
    if (isinstance(entry, (list, tuple)) and entry
            and all(isinstance(p, (list, tuple)) and len(p) == 2 and all(_number(v) for v in p) for p in entry)):
        return [list(p) for p in entry]
    raise ValueError(f"cannot read coordinates {entry!r}: expected null, [x, y], [x1, y1, x2, y2] or [[x, y], ...]")


def check_coordinates(per_option: Any, n_options: int) -> str | None:
    """The problem with a record's `option_coordinates` (None when they are usable or absent)."""
    if per_option is None:
        return None
    if not isinstance(per_option, (list, tuple)):
        return f"expected a list with one entry per option, got {type(per_option).__name__}"
    if len(per_option) != n_options:
        return f"has {len(per_option)} entries for {n_options} options"
    for index, entry in enumerate(per_option):
        try:
            _shapes(entry)
        except ValueError as exc:
            return f"entry {index}: {exc}"
    return None


@dataclass(frozen=True)
class TextOptions:
    """Options without coordinates: the released text, whatever the convention."""

    kind: str = "text"

    def render(self, options: Sequence[str], meta: dict[str, Any], convention: str,
               image_size: tuple[int, int] | None) -> RenderedOptions:
        coords.convention(convention)  # reject unknown names even where nothing is rendered
        return RenderedOptions(tuple(options), convention, "not_applicable")


@dataclass(frozen=True)
class CoordinateOptions:
    """Options with coordinates (points, boxes or trajectories) re-rendered in the run's convention."""

    kind: str

    def render(self, options: Sequence[str], meta: dict[str, Any], convention: str,
               image_size: tuple[int, int] | None) -> RenderedOptions:
        coords.convention(convention)
        released = tuple(options)

        def as_released(why: str) -> RenderedOptions:
            return RenderedOptions(released, convention, "as_released", why)

        per_option = meta.get("option_coordinates")
        if not per_option:
            return as_released("no structured coordinates in the record")
        problem = check_coordinates(per_option, len(options))
        if problem is not None:
            return as_released(f"option_coordinates {problem}")
        if meta.get("coordinate_format", "") not in PIXEL_FORMATS:
            return as_released(f"coordinate_format {meta.get('coordinate_format')!r} is not absolute pixels")
        width = meta.get("image_width") or (image_size[0] if image_size else None)
        height = meta.get("image_height") or (image_size[1] if image_size else None)
        if not width or not height:
            return as_released("no image size to render coordinates against")
        texts = []
        for index, (text, entry) in enumerate(zip(options, per_option, strict=True)):
            for shape in _shapes(entry):
                found = _literal_pattern(shape).search(text)
                if found is None:
                    return as_released(f"option {index}: the literal of {shape} is not in its text")
                try:
                    rendered = coords.render(shape, int(width), int(height), convention)
                except ValueError as exc:
                    return as_released(f"option {index}: {exc}")
                text = text[:found.start()] + rendered + text[found.end():]
            texts.append(text)
        return RenderedOptions(tuple(texts), convention, "rerendered")


TEXT_OPTIONS = TextOptions()
ADAPTERS: dict[str, TextOptions | CoordinateOptions] = {
    "screenspot": CoordinateOptions("click point"),
    "screenspot_pro": CoordinateOptions("click point"),
    "aitw": CoordinateOptions("ui action"),
    "monday": CoordinateOptions("ui action"),
    "roborefit": CoordinateOptions("grasp point"),
    "manipbench": CoordinateOptions("trajectory"),
}


def adapter_for(source: str) -> TextOptions | CoordinateOptions:
    return ADAPTERS.get(source, TEXT_OPTIONS)
