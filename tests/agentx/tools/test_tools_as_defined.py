"""The local tools behave as Agent-X's metadata (`core/toolmeta.json`) and GTA's implementation (agentlego) define
them: one table per tool, with the cases an issue found (CodePlotter ignoring `solution()`, OverlayText refusing
'mt', Calculator refusing `math.sqrt(16)`, giving `5` for `10/2` and reading `^` as a power), and the catalogue
text carrying the metadata's argument and output descriptions and defaults."""

from __future__ import annotations

import json
from typing import Any

import pytest
from PIL import Image

from lmms_agentic.tasks.agentx.core.release_data import toolmeta
from lmms_agentic.tasks.agentx.tools import calculator, local
from lmms_agentic.tasks.agentx.tools.catalogue import catalogue_text
from lmms_agentic.tasks.agentx.tools.local import ToolError
from lmms_agentic.tasks.agentx.tools.sandbox import Limits, Sandbox


# ------------------------------------------------------------------ Calculator (GTA: str(eval(expr)) over math names)
@pytest.mark.parametrize(("expression", "expected"), [
    ("10/2", "5.0"),                      # Python's true division, printed as str(): GTA returns str(res)
    ("7 // 2", "3"),
    ("math.sqrt(16)", "4.0"),             # GTA binds `math` too
    ("sqrt(16)", "4.0"),
    ("math.pi", "3.141592653589793"),
    ("math.factorial(5)", "120"),
    ("2^3", "1"),                         # Python's XOR, as GTA's eval reads it
    ("2**3", "8"),
    ("pow(2, 3)", "8.0"),                 # GTA's `pow` is math.pow
    ("0.1 + 0.2", "0.30000000000000004"),  # no rounding of the printed value
    ("round(2.567, 2)", "2.57"),
    ("round(2.567, ndigits=2)", "2.57"),
    ("max(1, 5, 2)", "5"),
    ("min([4, 3])", "3"),
    ("sum([1, 2, 3])", "6"),
    ("(1, 2)", "(1, 2)"),
    ("[1.0, 2]", "[1.0, 2]"),
    ("1 < 2 < 3", "True"),
    ("True and 3", "3"),
    ("0 and 1/0", "0"),                   # short-circuit
    ("5 if 2 > 1 else 3", "5"),
    ("~5", "-6"),
    ("1 << 4", "16"),
    ("abs(-3)", "3"),                     # a documented extra (GTA has no builtins)
    ("`8*2+5*6`", "46"),
])
def test_calculator_as_gta(expression: str, expected: str) -> None:
    assert calculator.evaluate(expression) == expected


@pytest.mark.parametrize(("expression", "reason"), [
    ("math.os", "unsupported syntax"),            # only math.<public name>
    ("math.sqrt.__self__", "unsupported syntax"),
    ("os.system('ls')", "unsupported syntax"),
    ("__import__('os')", "not defined"),
    ("(1).__class__", "unsupported syntax"),
    ("'a' * 3", "unsupported syntax"),
    ("lambda: 1", "unsupported syntax"),
    ("x + 1", "not defined"),
    ("pi(2)", "not a function"),
    ("sqrt", "is a function"),
    ("2.0^3", "TypeError"),                       # XOR of a float fails, as in Python
    ("1/0", "ZeroDivisionError"),
    ("10**100000", "exponent"),                   # size caps: the evaluator stays bounded
    ("(2**10000)**10000", "bits"),
    ("1 << 100000", "shift"),
    ("[1] * 100000", "items"),
    ("math.factorial(6000)", "factors"),
    ("math.comb(10**9, 5*10**8)", "factors"),
    ("math.perm(10**9, 10**6)", "factors"),
])
def test_calculator_refuses_with_a_reason(expression: str, reason: str) -> None:
    with pytest.raises(calculator.CalculatorError, match=reason):
        calculator.evaluate(expression)


def test_calculator_in_the_sandbox_gives_the_same_text(sandbox: Sandbox) -> None:
    limits = Limits(wall_s=10, cpu_s=2, mem_mb=512)
    assert [local.calculator(sandbox, e, limits).text for e in ("10/2", "math.sqrt(16)", "2^3")] == ["5.0", "4.0", "1"]


# ------------------------------------------------------------------ CodePlotter / Solver (GTA: Plot, Solver)
GTA_PLOT = """```python
import matplotlib.pyplot as plt
def solution():
    figure = plt.figure(figsize=(4, 3))
    plt.pie([23, 17, 35], labels=['A', 'B', 'C'])
    plt.figure(figsize=(2, 2))  # drawn later, not returned
    return figure
```"""


