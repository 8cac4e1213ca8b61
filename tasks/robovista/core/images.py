"""The RoboVista paper's image policy (App. B, public runner), on PIL images the caller has already decoded.

`preprocess_image` converts modes other than RGB/L to RGB, downscales so the longer side is `max_side` (the shorter
side truncated with `int()`, never upscaled, PIL's default resampling), then round-trips through JPEG at
`jpeg_quality`. The round trip happens here so that every backend receives identical pixels as a PIL image.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image


@dataclass(frozen=True)
class ImagePolicy:
    """Declared image preprocessing, chosen by name in the task YAML (`image_preprocess`, recorded in the results
    file's `configs`)."""

    max_side: int | None = 720
    jpeg_quality: int | None = 85

    @classmethod
    def named(cls, name: str) -> ImagePolicy:
        """`paper` = longest side 720 + JPEG q85 (RoboVista App. B); `none` = images as stored."""
        if name == "paper":
            return cls(720, 85)
        if name == "none":
            return cls(None, None)
        raise ValueError(f"unknown image preprocessing {name!r}; use 'paper' or 'none'")


def scaled_size(width: int, height: int, max_side: int) -> tuple[int, int]:
    """Size after fitting the longer side to `max_side` (shorter side truncated); unchanged if it fits."""
    if width <= max_side and height <= max_side:
        return width, height
    if width >= height:
        return max_side, int(height * max_side / width)
    return int(width * max_side / height), max_side


def preprocess_image(image: Image.Image, policy: ImagePolicy) -> Image.Image:
    """Apply `policy` to one image and return a new PIL image (the input is not modified)."""
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    if policy.max_side is not None:
        size = scaled_size(image.width, image.height, policy.max_side)
        if size != image.size:
            image = image.resize(size)
    if policy.jpeg_quality is not None:
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=policy.jpeg_quality)
        buffer.seek(0)
        image = Image.open(buffer)
        image.load()
    return image
