"""Two runs' tables compared as a reader of a paper compares them: what the game decided exactly, what was measured
within a stated tolerance (`sandbox replay`, and the tests' golden tables).

Exact: text (moves, names, proposals, choices), integers (counts, ids, amounts in whole units), booleans and empty
cells. Within tolerance: floats, written as such on both sides ("0.5", "1e-06": a mean, a share, an entropy, an
embedding distance, a drift), which match where they agree to five significant digits, or, near zero, to the sixth
decimal:

    |a - b| <= max(1e-5 * max(|a|, |b|), 1e-6)          (sandbox.base.rounding.close)

(with a billionth of it to spare, so that two values written at six decimals one last digit apart always match:
0.090001 - 0.09 is 1.0000000000287557e-06 in binary).

The last digits of such a number follow the machine, not the run (`sandbox.base.rounding` says why). A cell that
differed within the tolerance is counted (`TableCheck.close`, with the largest relative difference), so a replay
says how many float cells differed in their last digits instead of hiding them.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from sandbox.base.rounding import close

__all__ = ["TableCheck", "cell_match", "compare_table", "float_cells"]

_FLOAT = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+(?=[eE]))([eE][-+]?\d+)?|[-+]?(nan|inf)", re.IGNORECASE)


@dataclass
class TableCheck:
    """One table of a run against another's (the run against its replay, or a recording against a new run)."""

    table: str
    rows: int
    identical: bool
    difference: str = ""  # the first difference, in words ("row 12 (generation 3): cooperation is '0.5' in ...")
    close: int = 0  # cells that differed in their last digits, within the tolerance
    largest: float = 0.0  # the largest relative difference among them

    def line(self) -> str:
        if not self.identical:
            return f"{self.table}: differs: {self.difference} ({self.rows} rows)"
        within = (
            f"; {float_cells(self.close)} differed in the last digits, at most {self.largest:.1e} relative"
            if self.close
            else ""
        )
        return f"{self.table}: identical ({self.rows} rows{within})"


def float_cells(count: int) -> str:
    """'1 float cell', '2 float cells'."""
    return f"{count} float cell{'s' * (count != 1)}"


def _float(value: Any) -> float | None:
    """The number a cell holds if it is written as a float ("0.5", "1e-06", "-0.0", "nan"; a float of a JSONL
    table); None for text, booleans and integers ("3", which a count or an id is)."""
    if isinstance(value, str):
        text = value.strip()
        return float(text) if _FLOAT.fullmatch(text) else None
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral | bool):
        return float(value)
    return None


def cell_match(x: Any, y: Any) -> float | None:
    """None where the cells differ; else how far apart they are, relative (0 for equal cells). Floats on both sides
    match within the tolerance; anything else (text, booleans, integers) exactly.

    >>> cell_match("C", "C"), cell_match("3", "4"), cell_match("0.357913", "0.357914") is not None
    (0.0, None, True)
    >>> cell_match("0.5", "0.6"), cell_match("5", "5.00001"), cell_match("1_1", "11")
    (None, None, None)
    """
    if isinstance(x, list | dict) or isinstance(y, list | dict):
        return _nested(x, y)
    if isinstance(x, bool) != isinstance(y, bool):
        return None
    if x == y or (_nan(x) and _nan(y)):
        return 0.0
    a, b = _float(x), _float(y)
    if a is None or b is None:
        return None  # text, a boolean or an integer on one side at least
    if a == b:
        return 0.0  # one number written two ways ("-0.0" and "0.0")
    if not (math.isfinite(a) and math.isfinite(b) and close(a, b)):
        return None
    return abs(a - b) / max(abs(a), abs(b))


def _nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _nested(x: Any, y: Any) -> float | None:
    """Lists and dicts (a JSONL table's cells) compared item by item under the same rule."""
    if type(x) is not type(y) or len(x) != len(y):
        return None
    if isinstance(x, dict):
        if sorted(x) != sorted(y):
            return None
        pairs = [(x[k], y[k]) for k in x]
    else:
        pairs = list(zip(x, y))
    gaps = [cell_match(a, b) for a, b in pairs]
    return None if any(g is None for g in gaps) else max((g for g in gaps if g is not None), default=0.0)


def compare_table(
    name: str,
    expected: pd.DataFrame,
    found: pd.DataFrame,
    *,
    where: Callable[[pd.Series], str] = lambda row: "",
    sides: tuple[str, str] = ("the run", "the replay"),
) -> TableCheck:
    """The table `name` of one run (`expected`) against another's (`found`): identical within the tolerance, or its
    first difference by row (`where(row)` says the row's step, " (generation 3)"), column and both values (`sides`:
    what the two runs are called)."""
    if list(expected.columns) != list(found.columns):
        columns = f"its columns differ ({list(expected.columns)} against {list(found.columns)})"
        return TableCheck(name, len(expected), False, columns)
    within, largest = 0, 0.0
    for i in range(min(len(expected), len(found))):
        left, right = expected.iloc[i], found.iloc[i]
        for column in expected.columns:
            gap = cell_match(left[column], right[column])
            if gap is None:
                return TableCheck(
                    name,
                    len(expected),
                    False,
                    f"row {i}{where(left)}: {column} is {_short(left[column])} in {sides[0]}, "
                    f"{_short(right[column])} in {sides[1]}",
                )
            if gap or _text(left[column]) != _text(right[column]):
                within, largest = within + 1, max(largest, gap)
    if len(expected) != len(found):
        i = min(len(expected), len(found))
        row = expected.iloc[i] if len(expected) > len(found) else found.iloc[i]
        lengths = f"{len(expected)} rows in {sides[0]}, {len(found)} in {sides[1]}"
        return TableCheck(name, len(expected), False, f"row {i}{where(row)}: {lengths}")
    return TableCheck(name, len(expected), True, close=within, largest=largest)


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True) if isinstance(value, list | dict) else repr(value)


def _short(value: Any) -> str:
    text = _text(value)
    return text if len(text) <= 60 else text[:57] + "..."
