"""RoboVista's image policy (`core/images.py`, paper App. B): longest side 720 (shorter side truncated, never
upscaled), modes other than RGB/L converted to RGB, a JPEG q85 round trip; `none` keeps the stored pixels."""

from __future__ import annotations

import pytest
from PIL import Image

from lmms_agentic.tasks.robovista.core.images import ImagePolicy, preprocess_image, scaled_size


@pytest.mark.parametrize(("size", "expected"), [
    ((1280, 720), (720, 405)),
    ((720, 1280), (405, 720)),
    ((720, 720), (720, 720)),
    ((721, 400), (720, 399)),       # 400 * 720 / 721 = 399.44 -> truncated
    ((1000, 333), (720, 239)),      # 239.76 -> truncated, not rounded
    ((640, 480), (640, 480)),       # never upscaled
    ((3000, 3000), (720, 720)),
    ((1, 5000), (0, 720)),
], ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v))
def test_scaled_size(size: tuple[int, int], expected: tuple[int, int]) -> None:
    assert scaled_size(*size, 720) == expected


@pytest.mark.parametrize(("mode", "out_mode"), [("RGB", "RGB"), ("L", "L"), ("RGBA", "RGB"), ("P", "RGB"),
                                                ("LA", "RGB"), ("CMYK", "RGB")])
def test_paper_policy_modes_and_jpeg(mode: str, out_mode: str) -> None:
    image = Image.new(mode, (1440, 900))
    out = preprocess_image(image, ImagePolicy.named("paper"))
    assert out.mode == out_mode and out.size == (720, 450) and out.format == "JPEG"
    assert image.size == (1440, 900)  # input untouched


def test_none_policy_keeps_pixels() -> None:
    image = Image.new("RGB", (1440, 900), (10, 20, 30))
    out = preprocess_image(image, ImagePolicy.named("none"))
    assert out.size == (1440, 900) and out.getpixel((0, 0)) == (10, 20, 30)
    assert (ImagePolicy.named("none"), ImagePolicy.named("paper")) == (ImagePolicy(None, None), ImagePolicy(720, 85))


def test_unknown_policy_name() -> None:
    with pytest.raises(ValueError, match="'paper' or 'none'"):
        ImagePolicy.named("fancy")
