"""The `local` backend: the Agent-X tools that run on a CPU with no model download.

- Calculator: one Python expression evaluated on a syntax tree (`calculator.py`: numbers, arithmetic, comparisons,
  `math` names; no `eval`, attribute access or imports; exponents and factorials size-capped), in the sandbox so its
  time and memory limits stop a costly expression.
- Solver / CodePlotter: the model's Python code in the sandbox (`sandbox.py`); Solver returns what the code prints
  (or `solution()`'s value, or the last expression's); CodePlotter returns the last figure (PNG, 100 dpi).
  `SANDBOXED_TOOLS` need the sandbox: where it is unavailable they raise `ToolUnavailable`.
- DrawBoundingBox / OverlayText: Pillow on a copy of the image; boxes are pixel `(x1, y1, x2, y2)`, origin top-left;
  coordinates far outside the image are refused and any Pillow failure is a `ToolError`.
- OCR: `rapidocr-onnxruntime` (PP-OCRv4 detection + recognition, bundled in the wheel, offline); one line per text
  region, `(x1, y1, x2, y2) text`, in reading order (top to bottom, then left to right).  Detection sees the image
  with its longer side capped at 960 px and never upscaled (the wheel's default upscales the shorter side to 736,
  10x slower on small images); one ONNX thread per call, so concurrent calls share the cores instead of spinning.
Every function returns a `ToolOutput`; bad input is a `ToolError` with a message for the model.
"""

from __future__ import annotations

import io
import math
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from lmms_agentic.tasks.agentx.tools.calculator import CalculatorError, parse
from lmms_agentic.tasks.agentx.tools.sandbox import Limits, Sandbox, SandboxResult


class ToolError(Exception):
    """A call that ran but failed; the message becomes the observation ("Error: ...")."""


class ToolUnavailable(ToolError):
    """The tool cannot run here (no sandbox); the message starts "unavailable: no sandbox (...)"."""


@dataclass(frozen=True)
class ToolOutput:
    text: str
    image: Image.Image | None = None


# ------------------------------------------------------------------ sandboxed code
def _sandboxed(sandbox: Sandbox, mode: str, code: str, limits: Limits) -> SandboxResult:
    result = sandbox.run(mode, code, limits)
    if result.unavailable:
        raise ToolUnavailable(result.error or "unavailable: no sandbox")
    if not result.ok:
        raise ToolError(result.error or "the code failed")
    return result


def calculator(sandbox: Sandbox, expression: str, limits: Limits) -> ToolOutput:
    """The expression is checked here (syntax only) and evaluated in the sandbox, under its time and memory limit."""
    try:
        parse(expression)
    except CalculatorError as err:
        raise ToolError(str(err)) from None
    return ToolOutput(_sandboxed(sandbox, "calculator", expression, limits).output)


def solver(sandbox: Sandbox, command: str, limits: Limits) -> ToolOutput:
    result = _sandboxed(sandbox, "solver", command, limits)
    return ToolOutput(result.output or "(the code printed nothing; print the solution or define solution())")


def code_plotter(sandbox: Sandbox, command: str, limits: Limits) -> ToolOutput:
    result = _sandboxed(sandbox, "plotter", command, limits)
    if result.plot_png is None:
        raise ToolError("no plot was produced")
    try:
        image = Image.open(io.BytesIO(result.plot_png), formats=["PNG"]).convert("RGB")  # validated by the sandbox
    except Exception as err:
        raise ToolError(f"the plot could not be read ({err.__class__.__name__})") from None
    return ToolOutput("the plot", image)


# ------------------------------------------------------------------ drawing
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
POSITIONS = ("top-left", "top", "top-right", "left", "center", "right", "bottom-left", "bottom", "bottom-right")


def parse_bbox(text: str, image: Image.Image) -> tuple[int, int, int, int]:
    """Pixel (x1, y1, x2, y2) from "(x1, y1, x2, y2)" (any brackets), clipped to the image; ToolError otherwise."""
    numbers = [float(n) for n in _NUMBER.findall(str(text))]
    if len(numbers) != 4:
        raise ToolError(f"bbox must be four numbers (x1, y1, x2, y2), got {text!r}")
    for number in numbers:
        _check_coordinate(number, image.size)
    x1, y1, x2, y2 = numbers
    if x2 <= x1 or y2 <= y1:
        raise ToolError(f"bbox {text!r} is empty: x2 must exceed x1 and y2 exceed y1")
    width, height = image.size
    box = (max(0, round(x1)), max(0, round(y1)), min(width - 1, round(x2)), min(height - 1, round(y2)))
    if box[2] <= box[0] or box[3] <= box[1]:
        raise ToolError(f"bbox {text!r} lies outside the {width}x{height} image")
    return box


def _check_coordinate(value: float, size: tuple[int, int]) -> None:
    """Refuse a coordinate that is not finite or lies more than one image size outside the image."""
    reach = max(size)
    if not math.isfinite(value) or not -reach <= value <= 2 * reach:
        raise ToolError(f"coordinate {value:g} lies far outside the {size[0]}x{size[1]} image")


