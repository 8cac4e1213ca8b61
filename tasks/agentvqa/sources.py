"""Per-source adapters for AgentVQA: how each source's options are rendered for a coordinate convention.

Sources whose options carry coordinates (click points, tap actions, grasp points, trajectories) store
canonical pixel coordinates per option in `option_coordinates` [ASSUMPTION, see README.md]: `None`,
a point `[x, y]`, a box `[x1, y1, x2, y2]` or a trajectory `[[x, y], ...]`. The adapter finds each
pixel literal in the released option text (e.g. the `(540, 1210)` of `tap (540, 1210)`) and replaces
it with the same coordinates rendered in the run's declared convention (`adapters.coords`). With the
`pixel_xy` convention the released text comes back unchanged. If an option has no structured
coordinates, or its text does not contain them, the released text is kept and the result says so
(`rerendered=False`), because per-family re-rendering cannot then be reproduced.

`ADAPTERS` maps the canonical source slug to its adapter; sources not listed use `TEXT_OPTIONS`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lmms_agentic.adapters import coords

PIXEL_FORMATS = {"", "point_xy_abs", "bbox_xyxy_abs", "trajectory_xy_abs"}


@dataclass(frozen=True)
class RenderedOptions:
    texts: tuple[str, ...]
    convention: str
    rerendered: bool
    note: str = ""

    def log(self) -> dict[str, Any]:
        return {"coord_convention": self.convention, "coords_rerendered": self.rerendered, "coords_note": self.note}


def _literal_pattern(values: Sequence[float]) -> re.Pattern[str]:
    numbers = [re.escape(f"{v:g}") for v in values]
    return re.compile(r"[\(\[]\s*" + r"\s*,\s*".join(numbers) + r"\s*[\)\]]")


def _shapes(entry: Any) -> list[list[float]]:
    """The point/box shapes of one option's coordinates (a trajectory gives several points)."""
    if entry is None:
        return []
    if isinstance(entry, (list, tuple)) and entry and all(isinstance(v, (int, float)) for v in entry):
        return [list(entry)]
    if isinstance(entry, (list, tuple)) and all(isinstance(p, (list, tuple)) for p in entry):
        return [list(p) for p in entry]
    raise ValueError(f"cannot read coordinates {entry!r}")


@dataclass(frozen=True)
class TextOptions:
    """Options without coordinates: the released text, whatever the convention."""

    kind: str = "text"

    def render(self, options: Sequence[str], meta: dict[str, Any], convention: str,
               image_size: tuple[int, int] | None) -> RenderedOptions:
        coords.convention(convention)  # reject unknown names even where nothing is rendered
        return RenderedOptions(tuple(options), convention, rerendered=False, note="no coordinates")


@dataclass(frozen=True)
class CoordinateOptions:
    """Options with coordinates (points, boxes or trajectories) re-rendered in the run's convention."""

    kind: str

    def render(self, options: Sequence[str], meta: dict[str, Any], convention: str,
               image_size: tuple[int, int] | None) -> RenderedOptions:
        coords.convention(convention)
        per_option = meta.get("option_coordinates")
        if not per_option:
            return RenderedOptions(tuple(options), convention, False, "no structured coordinates in the record")
        if meta.get("coordinate_format", "") not in PIXEL_FORMATS:
            raise ValueError(f"coordinate_format {meta.get('coordinate_format')!r} is not absolute pixels")
        width = meta.get("image_width") or (image_size[0] if image_size else None)
        height = meta.get("image_height") or (image_size[1] if image_size else None)
        if not width or not height:
            raise ValueError("coordinate options need image_width/image_height or an image")
        texts, missing = [], 0
        for text, entry in zip(options, per_option, strict=True):
            for shape in _shapes(entry):
                found = _literal_pattern(shape).search(text)
                if found is None:
                    missing += 1
                    continue
                rendered = coords.render(shape, int(width), int(height), convention)
                text = text[:found.start()] + rendered + text[found.end():]
            texts.append(text)
        note = f"{missing} coordinate literal(s) not found in the option text" if missing else ""
        return RenderedOptions(tuple(texts), convention, rerendered=missing == 0, note=note)


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