@pytest.mark.parametrize(("command", "size"), [
    (GTA_PLOT, (400, 300)),                                                          # the figure solution() returns
    ("Here is the code:\n" + GTA_PLOT + "\nIt draws a pie chart.", (400, 300)),      # prose around the fence
    ("def solution():\n    plt.figure(figsize=(3, 2))\n    plt.plot([0, 1])", (300, 200)),  # returns None: last figure
    ("```py\nplt.figure(figsize=(2, 3))\nplt.bar([1], [2])\n```", (200, 300)),       # a script, another fence tag
    ("    import matplotlib.pyplot as plt\n    plt.figure(figsize=(2, 2))", (200, 200)),  # indented code
])
def test_code_plotter(sandbox: Sandbox, command: str, size: tuple[int, int]) -> None:
    out = local.code_plotter(sandbox, command, Limits())
    assert out.image is not None and out.image.size == size


@pytest.mark.parametrize(("command", "error"), [
    ("def solution():\n    return 1", "drew no figure"),
    ("def solution():\n    raise ValueError('bad data')", "ValueError"),
])
def test_code_plotter_errors(sandbox: Sandbox, command: str, error: str) -> None:
    with pytest.raises(ToolError, match=error):
        local.code_plotter(sandbox, command, Limits())


def test_solver_runs_gta_style_code_with_its_preloaded_names(sandbox: Sandbox) -> None:
    code = "```python\ndef solution():\n    x = symbols('x')\n    return str(solve(Eq(x**2, 4), x))\n```"
    assert local.solver(sandbox, code, Limits()).text == "[-2, 2]"


# ------------------------------------------------------------------ OverlayText (GTA: AddText)
W, H = 672, 336  # font 18 px (GTA: 18 px per 336 px of height), margin 33 px (w // 20)
M = W // 20


def _ink(image: Image.Image | None, channel: int = 0) -> tuple[int, int, int, int]:
    """Bounding box (left, top, right, bottom) of the pixels strongly in `channel` (0 red, 2 blue)."""
    assert image is not None
    rgb = image.convert("RGB")
    found = [(x, y) for x in range(rgb.width) for y in range(0, rgb.height)
             if rgb.getpixel((x, y))[channel] > 200 > rgb.getpixel((x, y))[(channel + 1) % 3]]  # type: ignore[index]
    assert found
    xs, ys = [x for x, _ in found], [y for _, y in found]
    return min(xs), min(ys), max(xs), max(ys)


def _near(value: float, target: float, tolerance: float = 5) -> bool:
    return abs(value - target) <= tolerance


@pytest.mark.parametrize(("position", "check"), [
    ("lt", lambda b: _near(b[0], M) and _near(b[1], M)),
    ("mt", lambda b: _near((b[0] + b[2]) / 2, W / 2) and _near(b[1], M)),
    ("rt", lambda b: _near(b[2], W - M) and _near(b[1], M)),
    ("lm", lambda b: _near(b[0], M) and _near((b[1] + b[3]) / 2, H / 2)),
    ("mm", lambda b: _near((b[0] + b[2]) / 2, W / 2) and _near((b[1] + b[3]) / 2, H / 2)),
    ("rm", lambda b: _near(b[2], W - M) and _near((b[1] + b[3]) / 2, H / 2)),
    ("lb", lambda b: _near(b[0], M) and _near(b[3], H - M)),
    ("mb", lambda b: _near((b[0] + b[2]) / 2, W / 2) and _near(b[3], H - M)),
    ("rb", lambda b: _near(b[2], W - M) and _near(b[3], H - M)),
    ("(100, 200)", lambda b: _near(b[0], 100) and _near(b[3], 200)),  # (x, y): the text's left-bottom corner
    ("x=300, y=120", lambda b: _near(b[0], 300) and _near(b[3], 120)),
])
def test_overlay_text_positions_as_gta(position: str, check: Any) -> None:
    out = local.overlay_text(Image.new("RGB", (W, H), "white"), "Hello", position, "blue").image
    assert check(_ink(out, channel=2)), _ink(out, channel=2)


@pytest.mark.parametrize(("alias", "code"), [
    ("top-left", "lt"), ("top", "mt"), ("middle-top", "mt"), ("top center", "mt"), ("tm", "mt"), ("MT", "mt"),
    ("'mt'", "mt"), ("center", "mm"), ("centre", "mm"), ("left", "lm"), ("bottom-right", "rb"), ("lower_left", "lb"),
    ("bottom", "mb"), ("bl", "lb"),
])
def test_overlay_text_aliases_draw_as_the_code(alias: str, code: str) -> None:
    image = Image.new("RGB", (W, H), "white")
    drawn = [local.overlay_text(image, "Hi", p, None).image for p in (alias, code)]
    assert drawn[0] is not None and drawn[1] is not None and drawn[0].tobytes() == drawn[1].tobytes()


