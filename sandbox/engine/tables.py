"""The CSV tables a run appends to, one generation (or epoch) at a time, with their sizes kept in the checkpoint.

A step first cuts every table back to the sizes the last checkpoint recorded, then appends its rows, then returns
the new sizes for the checkpoint: a run killed after the rows were written but before the checkpoint was saved
writes them again, once, when it resumes, so its tables end as an uninterrupted run's.

A row is a sequence of cells in the header's order, or a mapping from the header's names (a game's typed record,
a `TypedDict`), whose cells are written in the header's order.
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

__all__ = ["Row", "Tables", "append_rows", "start_tables"]

Row = Sequence[Any] | Mapping[str, Any]


def start_tables(path: Path, columns: Mapping[str, Sequence[str]]) -> None:
    """Write each table's header row (a new run)."""
    for name, header in columns.items():
        with (path / name).open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerow(header)


def append_rows(path: Path, rows: Iterable[Row] | np.ndarray, header: Sequence[str] | None = None) -> None:
    """Append rows to the CSV table at `path`, all sequences or all mappings (the first row says which): a mapping's
    cells in the order of `header` (default: the table's first line). Sequences are written as they are, at the csv
    module's speed (a scripted population's 10,000 rows a generation). A 2-D integer array (a network's edges) is
    written by pandas, as the csv module would write its rows, without a Python list of them (a million agents'
    small world: 0.4 s, from 1.4 s)."""
    if isinstance(rows, np.ndarray):
        if rows.dtype.kind not in "iu" or rows.ndim != 2:
            raise TypeError(f"{path.name}: an array of rows is 2-D and of integers, not {rows.dtype} {rows.shape}")
        if len(rows):
            import pandas as pd

            with path.open("a", newline="", encoding="utf-8") as handle:
                pd.DataFrame(rows).to_csv(handle, header=False, index=False, lineterminator="\r\n")
        return
    remaining = iter(rows)
    first = next(remaining, None)
    if first is None:
        return
    with path.open("a", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        if isinstance(first, Mapping):
            names = read_header(path) if header is None else header
            mappings = cast("Iterator[Mapping[str, Any]]", itertools.chain([first], remaining))
            writer.writerows([row[name] for name in names] for row in mappings)
        else:
            writer.writerows(itertools.chain([first], remaining))


def read_header(path: Path) -> list[str]:
    """The CSV table's header."""
    with path.open(newline="", encoding="utf-8") as handle:
        return next(csv.reader(handle))


class Tables:
    """A run's tables: `columns` maps each file name (in folder `path`) to its header."""

    def __init__(self, path: Path, columns: Mapping[str, Sequence[str]]) -> None:
        self.path, self.columns = path, dict(columns)

    def start(self, rows: Mapping[str, Iterable[Row] | np.ndarray] = {}) -> dict[str, int]:
        """Write the headers and a new run's first rows; the tables' sizes."""
        start_tables(self.path, self.columns)
        return self.append({}, rows)

    def sizes(self) -> dict[str, int]:
        return {name: (self.path / name).stat().st_size for name in self.columns}

    def append(self, sizes: Mapping[str, int], rows: Mapping[str, Iterable[Row] | np.ndarray]) -> dict[str, int]:
        """Cut each table back to `sizes` (what a checkpoint recorded), append `rows` by table; the new sizes."""
        for name, size in sizes.items():
            with (self.path / name).open("r+b") as handle:
                handle.truncate(size)
        for name, these in rows.items():
            if name not in self.columns:
                raise KeyError(f"{name} is not one of the run's tables ({', '.join(self.columns)})")
            append_rows(self.path / name, these, self.columns[name] or None)
        return self.sizes()
