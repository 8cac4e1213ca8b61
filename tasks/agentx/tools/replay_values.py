"""Replay's comparison of one argument value: the canonical form under which a call's value and a gold step's are
equal when the tool would treat them alike (`replay.py` owns which values are compared; this module how).

- numbers by value: `5.0` = `5` = `5.00`, a whole `1,000` = `1000`, `1e3` = `1000`;
- arithmetic by its syntax tree, parsed and never evaluated: the operands of `+` and of `*` as multisets (`3 + 5` =
  `5 + 3`, `2*(3+4)` = `(4+3)*2`; `5 - 3` != `3 - 5`), the arguments of `max` / `min` as multisets, a function
  with or without `math.` (`math.sqrt(16)` = `sqrt(16)`, as Calculator reads both), numbers inside by value,
  surrounding backticks dropped (Calculator drops them);
- `bbox`: its 4 numbers, whatever brackets and separators surround them;
- OverlayText's `position`: the GTA code the tool draws it at (`top-left` = `lt` = `tl`), or the 2 numbers of
  `(x, y)`; `color`: the RGB the tool draws (`red` = `#ff0000` = `RED`);
- code in a markdown fence (Solver's and CodePlotter's `command`): the code inside the first fence, as the sandbox
  runs it (`sandbox_worker._strip_fence`: after ```python, or after another fence's language tag), so a fenced
  call and an unfenced gold step (or the other way round) compare as the same code;
- `bool` arguments: true/false in any case;
- other text: case-folded, without whitespace, quotes, backticks and a final period.
"""

from __future__ import annotations

import ast
import math
import re
import textwrap
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation
from typing import Any

from PIL import ImageColor

from lmms_agentic.tasks.agentx.tools.catalogue import ArgSpec
from lmms_agentic.tasks.agentx.tools.local import position_code

MAX_EXPRESSION = 200
"""Characters of a value parsed as an arithmetic expression (longer values compare as text)."""
MAX_NODES = 100
"""Syntax-tree nodes of such an expression."""

_DROP = re.compile(r"[\s'\"`]+")
_SIGN_SPACE = re.compile(r"^([+-])\s+")
_EXACT = Context(prec=80, Emax=MAX_EMAX, Emin=MIN_EMIN)
"""Exact for every number replay reads (at most 64 characters): no rounding, no overflow."""
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?", re.IGNORECASE)
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_BOX_SEPARATORS = re.compile(r"[\s,;()\[\]{}]+")
_POINT_SEPARATORS = re.compile(r"[\s,;()\[\]{}=:xy]+")
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_SYMBOLS = str.maketrans({"×": "*", "÷": "/", "−": "-"})
_UNORDERED_CALLS = frozenset({"max", "min"})


def normalise(value: object) -> str:
    """Text as compared: case-folded, without whitespace, quotes, backticks and a final period."""
    return _DROP.sub("", str(value)).casefold().rstrip(".")


def number(text: str) -> str | None:
    """The canonical text of a number written alone, or None."""
    text = _SIGN_SPACE.sub(r"\1", text.strip())
    if len(text) > 64:
        return None
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    if not _NUMBER.fullmatch(text):
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return "0" if value == 0 else str(value.normalize(_EXACT))


def _negated(value: str) -> str:
    negated = _EXACT.minus(Decimal(value))
    return "0" if negated == 0 else str(negated.normalize(_EXACT))


def _function(node: ast.expr) -> str:
    """A called function's name, `math.` dropped (Calculator binds each `math` name bare and as `math.<name>`)."""
    if isinstance(node, ast.Name):
        return node.id.casefold()
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "math":
        return node.attr.casefold()
    raise ValueError("not a plain function name")


def _call(node: ast.Call) -> tuple[Any, ...]:
    name = _function(node.func)
    if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
        raise ValueError("unpacked arguments")
    args = [_tree(arg) for arg in node.args]
    if name in _UNORDERED_CALLS and not node.keywords:
        args.sort(key=repr)
    keywords = tuple(sorted((str(k.arg), _tree(k.value)) for k in node.keywords))
    return ("call", name, tuple(args), keywords)


