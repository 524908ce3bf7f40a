"""The tables a run appends to (`sandbox.engine.tables`): rows given as cells or by column, cut back to a
checkpoint's sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.engine.tables import Tables, append_rows


def test_rows_by_column_are_written_in_the_header_s_order_and_cells_as_they_are(tmp_path: Path) -> None:
    tables = Tables(tmp_path, {"a.csv": ["generation", "name", "score"], "b.csv": ["x", "y"]})
    sizes = tables.start({"a.csv": [{"score": 0.5, "generation": 0, "name": "p"}], "b.csv": [[1, 2], (3, 4)]})
    tables.append(sizes, {"a.csv": [{"name": "q", "score": 1.25, "generation": 1}]})
    assert (tmp_path / "a.csv").read_text().splitlines() == ["generation,name,score", "0,p,0.5", "1,q,1.25"]
    assert (tmp_path / "b.csv").read_text().splitlines() == ["x,y", "1,2", "3,4"]


def test_a_row_by_column_takes_the_header_from_the_file_without_one_given(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("a,b\n")
    append_rows(tmp_path / "t.csv", [{"b": "y", "a": "x"}])
    append_rows(tmp_path / "t.csv", [])
    assert (tmp_path / "t.csv").read_text().splitlines() == ["a,b", "x,y"]


def test_a_row_by_column_without_a_header_s_column_is_refused_naming_it(tmp_path: Path) -> None:
    tables = Tables(tmp_path, {"a.csv": ["generation", "name"]})
    sizes = tables.start()
    with pytest.raises(KeyError, match="name"):
        tables.append(sizes, {"a.csv": [{"generation": 0}]})


def test_a_step_run_again_cuts_the_tables_back_to_the_checkpoint_s_sizes(tmp_path: Path) -> None:
    tables = Tables(tmp_path, {"a.csv": ["g"]})
    sizes = tables.start({"a.csv": [{"g": 0}]})
    tables.append(sizes, {"a.csv": [{"g": 1}]})  # written, then the run was killed before the checkpoint
    tables.append(sizes, {"a.csv": [{"g": 1}]})  # the step again, from the checkpoint's sizes
    assert (tmp_path / "a.csv").read_text().splitlines() == ["g", "0", "1"]


def test_an_integer_array_of_rows_is_written_byte_for_byte_as_its_rows_as_lists(tmp_path: Path) -> None:
    import numpy as np

    edges = np.array([[0, 1], [0, 999_999], [12, -3]], dtype=np.int64)
    for name, rows in (("array.csv", edges), ("lists.csv", edges.tolist())):
        (tmp_path / name).write_text("a,b\r\n")
        append_rows(tmp_path / name, rows)
        append_rows(tmp_path / name, np.zeros((0, 2), dtype=np.int64))
    assert (tmp_path / "array.csv").read_bytes() == (tmp_path / "lists.csv").read_bytes()
    with pytest.raises(TypeError, match="array.csv"):
        append_rows(tmp_path / "array.csv", np.ones((2, 2)))