def test_overlay_text_defaults_to_red_and_places_multiline_text() -> None:
    out = local.overlay_text(Image.new("RGB", (W, H), "white"), "two\nlines", "rb", None).image
    _, top, right, bottom = _ink(out, channel=0)
    assert _near(right, W - M) and _near(bottom, H - M) and bottom - top > 24  # two 18 px lines; GTA's Pillow
    # call refuses multi-line text with a top or bottom anchor


@pytest.mark.parametrize(("height", "font_px"), [(336, 18), (672, 36), (1000, 53), (100, 8)])
def test_font_size_follows_gta(height: int, font_px: int) -> None:
    font = local._font(Image.new("RGB", (10, height)))
    assert getattr(font, "size", None) == font_px  # 18 px per 336 px of height; at least 8 px


@pytest.mark.parametrize(("position", "color", "message"), [
    ("somewhere", None, "position must be"), ("(1, 2, 3)", None, "position must be"),
    ("top-bottom", None, "position must be"), ("1e300, 5", None, "outside"), ("lt", "notacolour", "color"),
])
def test_overlay_text_refusals(position: str, color: str | None, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        local.overlay_text(Image.new("RGB", (50, 40), "white"), "x", position, color)


# ------------------------------------------------------------------ DrawBoundingBox (GTA: DrawBox)
@pytest.mark.parametrize("bbox", ["(10, 60, 50, 100)", "[10, 60, 50, 100]", "10,60,50,100", "(10.2, 59.8, 50, 100)"])
def test_draw_bounding_box_as_gta(bbox: str) -> None:
    out = local.draw_bounding_box(Image.new("RGB", (W, H), "white"), bbox, None).image
    assert out is not None
    assert out.getpixel((10, 80)) == (255, 0, 0) and out.getpixel((30, 60)) == (255, 0, 0)  # 1 px red outline
    assert out.getpixel((30, 80)) == (255, 191, 191)  # inside: red at alpha 64 over white
    assert out.getpixel((60, 80)) == (255, 255, 255) and out.getpixel((9, 80)) == (255, 255, 255)


def test_draw_bounding_box_annotation_sits_above_the_box() -> None:
    out = local.draw_bounding_box(Image.new("RGB", (W, H), "white"), "(100, 150, 200, 250)", "cat").image
    assert out is not None
    above = out.crop((0, 0, W, 150))
    left, _, _, bottom = _ink(above, channel=0)
    assert _near(left, 100) and _near(bottom, 145)  # its left-bottom corner at (x1, y1 - 5)


@pytest.mark.parametrize(("bbox", "message"), [
    ("(1, 2)", "four numbers"), ("(50, 20, 10, 60)", "empty"), ("(0, 0, 1e300, 5)", "outside"),
])
def test_draw_bounding_box_refusals(bbox: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        local.draw_bounding_box(Image.new("RGB", (50, 40), "white"), bbox, None)


# ------------------------------------------------------------------ OCR (GTA: "(x1, y1, x2, y2) text" per line)
class _Engine:
    def __init__(self, found: list[tuple[list[list[float]], str, float]]) -> None:
        self.found = found

    def __call__(self, _: object) -> tuple[list[tuple[list[list[float]], str, float]], None]:
        return self.found, None


@pytest.mark.parametrize(("found", "expected"), [
    ([([[50.7, 80.2], [90.9, 80.2], [90.9, 99.6], [50.7, 99.6]], "second", 0.9),
      ([[10.6, 10.4], [40.2, 10.4], [40.2, 30.9], [10.6, 30.9]], "first", 0.9)],
     "(10, 10, 40, 30) first\n(50, 80, 90, 99) second"),  # integer corners (GTA: int()), reading order
    ([], "(no text found)"),
])
def test_ocr_output_format(found: list[Any], expected: str) -> None:
    engine = local.OcrEngine()
    engine._engine = _Engine(found)
    assert engine(Image.new("RGB", (100, 100), "white")).text == expected


# ------------------------------------------------------------------ the catalogue shown to the model
@pytest.mark.parametrize("tool", sorted(toolmeta()))
def test_catalogue_text_carries_the_metadata(tool: str) -> None:
    text = catalogue_text()
    block = text[text.index(f"- {tool}: "):].split("\n- ", 1)[0]
    entry = toolmeta()[tool]
    assert entry["description"] in block
    for arg in entry["inputs"]:
        line = next(line for line in block.splitlines() if line.strip().startswith(f'"{arg["name"]}" ('))
        assert arg["description"] in line and arg["type"] in line
        assert ("optional" in line) == bool(arg.get("optional"))
        if "default" in arg:
            assert f"default {json.dumps(arg['default'])}" in line
    output = entry["outputs"][0]
    assert f"returns {output['type']} ({output['name']}): {output['description']}" in block
