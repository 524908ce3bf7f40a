"""Two runs' tables compared as `sandbox replay` and the golden tables compare them (issue 61): what the game decided
exactly, measured floats within the stated tolerance, and a difference named by table, row, step, column and both
values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sandbox.base.rounding import apportion, below, best, close
from sandbox.engine.table_check import cell_match, compare_table

TABLE = pd.DataFrame(
    {
        "generation": ["0", "1", "2"],
        "move": ["C", "D", "C"],
        "count": ["3", "4", "5"],
        "distance": ["0.357913", "0.0", "1.25"],
    }
)


def _step(row: pd.Series) -> str:
    return f" (generation {row['generation']})"


def _changed(row: int, column: str, value: str) -> pd.DataFrame:
    table = TABLE.copy()
    table.loc[row, column] = value
    return table


def test_measured_floats_may_differ_in_their_last_digits_and_are_counted() -> None:
    found = _changed(0, "distance", "0.357914")  # another machine's sixth decimal
    found.loc[1, "distance"] = "-0.0"  # a rounding error's sign
    check = compare_table("norm_diversity.csv", TABLE, found, where=_step)
    assert check.identical and check.close == 2 and check.largest == pytest.approx(1e-6 / 0.357914)
    assert "2 float cells differed in the last digits" in check.line()


@pytest.mark.parametrize(
    ("row", "column", "value", "says"),
    [
        (1, "move", "C", "row 1 (generation 1): move is 'D' in the run, 'C' in the replay"),
        (2, "count", "6", "row 2 (generation 2): count is '5' in the run, '6' in the replay"),
        (2, "count", "5.00001", "row 2 (generation 2): count is '5' in the run, '5.00001' in the replay"),
        (2, "distance", "1.2501", "row 2 (generation 2): distance is '1.25' in the run, '1.2501' in the replay"),
        (0, "distance", "0.357923", "row 0 (generation 0): distance is '0.357913' in the run, '0.357923' in the"),
    ],
)
def test_what_the_game_decided_must_match_exactly_and_a_measure_beyond_the_tolerance_differs(
    row: int, column: str, value: str, says: str
) -> None:
    check = compare_table("generations.csv", TABLE, _changed(row, column, value), where=_step)
    assert not check.identical and says in check.line(), check.line()
    assert check.line().startswith("generations.csv: differs: ")


def test_cells_of_a_jsonl_table_are_compared_item_by_item() -> None:
    assert cell_match({"a": [0.5, "x"], "b": 2}, {"a": [0.5000001, "x"], "b": 2}) is not None
    assert cell_match({"a": [0.5, "x"]}, {"a": [0.5, "y"]}) is None
    assert cell_match([1, 2], [1, 2, 3]) is None and cell_match(3, 4) is None and cell_match(True, 1.0) is None


def test_missing_rows_and_other_columns_are_named() -> None:
    assert "3 rows in the run, 2 in the replay" in compare_table("t", TABLE, TABLE.iloc[:2], where=_step).line()
    assert "its columns differ" in compare_table("t", TABLE, TABLE.drop(columns=["move"])).line()


def test_choices_from_floats_tie_where_only_the_last_digits_differ() -> None:
    assert close(0.357913, 0.357914) and not close(0.35, 0.36) and close(1e-7, -1e-7)
    # written at six decimals, one last digit apart: close at any size (in binary 0.090001 - 0.09 > 1e-6); two apart
    # below 0.1: not
    steps = np.arange(0, 1_200_000)
    assert all(close(a / 1e6, (a + 1) / 1e6) for a in steps.tolist())
    assert not any(close(a / 1e6, (a + 2) / 1e6) for a in range(99_999))
    assert not below(steps[:-1] / 1e6, steps[1:] / 1e6).any()
    assert best([2.0, 2.0 + 4e-16, 1.0]) == 0 and best([2.0, 2.5, 1.0]) == 1
    assert best([2.0 + 4e-16, 2.0], key=lambda i: -i) == 1  # the caller's key, not the last digit
    assert below([1.0, 2.0 - 1e-15, 1.9], 2.0).tolist() == [True, False, True]
    assert apportion([0.1 * 30, 0.3 * 30, 0.6 * 30], 30) == [3, 9, 18]  # 3.0000000000000004 has no remainder
    assert apportion([1.5, 1.5, 1.0], 4) == [2, 1, 1]  # equal remainders: the earlier
