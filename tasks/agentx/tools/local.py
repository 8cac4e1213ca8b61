"""The `local` backend: the Agent-X tools that run on a CPU with no model download.

- Calculator: one Python expression evaluated on a syntax tree (numbers, arithmetic, comparisons, `math` names);
  no `eval`, no attribute access, no imports; exponents and factorials are size-capped so a call cannot hang.
- Solver / CodePlotter: the model's Python code in the subprocess sandbox (`sandbox.py`); Solver returns what the
  code prints (or `solution()`'s value, or the last expression's); CodePlotter returns the last figure (PNG, 100 dpi).
- DrawBoundingBox / OverlayText: Pillow on a copy of the image; boxes are pixel `(x1, y1, x2, y2)`, origin top-left.
- OCR: `rapidocr-onnxruntime` (PP-OCRv4 detection + recognition, bundled in the wheel, offline); one line per text
  region, `(x1, y1, x2, y2) text`, in reading order (top to bottom, then left to right).  Detection sees the image
  with its longer side capped at 960 px and never upscaled (the wheel's default upscales the shorter side to 736,
  10x slower on small images); one ONNX thread per call, so concurrent calls share the cores instead of spinning.
Every function returns a `ToolOutput`; bad input is a `ToolError` with a message for the model.
"""

from __future__ import annotations

import ast
import io
import math
import operator
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from lmms_agentic.tasks.agentx.tools.sandbox import Limits, Sandbox


class ToolError(Exception):
    """A call that ran but failed; the message becomes the observation ("Error: ...")."""


@dataclass(frozen=True)
class ToolOutput:
    text: str
    image: Image.Image | None = None


# ------------------------------------------------------------------ Calculator
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Not: operator.not_}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge}
_NAMES: dict[str, Any] = {name: getattr(math, name) for name in dir(math) if not name.startswith("_")}
_NAMES.update({"abs": abs, "round": round, "min": min, "max": max, "sum": sum, "int": int, "float": float,
               "pow": pow, "len": len})
_MAX_EXPONENT = 10_000
_MAX_FACTORIAL = 5_000


def _checked_pow(base: Any, exponent: Any) -> Any:
    if isinstance(exponent, (int, float)) and abs(exponent) > _MAX_EXPONENT:
        raise ToolError(f"exponent {exponent} is too large (limit {_MAX_EXPONENT})")
    return operator.pow(base, exponent)


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex)) \
            and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        return _checked_pow(left, right) if isinstance(node.op, ast.Pow) else _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        left = _evaluate(node.left)
        for op, comparator in zip(node.ops, node.comparators, strict=False):
            right = _evaluate(comparator)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_evaluate(element) for element in node.elts]
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _NAMES and not node.keywords:
        function = _NAMES[node.func.id]
        args = [_evaluate(arg) for arg in node.args]
        if function is math.factorial and args and isinstance(args[0], int) and args[0] > _MAX_FACTORIAL:
            raise ToolError(f"factorial argument {args[0]} is too large (limit {_MAX_FACTORIAL})")
        if function is pow and len(args) >= 2:
            _checked_pow(args[0], args[1])
        return function(*args)
    raise ToolError(f"unsupported syntax {ast.dump(node)[:60]}: the expression may use numbers, arithmetic, "
                    f"comparisons and math functions only")


def _format_number(value: Any) -> str:
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return repr(round(value, 10))
    if isinstance(value, list):
        return "[" + ", ".join(_format_number(v) for v in value) + "]"
    return str(value)


def calculator(expression: str) -> ToolOutput:
    text = expression.strip().strip("`").strip()
    if not text:
        raise ToolError("the expression is empty")
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval")
    except SyntaxError as err:
        raise ToolError(f"not a Python expression ({err.msg})") from None
    try:
        value = _evaluate(tree)
    except ToolError:
        raise
    except (ArithmeticError, ValueError, TypeError) as err:
        raise ToolError(f"{err.__class__.__name__}: {err}") from None
    if callable(value):
        raise ToolError("the expression is a function, not a value; call it, e.g. sqrt(2)")
    return ToolOutput(_format_number(value))


# ------------------------------------------------------------------ sandboxed code
def solver(sandbox: Sandbox, command: str, limits: Limits) -> ToolOutput:
    result = sandbox.run("solver", command, limits)
    if not result.ok:
        raise ToolError(result.error or "the code failed")
    return ToolOutput(result.output or "(the code printed nothing; print the solution or define solution())")


def code_plotter(sandbox: Sandbox, command: str, limits: Limits) -> ToolOutput:
    result = sandbox.run("plotter", command, limits)
    if not result.ok or result.plot_png is None:
        raise ToolError(result.error or "no plot was produced")
    image = Image.open(io.BytesIO(result.plot_png)).convert("RGB")
    return ToolOutput("the plot", image)


# ------------------------------------------------------------------ drawing
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
POSITIONS = ("top-left", "top", "top-right", "left", "center", "right", "bottom-left", "bottom", "bottom-right")


def parse_bbox(text: str, image: Image.Image) -> tuple[int, int, int, int]:
    """Pixel (x1, y1, x2, y2) from "(x1, y1, x2, y2)" (any brackets), clipped to the image; ToolError otherwise."""
    numbers = [float(n) for n in _NUMBER.findall(str(text))]
    if len(numbers) != 4:
        raise ToolError(f"bbox must be four numbers (x1, y1, x2, y2), got {text!r}")
    x1, y1, x2, y2 = numbers
    if x2 <= x1 or y2 <= y1:
        raise ToolError(f"bbox {text!r} is empty: x2 must exceed x1 and y2 exceed y1")
    width, height = image.size
    box = (max(0, round(x1)), max(0, round(y1)), min(width - 1, round(x2)), min(height - 1, round(y2)))
    if box[2] <= box[0] or box[3] <= box[1]:
        raise ToolError(f"bbox {text!r} lies outside the {width}x{height} image")
    return box


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def draw_bounding_box(image: Image.Image, bbox: str, annotation: str | None) -> ToolOutput:
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
            return round(float(numbers[0])), round(float(numbers[1]))
        raise ToolError(f"position must be one of {', '.join(POSITIONS)} or 'x, y' pixels, got {position!r}")
    x = margin if "left" in key else (width - tw - margin if "right" in key else (width - tw) // 2)
    y = margin if key.startswith("top") else (height - th - margin if key.startswith("bottom") else (height - th) // 2)
    return x, y


def overlay_text(image: Image.Image, text: str, position: str, color: str | None) -> ToolOutput:
    out = image.convert("RGB").copy()
    draw = ImageDraw.Draw(out)
    font = _font(max(10, round(min(out.size) / 12)))
    try:
        fill = Image.new("RGB", (1, 1), color or "red").getpixel((0, 0))
    except ValueError:
        raise ToolError(f"color {color!r} is not a colour name or #rrggbb") from None
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
        return calculator(arguments["expression"])
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
