"""The `local` backend: the Agent-X tools that run on a CPU with no model download.

Each follows Agent-X's tool metadata (`core/toolmeta.json`) and, where it is silent, GTA's implementation (agentlego),
which the tools come from; the deliberate differences are listed in tasks/agentx/README.md.
- Calculator: one Python expression with Python's semantics, as GTA's (`calculator.py`: `math` names bare or as
  `math.<name>`, the result as `str()`, so `10/2` is `5.0` and `^` is XOR), evaluated on a syntax tree (no `eval`)
  in the sandbox, whose time and memory limits stop a costly expression.
- Solver / CodePlotter: the model's Python code (the first markdown fence's content) in the sandbox (`sandbox.py`);
  both call `solution()` when the code defines it, as GTA's do.  Solver returns what the code prints and
  `solution()`'s value (or the last expression's); CodePlotter the figure `solution()` returns, else the last figure
  drawn (PNG, 100 dpi).  `SANDBOXED_TOOLS` need the sandbox: where it is unavailable they raise `ToolUnavailable`.
- DrawBoundingBox / OverlayText: GTA's `DrawBox` / `AddText` drawing with Pillow on a copy of the image; boxes are
  pixel `(x1, y1, x2, y2)`, origin top-left; positions are GTA's codes ('lt' ... 'rb', `POSITIONS`), words such as
  'top-left', or `(x, y)`, the text's left-bottom corner.  Coordinates far outside the image are refused and any
  Pillow failure is a `ToolError`.
- OCR: `rapidocr-onnxruntime` (PP-OCRv4 detection + recognition, bundled in the wheel, offline); one line per text
  region in GTA's format, `(x1, y1, x2, y2) text`, in reading order (top to bottom, then left to right).  Detection
  sees the image with its longer side capped at 960 px and never upscaled (the wheel's default upscales the shorter
  side to 736, 10x slower on small images); one ONNX thread per call, so concurrent calls share the cores.
Every function returns a `ToolOutput`; bad input is a `ToolError` with a message for the model.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from lmms_agentic.adapters.agentic.tool_io import Limits, ToolError, ToolOutput, ToolUnavailable
from lmms_agentic.tasks.agentx.tools.calculator import CalculatorError, parse
from lmms_agentic.tasks.agentx.tools.sandbox import Sandbox, SandboxResult


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
    if result.plot is None:
        raise ToolError("no plot was produced")
    return ToolOutput("the plot", result.plot)  # validated and decoded once by the sandbox


# ------------------------------------------------------------------ drawing
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
POSITIONS = ("lt", "mt", "rt", "lm", "mm", "rm", "lb", "mb", "rb")
"""GTA's `AddText` position codes: horizontal l(eft) / m(iddle) / r(ight), then vertical t(op) / m(iddle) /
b(ottom); the text's matching point (Pillow's anchor of the same name) is placed at that point of the image, inset
by a margin of 1/20 of the image width."""
MIN_FONT_PX = 8
_WORDS = {"left": "l", "right": "r", "top": "t", "upper": "t", "bottom": "b", "lower": "b", "middle": "m",
          "center": "m", "centre": "m", "mid": "m"}


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


def _font(image: Image.Image) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """GTA's font size, 18 px per 336 px of image height (at least `MIN_FONT_PX`)."""
    return ImageFont.load_default(size=max(MIN_FONT_PX, int(image.size[1] / 336 * 18)))


def _colour(color: str | None) -> tuple[int, ...]:
    try:
        fill = Image.new("RGB", (1, 1), color or "red").getpixel((0, 0))
    except ValueError:
        raise ToolError(f"color {color!r} is not a colour name or #rrggbb") from None
    assert isinstance(fill, tuple)
    return fill


