"""Image handling shared by every benchmark: loading from dataset cells, paper-style preprocessing, decode once.

`preprocess_image` is the RoboVista paper's pipeline (App. B, public runner), reusable by any
benchmark that needs "longest side N, JPEG quality Q": convert modes other than RGB/L to RGB,
downscale so the longer side is `max_side` (the shorter side truncated with `int()`, never
upscaled, PIL's default resampling), then a JPEG round trip at `jpeg_quality`. The round trip
happens here so that every backend receives identical pixels as a PIL image.

`decoded_once(key, load)` keeps the decoded (and preprocessed) images of recently used documents in a small
in-process LRU, so the k rows of one question under option permutations (which share their media) decode them
once per run. Tasks key it by the question's group id.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from lmms_agentic.adapters.lru import LruCache


@dataclass(frozen=True)
class ImagePolicy:
    """Declared image preprocessing; `describe()` is logged with every sample."""

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

    def describe(self) -> str:
        if self.max_side is None and self.jpeg_quality is None:
            return "none"
        return f"max_side={self.max_side},jpeg_q={self.jpeg_quality}"


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


def as_pil(cell: Any, *, where: str) -> Image.Image:
    """A PIL image from a dataset cell: PIL image, `{"bytes", "path"}` dict or a file path.

    `where` names the record and field for the error message when the cell is unusable.
    """
    if isinstance(cell, Image.Image):
        return cell
    if isinstance(cell, Mapping):
        if cell.get("bytes"):
            return Image.open(io.BytesIO(cell["bytes"]))
        if cell.get("path"):
            cell = cell["path"]
    if isinstance(cell, (str, Path)):
        path = Path(cell)
        if not path.exists():
            raise FileNotFoundError(f"{where}: image file {path} does not exist")
        return Image.open(path)
    raise TypeError(f"{where}: cannot read an image from a {type(cell).__name__}")


_IMAGES: LruCache[Hashable, list[Image.Image]] = LruCache(64)


def decoded_once(key: Hashable, load: Callable[[], list[Image.Image]]) -> list[Image.Image]:
    """`load()` the first time `key` is seen (LRU of 64 documents), the cached images after that."""
    return list(_IMAGES.get_or_load(key, load))


def image_cache_stats() -> dict[str, int]:
    return _IMAGES.stats()


def configure_image_cache(enabled: bool = True, clear: bool = True) -> None:
    """Switch the decode-once cache on or off (benchmarks compare both) and optionally empty it."""
    _IMAGES.configure(enabled, clear)
