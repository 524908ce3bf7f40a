"""A derived field's expression (`sweep.derive`): arithmetic of numbers and of the run's fields by dotted path.

    population.members.1.share: 1 - population.members.0.share

Allowed: numbers, field paths (a number in a path indexes a list, as in the grid), `+ - * / **`, parentheses, and
`round`, `min`, `max`. The expression is parsed by Python's `ast` and only those nodes are evaluated: nothing else
runs. A float result is rounded to 12 decimals, so that `1 - 0.7` is 0.3 and not 0.30000000000000004.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from typing import Any

__all__ = ["evaluate", "expression_problem", "fields_of"]

_PATH = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.\w+)*")
_FUNCTIONS: dict[str, Callable[..., Any]] = {"round": round, "min": min, "max": max}
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def _parsed(expression: str) -> tuple[ast.Expression, dict[str, str]]:
    """The expression's tree, its field paths replaced by names (`_f0`, ...), and each name's path."""
    paths: dict[str, str] = {}

    def name(match: re.Match[str]) -> str:
        text = match.group(0)
        if text in _FUNCTIONS:
            return text
        found = next((k for k, v in paths.items() if v == text), None)
        if found is None:
            found = f"_f{len(paths)}"
            paths[found] = text
        return found

    try:
        tree = ast.parse(_PATH.sub(name, expression.strip()), mode="eval")
    except SyntaxError:
        raise ValueError(f"{expression!r} is not an arithmetic expression") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS or node.keywords:
                raise ValueError(f"{expression!r}: only round, min and max may be called")
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, int | float):
                raise ValueError(f"{expression!r}: {node.value!r} is not a number")
        elif isinstance(node, ast.BinOp):
            if type(node.op) not in _BINARY:
                raise ValueError(f"{expression!r}: only + - * / ** are allowed")
        elif isinstance(node, ast.UnaryOp):
            if type(node.op) not in _UNARY:
                raise ValueError(f"{expression!r}: only + - * / ** are allowed")
        elif not isinstance(node, ast.Expression | ast.Name | ast.Load | ast.operator | ast.unaryop):
            raise ValueError(f"{expression!r}: only arithmetic of numbers and fields is allowed")
    return tree, paths


def expression_problem(expression: str) -> str | None:
    """What is wrong with `expression`, or None.

    >>> expression_problem("1 - population.members.0.share") is None
    True
    >>> print(expression_problem("__import__('os').system('ls')"))
    "__import__('os').system('ls')": only round, min and max may be called
    """
    try:
        _parsed(expression)
    except ValueError as error:
        return str(error)
    return None


def fields_of(expression: str) -> list[str]:
    """The field paths `expression` reads.

    >>> fields_of("round(1 - population.members.0.share, 3) * seed")
    ['population.members.0.share', 'seed']
    """
    return list(_parsed(expression)[1].values())


def evaluate(expression: str, value_of: Callable[[str], Any]) -> int | float:
    """The expression's value, each field read by `value_of(path)`; `ValueError` naming a field that is not a
    number, or a division by zero.

    >>> evaluate("1 - population.members.0.share", {"population.members.0.share": 0.15}.get)
    0.85
    >>> evaluate("2 * population.agents", {"population.agents": 12}.get)
    24
    """
    tree, paths = _parsed(expression)
    values: dict[str, Any] = {}
    for name, path in paths.items():
        value = value_of(path)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{expression!r}: {path} is {value!r}, not a number")
        values[name] = value

    def run(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return run(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return values[node.id]
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](run(node.left), run(node.right))
        if isinstance(node, ast.UnaryOp):
            return _UNARY[type(node.op)](run(node.operand))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return _FUNCTIONS[node.func.id](*(run(arg) for arg in node.args))
        raise ValueError(f"{expression!r}: cannot evaluate {ast.dump(node)}")

    try:
        result = run(tree)
    except (ZeroDivisionError, OverflowError, TypeError) as error:
        raise ValueError(f"{expression!r}: {error}") from None
    if isinstance(result, float):
        result = round(result, 12)
    if not isinstance(result, int | float) or isinstance(result, bool):
        raise ValueError(f"{expression!r} gives {result!r}, not a number")
    return result
