"""Coordinate conventions: canonical pixel coordinates rendered in a model family's native convention.

Canonical form (what documents store): absolute pixels in the original image, origin top-left,
x to the right, y down, continuous range [0, W] x [0, H]; a point is (x, y), a box is
(x1, y1, x2, y2). The convention used for a run is *declared* (task variant), never guessed from
model output and never chosen by comparing with the gold answer.

Conventions (`CONVENTIONS`):
- `pixel_xy`     absolute pixels, (x, y) / (x1, y1, x2, y2) — Qwen2.5-VL and the default for others
- `norm1000_yx`  integers 0-1000, (y, x) / [ymin, xmin, ymax, xmax] — Gemini
- `norm1000_xy`  integers 0-1000, (x, y) / (x1, y1, x2, y2) — Qwen3-VL and other 0-1000 grids
- `norm01_xy`    fractions 0-1 with three decimals, (x, y) / (x1, y1, x2, y2)

Normalised values are rounded half up with exact integer arithmetic (no float drift), so the image
corners map to exactly 0 and 1000 and the centre of an even-sized image to exactly 500.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

Number = int | float


@dataclass(frozen=True)
class Convention:
    name: str
    scale: int | None  # None = absolute pixels
    yx: bool           # True: y before x
    decimals: int = 0
    box_brackets: bool = False

    def describe(self) -> str:
        grid = "absolute pixels" if self.scale is None else f"normalised 0-{self.scale}"
        return f"{self.name}: {grid}, {'(y, x)' if self.yx else '(x, y)'}"


CONVENTIONS: dict[str, Convention] = {
    "pixel_xy": Convention("pixel_xy", None, yx=False),
    "norm1000_yx": Convention("norm1000_yx", 1000, yx=True, box_brackets=True),
    "norm1000_xy": Convention("norm1000_xy", 1000, yx=False),
    "norm01_xy": Convention("norm01_xy", 1, yx=False, decimals=3),
}

#: Documented defaults per model family (the paper names Gemini and Qwen; the rest is an assumption).
FAMILY_CONVENTIONS = {
    "gemini": "norm1000_yx",
    "qwen2.5-vl": "pixel_xy",
    "qwen3-vl": "norm1000_xy",
    "default": "pixel_xy",
}


def convention(name: str) -> Convention:
    try:
        return CONVENTIONS[name]
    except KeyError:
        raise ValueError(f"unknown coordinate convention {name!r}; choose one of {sorted(CONVENTIONS)}") from None


def _exact(value: Number) -> Fraction:
    """The decimal value as written (0.96 is 24/25, not the nearest binary float)."""
    return Fraction(str(value)) if isinstance(value, float) else Fraction(value)


def _round_half_up(value: Fraction) -> int:
    return int((value * 2 + 1) // 2)


def _normalise(value: Number, extent: int, conv: Convention) -> str:
    if conv.scale is None:
        return str(_round_half_up(_exact(value)))
    scaled = _exact(value) * conv.scale / extent
    if conv.decimals == 0:
        return str(_round_half_up(scaled))
    factor = 10**conv.decimals
    return f"{_round_half_up(scaled * factor) / factor:.{conv.decimals}f}"


def _check(values: Sequence[Number], width: int, height: int) -> None:
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    for index, value in enumerate(values):
        extent = width if index % 2 == 0 else height
        if not 0 <= value <= extent:
            axis = "x" if index % 2 == 0 else "y"
            raise ValueError(f"{axis}={value} lies outside the {width}x{height} image")


def render_point(point: Sequence[Number], width: int, height: int, name: str) -> str:
    """A canonical pixel point (x, y) as text in convention `name`, e.g. `(540, 1210)` or `(504, 500)`."""
    if len(point) != 2:
        raise ValueError(f"a point has 2 values, got {len(point)}")
    _check(point, width, height)
    conv = convention(name)
    x, y = _normalise(point[0], width, conv), _normalise(point[1], height, conv)
    return f"({y}, {x})" if conv.yx else f"({x}, {y})"


def render_box(box: Sequence[Number], width: int, height: int, name: str) -> str:
    """A canonical pixel box (x1, y1, x2, y2) as text in convention `name`."""
    if len(box) != 4:
        raise ValueError(f"a box has 4 values, got {len(box)}")
    _check(box, width, height)
    conv = convention(name)
    x1, y1, x2, y2 = (_normalise(v, width if i % 2 == 0 else height, conv) for i, v in enumerate(box))
    values = (y1, x1, y2, x2) if conv.yx else (x1, y1, x2, y2)
    text = ", ".join(values)
    return f"[{text}]" if conv.box_brackets else f"({text})"


def render(coords: Sequence[Number], width: int, height: int, name: str) -> str:
    """Render a point (2 values) or a box (4 values)."""
    if len(coords) == 2:
        return render_point(coords, width, height, name)
    if len(coords) == 4:
        return render_box(coords, width, height, name)
    raise ValueError(f"coordinates must be a point (2 values) or a box (4 values), got {len(coords)}")
