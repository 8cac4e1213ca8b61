"""Each local tool on real inputs with exact expected outputs; argument typing from toolmeta.json.

The tools follow Agent-X's metadata and GTA's implementation (`test_tools_as_defined.py` holds the per-tool tables):
Calculator results are Python's `str()` (`sqrt(16) + 2**3` is `12.0`, `^` is XOR), DrawBoundingBox fills the box with
translucent red, OverlayText positions are GTA's codes (the old names stay as aliases)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from lmms_agentic.tasks.agentx.tools import calculator, local
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall, CallError, bind, catalogue
from lmms_agentic.tasks.agentx.tools.local import ToolError
from lmms_agentic.tasks.agentx.tools.sandbox import Limits, Sandbox

CALCULATOR = Limits(wall_s=10, cpu_s=2, mem_mb=512)


@pytest.mark.parametrize(("expression", "expected"), [
    ("5 - 3", "2"), ("8*2+5*6", "46"), ("sqrt(16) + 2**3", "12.0"), ("2**10", "1024"), ("round(pi, 3)", "3.142"),
    ("7 / 2", "3.5"), ("factorial(5)", "120"), ("1 < 2 < 3", "True")])
def test_calculator_exact(expression: str, expected: str) -> None:
    assert calculator.evaluate(expression) == expected


@pytest.mark.parametrize("expression", ["__import__('os')", "open('x')", "(1).__class__", "10**100000", "1/0", "",
                                        "(" * 300 + "1" + ")" * 300, "2*\ud800", "1\x00"])
def test_calculator_refuses_with_a_reason(expression: str) -> None:
    with pytest.raises(calculator.CalculatorError):
        calculator.evaluate(expression)


def test_calculator_tool_runs_in_the_sandbox(sandbox: Sandbox) -> None:
    assert local.calculator(sandbox, "8*2+5*6", CALCULATOR).text == "46"
    with pytest.raises(ToolError, match="ZeroDivisionError"):
        local.calculator(sandbox, "1/0", CALCULATOR)
    with pytest.raises(ToolError, match="not a Python expression"):  # refused in the parent, no sandbox round trip
        local.calculator(sandbox, "1 +", CALCULATOR)


def test_solver_runs_sympy_in_the_sandbox(sandbox: Sandbox) -> None:
    code = "```python\nx = sympy.Symbol('x')\nprint(sympy.solve(x**2 - 5*x + 6, x))\n```"
    assert local.solver(sandbox, code, Limits()).text == "[2, 3]"
    assert local.solver(sandbox, "def solution():\n    return sympy.integrate(sympy.Symbol('t'), "
                                 "(sympy.Symbol('t'), 0, 2))", Limits()).text == "2"


def test_code_plotter_image_statistics(sandbox: Sandbox) -> None:
    code = "import matplotlib.pyplot as plt\nplt.figure(figsize=(4, 3))\nplt.fill_between([0, 1], [1, 1], color='red')"
    out = local.code_plotter(sandbox, code, Limits())
    assert out.image is not None and out.image.size == (400, 300)
    rgb = np.asarray(out.image).astype(int)
    red = float(((rgb[..., 0] > 200) & (rgb[..., 1] < 60) & (rgb[..., 2] < 60)).mean())
    assert 0.3 < red < 0.8  # the filled axes area is red, the margins white
    again = local.code_plotter(sandbox, code, Limits())
    assert again.image is not None and again.image.tobytes() == out.image.tobytes()  # deterministic


def test_draw_bounding_box_pixelwise() -> None:
    image = Image.new("RGB", (100, 80), "white")
    out = local.draw_bounding_box(image, "(10, 20, 50, 60)", None).image
    assert out is not None
    assert out.getpixel((10, 40)) == (255, 0, 0) and out.getpixel((50, 40)) == (255, 0, 0)
    assert out.getpixel((30, 20)) == (255, 0, 0) and out.getpixel((30, 60)) == (255, 0, 0)
    # GTA's DrawBox tints the inside with red at alpha 64 (was: left white)
    assert out.getpixel((30, 40)) == (255, 191, 191) and out.getpixel((5, 5)) == (255, 255, 255)
    assert image.getpixel((10, 40)) == (255, 255, 255)  # the input is not modified
    with pytest.raises(ToolError, match="four numbers"):
        local.draw_bounding_box(image, "(1, 2)", None)


def test_overlay_text_lands_in_the_requested_corner() -> None:
    image = Image.new("RGB", (200, 200), "white")
    out = local.overlay_text(image, "42", "top-left", "blue").image
    assert out is not None
    blue = [(x, y) for x in range(200) for y in range(200) if out.getpixel((x, y))[2] > 200 > out.getpixel((x, y))[0]]
    assert blue and max(x for x, _ in blue) < 100 and max(y for _, y in blue) < 100
    gta = local.overlay_text(image, "42", "lt", "blue").image
    assert gta is not None and gta.tobytes() == out.tobytes()  # "top-left" is an alias of GTA's code "lt"
    with pytest.raises(ToolError, match="position"):
        local.overlay_text(image, "42", "somewhere", None)


@pytest.mark.parametrize("position", ["1e300, 5", "99999999999999999999, 1", "-1e400, 3", "5, 1e309"])
def test_overlay_text_refuses_huge_coordinates(position: str) -> None:
    with pytest.raises(ToolError, match="outside"):
        local.overlay_text(Image.new("RGB", (50, 40), "white"), "x", position, None)


@pytest.mark.parametrize("bbox", ["(0, 0, 1e300, 5)", "(0, 0, 99999999999999999999, 9)", "(1e309, 0, 2e309, 5)"])
def test_draw_bounding_box_refuses_huge_coordinates(bbox: str) -> None:
    with pytest.raises(ToolError, match="outside"):
        local.draw_bounding_box(Image.new("RGB", (50, 40), "white"), bbox, "label")


def test_pillow_failures_become_tool_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object, **__: object) -> None:
        raise SystemError("tile cannot extend outside image")

    monkeypatch.setattr(local.ImageDraw.ImageDraw, "text", broken)
    with pytest.raises(ToolError, match="SystemError"):
        local.overlay_text(Image.new("RGB", (50, 40), "white"), "x", "top-left", None)
    with pytest.raises(ToolError, match="SystemError"):
        local.draw_bounding_box(Image.new("RGB", (50, 40), "white"), "(1, 1, 20, 20)", "label")


def test_ocr_reads_rendered_text() -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    image = Image.new("RGB", (400, 120), "white")
    ImageDraw.Draw(image).text((20, 30), "EXIT 12", fill="black", font=ImageFont.load_default(size=48))
    text = local.OcrEngine()(image).text
    assert text.endswith(" EXIT 12") and text.count("\n") == 0


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("Calculator", {}, "needs the argument 'expression'"),
    ("Calculator", {"expr": "1"}, "has no argument"),
    ("OCR", {"image": "image_9"}, "must name an image"),
    ("WebSearch", {"query": "x", "k": "ten"}, "must be of type int"),
    ("NoSuchTool", {}, "unknown tool"),
    ("Calculator", "1+1", "must be a JSON object"),
])
def test_bad_arguments_are_clear_errors(tool: str, arguments: object, message: str) -> None:
    bound = bind(tool, arguments, 1, 1)
    assert isinstance(bound, CallError) and message in bound.message


def test_binding_fills_defaults_and_resolves_legacy_names() -> None:
    bound = bind("DetectGivenObject", {"image": "image", "text": "cat"}, 2, 1)
    assert isinstance(bound, BoundCall)
    assert bound.tool == "LocateObjectByText" and bound.arguments["top1"] is True and bound.images == {"image": 1}
    assert len(catalogue()) == 14