def draw_bounding_box(image: Image.Image, bbox: str, annotation: str | None) -> ToolOutput:
    """GTA's `DrawBox`: the box outlined in red over a translucent red fill (alpha 64); the annotation in red, its
    left-bottom corner 5 px above the box's top-left corner."""
    with _pillow("DrawBoundingBox"):
        base = image.convert("RGBA")
        box = parse_bbox(bbox, base)
        canvas = Image.new("RGBA", base.size, (0, 0, 0, 0))
        draw = ImageDraw.Draw(canvas)
        draw.rectangle(box, fill=(255, 0, 0, 64), outline=(255, 0, 0, 255))
        if annotation:
            _draw_text(draw, (box[0], box[1] - 5), "lb", str(annotation), (255, 0, 0, 255), _font(base))
        out = Image.alpha_composite(base, canvas).convert("RGB")
    return ToolOutput(f"the image with a box at {box}", out)


def position_code(position: str) -> str | None:
    """One of `POSITIONS` for a GTA code ('mt'), the same two letters reversed ('tm'), or words ('top-left',
    'middle top', 'center'); None when `position` is none of these."""
    key = position.strip().strip("'\"").strip().lower()
    if key in POSITIONS:
        return key
    if len(key) == 2 and key[::-1] in POSITIONS:
        return key[::-1]
    words = [word for word in re.split(r"[\s_\-]+", key) if word]
    if not 1 <= len(words) <= 2 or any(word not in _WORDS for word in words):
        return None
    letters = [_WORDS[word] for word in words]
    horizontal = [c for c in letters if c in "lr"]
    vertical = [c for c in letters if c in "tb"]
    if len(horizontal) > 1 or len(vertical) > 1:
        return None
    return f"{horizontal[0] if horizontal else 'm'}{vertical[0] if vertical else 'm'}"


def _draw_text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], anchor: str, text: str, fill: tuple[int, ...],
               font: ImageFont.FreeTypeFont | ImageFont.ImageFont) -> None:
    """Text whose `anchor` point (Pillow's two-letter anchor) lies at `xy`; multi-line text, for which Pillow has no
    top or bottom anchor, is placed by its bounding box instead."""
    if "\n" not in text:
        draw.text(xy, text, fill=fill, font=font, anchor=anchor)
        return
    left, top, right, bottom = draw.multiline_textbbox((0, 0), text, font=font)
    x = xy[0] - {"l": left, "m": (left + right) / 2, "r": right}[anchor[0]]
    y = xy[1] - {"t": top, "m": (top + bottom) / 2, "b": bottom}[anchor[1]]
    draw.multiline_text((x, y), text, fill=fill, font=font, align={"l": "left", "m": "center", "r": "right"}[anchor[0]])


def overlay_text(image: Image.Image, text: str, position: str, color: str | None) -> ToolOutput:
    """GTA's `AddText`: a position code puts the text's matching point at that point of the image (inset by w/20);
    `(x, y)` puts the text's left-bottom corner there."""
    fill = _colour(color)
    with _pillow("OverlayText"):
        out = image.convert("RGB").copy()
        width, height = out.size
        code = position_code(str(position))
        if code is not None:
            margin = width // 20
            xy: tuple[float, float] = ({"l": margin, "m": width // 2, "r": width - margin}[code[0]],
                                       {"t": margin, "m": height // 2, "b": height - margin}[code[1]])
            anchor = code
        else:
            numbers = _NUMBER.findall(str(position))
            if len(numbers) != 2:
                raise ToolError(f"position must be a code {', '.join(POSITIONS)} (l/m/r then t/m/b, e.g. 'mt' for "
                                f"middle-top) or the coordinates (x, y) of the text's left-bottom corner; got "
                                f"{position!r}")
            xy = (float(numbers[0]), float(numbers[1]))
            for value in xy:
                _check_coordinate(value, out.size)
            anchor = "lb"
        _draw_text(ImageDraw.Draw(out), xy, anchor, str(text), fill, _font(out))
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
                                    "pip install -e '.[tools]' in the lmms-agentic checkout") from None
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
            regions.append((int(min(ys)), int(min(xs)), int(max(xs)), int(max(ys)), str(text)))
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