def _tree(node: ast.AST) -> tuple[Any, ...]:
    """An expression in canonical form: chains of + and of * flattened into sorted operand lists."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        if isinstance(node.value, float) and not math.isfinite(node.value):
            raise ValueError("not a finite number")
        canonical_number = number(str(node.value) if isinstance(node.value, int) else repr(node.value))
        if canonical_number is None:
            raise ValueError("not a plain number")
        return ("n", canonical_number)
    if isinstance(node, ast.Name):
        return ("v", node.id.casefold())
    if isinstance(node, ast.Call):
        return _call(node)
    if isinstance(node, (ast.List, ast.Tuple)):
        return ("seq", tuple(_tree(element) for element in node.elts))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _tree(node.operand)
        if isinstance(node.op, ast.UAdd):
            return inner
        return ("n", _negated(inner[1])) if inner[0] == "n" else ("neg", inner)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _OPERATORS):
        if isinstance(node.op, (ast.Add, ast.Mult)):
            operands: list[tuple[Any, ...]] = []
            stack: list[ast.AST] = [node]
            while stack:
                item = stack.pop()
                if isinstance(item, ast.BinOp) and type(item.op) is type(node.op):
                    stack += [item.left, item.right]
                else:
                    operands.append(_tree(item))
            return (type(node.op).__name__, tuple(sorted(operands, key=repr)))
        return (type(node.op).__name__, _tree(node.left), _tree(node.right))
    raise ValueError(f"not arithmetic: {type(node).__name__}")


def expression(text: str) -> tuple[Any, ...] | None:
    """The canonical form of an arithmetic expression with at least one operator or call, or None (never
    evaluated)."""
    text = text.translate(_SYMBOLS).strip()
    if len(text) > MAX_EXPRESSION or not text:
        return None
    try:
        parsed = ast.parse(text, mode="eval")
        nodes = list(ast.walk(parsed))
        if len(nodes) > MAX_NODES or not any(isinstance(n, (ast.BinOp, ast.Call)) for n in nodes):
            return None
        return _tree(parsed.body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def box(text: str) -> tuple[str, ...] | None:
    """A bbox's 4 numbers in canonical form, whatever brackets and separators surround them, or None."""
    return _numbers(text, _BOX_SEPARATORS, 4)


def _numbers(text: str, separators: re.Pattern[str], count: int) -> tuple[str, ...] | None:
    parts = [part for part in separators.split(text.strip().casefold()) if part]
    numbers = [number(part) for part in parts]
    if len(numbers) != count or any(n is None for n in numbers):
        return None
    return tuple(str(n) for n in numbers)


def _colour(text: str) -> tuple[int, ...] | None:
    try:
        return tuple(ImageColor.getrgb(text.strip()))
    except ValueError:
        return None


def fenced_code(text: str) -> str:
    """The code inside the first markdown fence, dedented (the sandbox's rule, `sandbox_worker._strip_fence`, which
    runs isolated and cannot be imported there); the text unchanged without a fence."""
    if "```python" in text:
        text = text.split("```python", 1)[1].split("```", 1)[0]
    elif text.count("```") >= 2:
        text = text.split("```", 2)[1]
        tag, newline, rest = text.partition("\n")
        if newline and re.fullmatch(r"[A-Za-z][\w+-]*", tag):
            text = rest
    else:
        return text
    return textwrap.dedent(text).strip()


def canonical(arg: ArgSpec, value: object) -> tuple[Any, ...]:
    """One argument value in the form replay compares (see the module docstring)."""
    if value is None:
        return ("none",)
    if isinstance(value, bool):
        return ("bool", value)
    text = fenced_code(str(value)).strip().strip("`").strip()
    if arg.type == "bool" and text.casefold() in ("true", "false"):
        return ("bool", text.casefold() == "true")
    if arg.name == "bbox" and (four := box(text)) is not None:
        return ("box", four)
    if arg.name == "position" and (code := position_code(text)) is not None:
        return ("position", code)
    if arg.name == "position" and (point := _numbers(text, _POINT_SEPARATORS, 2)) is not None:
        return ("point", point)
    if arg.name == "color" and (rgb := _colour(text)) is not None:
        return ("rgb", rgb)
    if (plain := number(text)) is not None:
        return ("num", plain)
    if (tree := expression(text)) is not None:
        return ("expr", tree)
    return ("text", normalise(text))
