"""Coordinate conventions: exact conversions at corners, edges and centres; declared names only."""

from __future__ import annotations

import pytest

from lmms_agentic.adapters.core.coords import (
    CONVENTIONS,
    FAMILY_CONVENTIONS,
    convention,
    render,
    render_box,
    render_point,
)

W, H = 1920, 1080


@pytest.mark.parametrize(("point", "convention", "expected"), [
    ((0, 0), "pixel_xy", "(0, 0)"),
    ((W, H), "pixel_xy", "(1920, 1080)"),
    ((960, 540), "pixel_xy", "(960, 540)"),
    ((0, 0), "norm1000_yx", "(0, 0)"),
    ((W, H), "norm1000_yx", "(1000, 1000)"),
    ((W, 0), "norm1000_yx", "(0, 1000)"),            # top-right corner: y first
    ((0, H), "norm1000_yx", "(1000, 0)"),            # bottom-left corner
    ((960, 540), "norm1000_yx", "(500, 500)"),
    ((W, 0), "norm1000_xy", "(1000, 0)"),
    ((0, H), "norm1000_xy", "(0, 1000)"),
    ((1, 1), "norm1000_xy", "(1, 1)"),               # 0.52 -> 1, 0.93 -> 1
    ((0.96, 0.54), "norm1000_xy", "(1, 1)"),         # exactly 0.5 rounds half up
    ((0.959, 0.539), "norm1000_xy", "(0, 0)"),
    ((W - 1, H - 1), "norm1000_xy", "(999, 999)"),   # last pixel column/row
    ((W, H), "norm01_xy", "(1.000, 1.000)"),
    ((480, 270), "norm01_xy", "(0.250, 0.250)"),
    ((540.4, 1000.5), "pixel_xy", "(540, 1001)"),
], ids=lambda v: str(v))
def test_render_point(point: tuple[float, float], convention: str, expected: str) -> None:
    assert render_point(point, W, H, convention) == expected


@pytest.mark.parametrize(("box", "convention", "expected"), [
    ((0, 0, W, H), "pixel_xy", "(0, 0, 1920, 1080)"),
    ((0, 0, W, H), "norm1000_yx", "[0, 0, 1000, 1000]"),
    ((480, 270, 960, 810), "norm1000_yx", "[250, 250, 750, 500]"),
    ((480, 270, 960, 810), "norm1000_xy", "(250, 250, 500, 750)"),
])
def test_render_box(box: tuple[int, int, int, int], convention: str, expected: str) -> None:
    assert render_box(box, W, H, convention) == expected


@pytest.mark.parametrize("name", sorted(CONVENTIONS))
@pytest.mark.parametrize("point", [(0, 0), (W, H), (W, 0), (0, H), (960, 540)])
def test_round_trip_at_corners_and_centre(name: str, point: tuple[int, int]) -> None:
    """Corners and the centre render to values that map back to the same pixels (no rounding drift)."""
    conv = convention(name)
    values = [float(v) for v in render(point, W, H, name).strip("()[]").split(", ")]
    x, y = (values[1], values[0]) if conv.yx else (values[0], values[1])
    if conv.scale is not None:
        x, y = x * W / conv.scale, y * H / conv.scale
    assert (x, y) == pytest.approx(point)


@pytest.mark.parametrize(("coords", "message"), [
    ((W + 1, 0), "x=1921 lies outside"),
    ((0, -1), "y=-1 lies outside"),
    ((1, 2, 3), r"point \(2 values\) or a box"),
])
def test_invalid_coordinates(coords: tuple[int, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render(coords, W, H, "pixel_xy")


def test_unknown_convention_is_rejected_with_the_choices() -> None:
    with pytest.raises(ValueError, match="norm1000_yx"):
        render((1, 1), W, H, "gemini")


def test_family_defaults_name_real_conventions() -> None:
    assert set(FAMILY_CONVENTIONS.values()) <= set(CONVENTIONS)
    assert FAMILY_CONVENTIONS["gemini"] == "norm1000_yx" and FAMILY_CONVENTIONS["qwen2.5-vl"] == "pixel_xy"