@contextmanager
def _pillow(tool: str) -> Iterator[None]:
    """Any Pillow failure inside a drawing tool becomes a ToolError."""
    try:
        yield
    except ToolError:
        raise
    except Exception as err:
        raise ToolError(f"{tool} could not draw ({err.__class__.__name__}: {err})"[:500]) from None


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def draw_bounding_box(image: Image.Image, bbox: str, annotation: str | None) -> ToolOutput:
    with _pillow("DrawBoundingBox"):
        out = image.convert("RGB").copy()
        box = parse_bbox(bbox, out)
        draw = ImageDraw.Draw(out)
        width = max(2, round(min(out.size) / 150))
        draw.rectangle(box, outline=(255, 0, 0), width=width)
        if annotation:
            font = _font(max(10, round(min(out.size) / 25)))
            draw.text((box[0] + width, max(0, box[1] - font.size - 2) if hasattr(font, "size") else box[1]),
                      str(annotation), fill=(255, 0, 0), font=font)
    return ToolOutput(f"the image with a box at {box}", out)


def _anchor(position: str, size: tuple[int, int], text_size: tuple[int, int]) -> tuple[int, int]:
    key = position.strip().lower().replace("_", "-").replace(" ", "-")
    key = {"upper-left": "top-left", "upper-right": "top-right", "lower-left": "bottom-left",
           "lower-right": "bottom-right", "middle": "center", "centre": "center"}.get(key, key)
    numbers = _NUMBER.findall(position)
    width, height = size
    tw, th = text_size
    margin = max(4, round(min(size) / 50))
    if key not in POSITIONS:
        if len(numbers) == 2:
            x, y = float(numbers[0]), float(numbers[1])
            _check_coordinate(x, size)
            _check_coordinate(y, size)
            return round(x), round(y)
        raise ToolError(f"position must be one of {', '.join(POSITIONS)} or 'x, y' pixels, got {position!r}")
    x = margin if "left" in key else (width - tw - margin if "right" in key else (width - tw) // 2)
    y = margin if key.startswith("top") else (height - th - margin if key.startswith("bottom") else (height - th) // 2)
    return x, y


def overlay_text(image: Image.Image, text: str, position: str, color: str | None) -> ToolOutput:
    try:
        fill = Image.new("RGB", (1, 1), color or "red").getpixel((0, 0))
    except ValueError:
        raise ToolError(f"color {color!r} is not a colour name or #rrggbb") from None
    with _pillow("OverlayText"):
        out = image.convert("RGB").copy()
        draw = ImageDraw.Draw(out)
        font = _font(max(10, round(min(out.size) / 12)))
        left, top, right, bottom = draw.textbbox((0, 0), str(text), font=font)
        x, y = _anchor(str(position), out.size, (round(right - left), round(bottom - top)))
        draw.text((x - left, y - top), str(text), fill=fill, font=font)
    return ToolOutput(f"the image with {text!r} at {position}", out)


# ------------------------------------------------------------------ OCR
class OcrEngine:
    """RapidOCR loaded once per process (thread-safe calls; ONNX sessions run concurrently)."""

    def __init__(self) -> None:
        self._engine: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._engine is None:
                try:
                    from rapidocr_onnxruntime import RapidOCR
                except ImportError:
                    raise ToolError("OCR needs the [tools] extra (rapidocr-onnxruntime); "
                                    "pip install 'lmms-agentic[tools]'") from None
                self._engine = RapidOCR(det_limit_type="max", det_limit_side_len=960, intra_op_num_threads=1,
                                        inter_op_num_threads=1)
            return self._engine

    def __call__(self, image: Image.Image) -> ToolOutput:
        import numpy as np

        engine = self._load()
        found, _ = engine(np.asarray(image.convert("RGB")))
        regions = []
        for points, text, _score in found or []:
            xs, ys = [p[0] for p in points], [p[1] for p in points]
            regions.append((round(min(ys)), round(min(xs)), round(max(xs)), round(max(ys)), str(text)))
        regions.sort(key=lambda r: (r[0] // 10, r[1]))
        lines = [f"({x1}, {y1}, {x2}, {y2}) {text}" for y1, x1, x2, y2, text in regions]
        return ToolOutput("\n".join(lines) if lines else "(no text found)")


def run_local(tool: str, arguments: Mapping[str, Any], images: Mapping[str, Image.Image], *, sandbox: Sandbox,
              ocr: OcrEngine, limits: Limits) -> ToolOutput:
    """Dispatch one bound call of a local tool (`LOCAL_TOOLS`)."""
    if tool == "Calculator":
        return calculator(sandbox, arguments["expression"], limits)
    if tool == "Solver":
        return solver(sandbox, arguments["command"], limits)
    if tool == "CodePlotter":
        return code_plotter(sandbox, arguments["command"], limits)
    if tool == "DrawBoundingBox":
        return draw_bounding_box(images["image"], arguments["bbox"], arguments.get("annotation"))
    if tool == "OverlayText":
        return overlay_text(images["image"], arguments["text"], arguments["position"], arguments.get("color"))
    if tool == "OCR":
        return ocr(images["image"])
    raise ToolError(f"{tool} has no local backend")


LOCAL_TOOLS = ("Calculator", "Solver", "CodePlotter", "DrawBoundingBox", "OverlayText", "OCR")
SANDBOXED_TOOLS = ("Calculator", "Solver", "CodePlotter")
