"""Calculator's expression evaluator: one Python expression, evaluated on its syntax tree with Python's semantics.

Follows GTA's `Calculator` (agentlego `python_calculator.py`), the tool Agent-X's `Calculator` comes from: the names
of `math` without import and as `math.<name>`, plus `max`, `min`, `round`, `sum` (`pow` is `math.pow`); the result is
`str(value)`, so `10/2` gives `5.0`, `2^3` is Python's XOR (`1`) and `2**3` the power (`8`).  Unlike GTA it never
calls `eval`: only numbers, `True`/`False`, arithmetic, bitwise, boolean and comparison operators, conditional
expressions, tuples, lists and calls of the allowed names are accepted; it also knows `abs`, `int`, `float` and `len`.
Exponents, shifts, repetitions and factorials (also `perm`, `comb`) are size-capped.

Standard library only: the sandbox worker (`sandbox_worker.py`) loads this file from a read-only bind inside the
sandbox, where the time and memory limits can stop an expression that is still too costly; `local.py` imports it
for the same rules in-process.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any


class CalculatorError(Exception):
    """The expression is refused or fails; the message is for the model."""


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.LShift: operator.lshift, ast.RShift: operator.rshift}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Not: operator.not_,
                                            ast.Invert: operator.invert}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge}
MATH: dict[str, Any] = {name: getattr(math, name) for name in dir(math) if not name.startswith("_")}
NAMES: dict[str, Any] = {"max": max, "min": min, "round": round, "sum": sum, **MATH,  # GTA's names, in its order
                         "abs": abs, "int": int, "float": float, "len": len}
MAX_EXPONENT = 10_000
MAX_FACTORIAL = 5_000
MAX_ITEMS = 10_000
MAX_BITS = 1_000_000


def _checked(op: ast.operator, left: Any, right: Any) -> Any:
    """`left op right`, refusing an exponent, left shift or repetition that would build a huge value."""
    if isinstance(op, (ast.Pow, ast.LShift)) and isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT:
        word = "exponent" if isinstance(op, ast.Pow) else "shift"
        raise CalculatorError(f"{word} {right} exceeds the limit of {MAX_EXPONENT}")
    if isinstance(op, (ast.Pow, ast.LShift)) and isinstance(left, int) and isinstance(right, int) \
            and left.bit_length() * (right if isinstance(op, ast.Pow) else 1) + right > MAX_BITS:
        raise CalculatorError(f"the result's size exceeds the limit of {MAX_BITS} bits")
    if isinstance(op, ast.Mult):
        for items, times in ((left, right), (right, left)):
            if isinstance(items, (tuple, list)) and isinstance(times, int) and len(items) * times > MAX_ITEMS:
                raise CalculatorError(f"the repeated sequence exceeds the limit of {MAX_ITEMS} items")
    return _BINARY[type(op)](left, right)


def _named(node: ast.expr) -> Any:
    """The allowed function or constant a name or `math.<name>` stands for; `CalculatorError` otherwise."""
    if isinstance(node, ast.Name) and node.id in NAMES:
        return NAMES[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "math" \
            and node.attr in MATH:
        return MATH[node.attr]
    if isinstance(node, ast.Name):
        raise CalculatorError(f"name {node.id!r} is not defined: use numbers and the functions of `math`")
    raise _unsupported(node)


def _unsupported(node: ast.AST) -> CalculatorError:
    return CalculatorError(f"unsupported syntax {ast.dump(node)[:60]}: the expression may use numbers, operators, "
                           f"comparisons and math functions only")


def _check_size(function: Any, args: list[Any]) -> None:
    """Refuse a factorial, permutation or binomial coefficient whose work grows past `MAX_FACTORIAL` factors."""
    if not args or not all(isinstance(a, int) for a in args):
        return
    n, k = args[0], (args[1] if len(args) > 1 else None)
    if function is math.factorial or (function is math.perm and k is None):
        factors = n
    elif function is math.perm:
        factors = k
    elif function is math.comb and k is not None:
        factors = min(k, n - k)
    else:
        return
    if factors > MAX_FACTORIAL:
        raise CalculatorError(f"{function.__name__} of {tuple(args)} exceeds the limit of {MAX_FACTORIAL} factors")


def _call(node: ast.Call) -> Any:
    function = _named(node.func)
    if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
        raise _unsupported(node)
    args = [_evaluate(arg) for arg in node.args]
    keywords = {str(k.arg): _evaluate(k.value) for k in node.keywords}
    _check_size(function, args)
    if not callable(function):
        raise CalculatorError(f"{ast.unparse(node.func)} is a number, not a function")
    return function(*args, **keywords)


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex)):
        return node.value  # bool is an int
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _checked(node.op, _evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BoolOp):
        value = _evaluate(node.values[0])
        for operand in node.values[1:]:
            if (not value) if isinstance(node.op, ast.Or) else bool(value):
                value = _evaluate(operand)
        return value
    if isinstance(node, ast.IfExp):
        return _evaluate(node.body) if _evaluate(node.test) else _evaluate(node.orelse)
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        left = _evaluate(node.left)
        for op, comparator in zip(node.ops, node.comparators, strict=False):
            right = _evaluate(comparator)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(element) for element in node.elts)
    if isinstance(node, ast.List):
        return [_evaluate(element) for element in node.elts]
    if isinstance(node, (ast.Name, ast.Attribute)):
        return _named(node)
    if isinstance(node, ast.Call):
        return _call(node)
    raise _unsupported(node)


def parse(expression: str) -> ast.Expression:
    """The expression's syntax tree (no evaluation); `CalculatorError` when it is not one Python expression."""
    if not isinstance(expression, str):
        raise CalculatorError("the expression must be text")
    text = expression.strip().strip("`").strip()
    if not text:
        raise CalculatorError("the expression is empty")
    try:
        return ast.parse(text, mode="eval")
    except SyntaxError as err:
        raise CalculatorError(f"not a Python expression ({err.msg})") from None
    except ValueError as err:  # null bytes, lone surrogates: the message would echo them
        raise CalculatorError(f"not a Python expression ({err.__class__.__name__})") from None
    except (RecursionError, MemoryError):
        raise CalculatorError("the expression is nested too deeply") from None


def evaluate(expression: str) -> str:
    """`str()` of the expression's value, as GTA returns it; `CalculatorError` with a reason otherwise."""
    tree = parse(expression)
    try:
        value = _evaluate(tree)
        if callable(value):
            raise CalculatorError("the expression is a function, not a value; call it, e.g. sqrt(2)")
        return str(value)
    except CalculatorError:
        raise
    except (ArithmeticError, ValueError, TypeError, RecursionError) as err:
        raise CalculatorError(f"{err.__class__.__name__}: {err}") from None
