"""Calculator's expression evaluator: one Python expression evaluated on its syntax tree (numbers, arithmetic,
comparisons, `math` names); no `eval`, no attribute access, no imports; exponents and factorials are size-capped.

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
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Not: operator.not_}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge}
_NAMES: dict[str, Any] = {name: getattr(math, name) for name in dir(math) if not name.startswith("_")}
_NAMES.update({"abs": abs, "round": round, "min": min, "max": max, "sum": sum, "int": int, "float": float,
               "pow": pow, "len": len})
MAX_EXPONENT = 10_000
MAX_FACTORIAL = 5_000


def _checked_pow(base: Any, exponent: Any) -> Any:
    if isinstance(exponent, (int, float)) and abs(exponent) > MAX_EXPONENT:
        raise CalculatorError(f"exponent {exponent} is too large (limit {MAX_EXPONENT})")
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
        if function is math.factorial and args and isinstance(args[0], int) and args[0] > MAX_FACTORIAL:
            raise CalculatorError(f"factorial argument {args[0]} is too large (limit {MAX_FACTORIAL})")
        if function is pow and len(args) >= 2:
            _checked_pow(args[0], args[1])
        return function(*args)
    raise CalculatorError(f"unsupported syntax {ast.dump(node)[:60]}: the expression may use numbers, arithmetic, "
                          f"comparisons and math functions only")


def _format_number(value: Any) -> str:
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return repr(round(value, 10))
    if isinstance(value, list):
        return "[" + ", ".join(_format_number(v) for v in value) + "]"
    return str(value)


def parse(expression: str) -> ast.Expression:
    """The expression's syntax tree (no evaluation); `CalculatorError` when it is not one Python expression."""
    if not isinstance(expression, str):
        raise CalculatorError("the expression must be text")
    text = expression.strip().strip("`").strip()
    if not text:
        raise CalculatorError("the expression is empty")
    try:
        return ast.parse(text.replace("^", "**"), mode="eval")
    except SyntaxError as err:
        raise CalculatorError(f"not a Python expression ({err.msg})") from None
    except ValueError as err:  # null bytes, lone surrogates: the message would echo them
        raise CalculatorError(f"not a Python expression ({err.__class__.__name__})") from None
    except (RecursionError, MemoryError):
        raise CalculatorError("the expression is nested too deeply") from None


def evaluate(expression: str) -> str:
    """The expression's value as text; `CalculatorError` with a reason otherwise."""
    tree = parse(expression)
    try:
        value = _evaluate(tree)
        if callable(value):
            raise CalculatorError("the expression is a function, not a value; call it, e.g. sqrt(2)")
        return _format_number(value)
    except CalculatorError:
        raise
    except (ArithmeticError, ValueError, TypeError, RecursionError) as err:
        raise CalculatorError(f"{err.__class__.__name__}: {err}") from None
