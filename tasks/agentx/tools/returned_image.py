"""The sample log's reference to an image a tool returned (a round's `returned_image`), and its checked reading.

`reference(image)` is what a round logs: `{"png_b64": <PNG thumbnail, longest side at most THUMBNAIL_SIDE>,
"width": W, "height": H, "pixels_sha256": <SHA-256 of the full image's pixels>}`, or `{"error": ..., "width": W,
"height": H}` when the image cannot be logged.  The digest is of 8-bit RGB pixels row by row (RGBA when the image
has alpha): `hashlib.sha256(image.convert("RGB").tobytes())`, the same whatever encoder or version, and cheap (a
PNG encoding of a 1920x1280 image takes about 150 ms on one core, this whole reference about 15 ms).  The full
image is not kept; the thumbnail is re-encoded with fewer colours, then smaller, until it fits `MAX_THUMBNAIL_BYTES`.
`read(value)` checks a logged reference before a viewer or an export uses it (a sample log is input like any
other): a bounded base64 text of a PNG no larger than the thumbnail, decoded without trusting its declared size.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from PIL import Image

THUMBNAIL_SIDE = 256
"""Longest side of the logged thumbnail, in pixels."""
MAX_THUMBNAIL_BYTES = 64 * 1024
"""Largest logged thumbnail PNG (before base64)."""
MAX_LOGGED_PIXELS = 40_000_000
"""A larger returned image is not logged (the runtime refuses such outputs before this)."""
MIN_SIDE = 16
PNG_MODES = frozenset({"1", "L", "LA", "I", "I;16", "P", "RGB", "RGBA"})
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_SHA256 = re.compile(r"[0-9a-f]{64}")
log = logging.getLogger(__name__)


def _has_alpha(image: Image.Image) -> bool:
    return "A" in image.getbands() or (image.mode == "P" and "transparency" in image.info)


def _png(image: Image.Image) -> bytes:
    if image.mode not in PNG_MODES:
        image = image.convert("RGBA" if _has_alpha(image) else "RGB")
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def thumbnail_png(image: Image.Image) -> bytes:
    """`image` as a PNG of at most `THUMBNAIL_SIDE` pixels a side and `MAX_THUMBNAIL_BYTES` bytes."""
    thumb = image.convert("RGBA" if _has_alpha(image) else "RGB")
    side = THUMBNAIL_SIDE
    while True:
        thumb.thumbnail((side, side))
        data = _png(thumb)
        if len(data) <= MAX_THUMBNAIL_BYTES:
            return data
        data = _png(thumb.quantize(256) if thumb.mode == "RGB" else thumb.quantize(256, Image.Quantize.FASTOCTREE))
        if len(data) <= MAX_THUMBNAIL_BYTES or side <= MIN_SIDE:
            return data
        side //= 2


def pixels_sha256(image: Image.Image) -> str:
    """SHA-256 of the image's pixels as 8-bit RGB (RGBA when it has alpha), row by row."""
    rgb = image if image.mode == ("RGBA" if _has_alpha(image) else "RGB") else \
        image.convert("RGBA" if _has_alpha(image) else "RGB")
    return hashlib.sha256(rgb.tobytes()).hexdigest()


def reference(image: object) -> dict[str, Any]:
    """The round's `returned_image` for a tool's output image (module docstring); never raises."""
    if not isinstance(image, Image.Image):
        return {"error": f"the tool returned {type(image).__name__}, not an image", "width": None, "height": None}
    width, height = image.size
    if width < 1 or height < 1 or width * height > MAX_LOGGED_PIXELS:
        return {"error": f"a {width}x{height} image is not logged", "width": width, "height": height}
    try:
        return {"png_b64": base64.b64encode(thumbnail_png(image)).decode("ascii"), "width": width,
                "height": height, "pixels_sha256": pixels_sha256(image)}
    except Exception as err:  # a mode or a damaged image Pillow cannot write: the round says so
        log.warning("agentx_tools: a returned %sx%s image could not be logged (%s)", width, height,
                    err.__class__.__name__)
        return {"error": f"the image could not be encoded ({err.__class__.__name__})", "width": width,
                "height": height}


@dataclass(frozen=True)
class ReturnedImage:
    """A checked logged reference: the decoded thumbnail and its PNG, the full image's size and digest."""

    thumbnail: Image.Image
    png: bytes
    width: int | None
    height: int | None
    sha256: str | None

    def data_uri(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")

    def caption(self) -> str:
        size = f"{self.width}x{self.height}" if self.width and self.height else "size not logged"
        return f"{size}, sha256 {self.sha256[:12]}" if self.sha256 else size


def _side(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 10**6 else None


def read(value: object) -> ReturnedImage | str:
    """The checked reference, or why it cannot be shown (module docstring)."""
    if not isinstance(value, Mapping):
        return "no image reference in the log"
    if "png_b64" not in value:
        error = value.get("error")
        return f"not logged: {str(error)[:200]}" if error else "no thumbnail in the log"
    text = value["png_b64"]
    if not isinstance(text, str) or len(text) > 4 * (MAX_THUMBNAIL_BYTES // 3 + 1):
        return "the logged thumbnail is not a text of at most the thumbnail's size"
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return "the logged thumbnail is not base64"
    if not data.startswith(PNG_SIGNATURE):
        return "the logged thumbnail is not a PNG"
    try:
        with Image.open(io.BytesIO(data), formats=["PNG"]) as opened:
            if max(opened.size) > THUMBNAIL_SIDE or min(opened.size) < 1:
                return f"the logged thumbnail is {opened.width}x{opened.height} (at most {THUMBNAIL_SIDE} a side)"
            opened.verify()  # every chunk whole, whatever ImageFile.LOAD_TRUNCATED_IMAGES says (lmms-eval sets it)
        with Image.open(io.BytesIO(data), formats=["PNG"]) as opened:
            opened.load()
            thumbnail = opened.copy()
    except Exception as err:  # a damaged or hostile PNG: not shown, with why
        return f"the logged thumbnail could not be decoded ({err.__class__.__name__})"
    digest = value.get("pixels_sha256")
    return ReturnedImage(thumbnail, data, _side(value.get("width")), _side(value.get("height")),
                         digest if isinstance(digest, str) and _SHA256.fullmatch(digest) else None)
