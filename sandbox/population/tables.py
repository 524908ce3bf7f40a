"""The tables of a population run and the checkpoint that makes them resumable.

A generation appends its rows to each table, then `save_state` records the
tables' sizes in `state.json` with what the next generation starts from.
A run killed between the two leaves rows that `cut_tables` removes on
resume, so the resumed run writes them again and the tables end as an
uninterrupted run's.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sandbox.files import read_json
from sandbox.run_dir import atomic_write_text

__all__ = ["STATE", "append_rows", "load_state", "save_state", "start_tables"]

STATE = "state.json"


def start_tables(path: Path, columns: Mapping[str, Sequence[str]]) -> None:
    """Write each table's header row (a new run)."""
    for name, header in columns.items():
        with (path / name).open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerow(header)


def append_rows(path: Path, rows: Iterable[Sequence[Any]]) -> None:
    with path.open("a", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


def load_state(path: Path) -> dict[str, Any] | None:
    """The last checkpoint, with every table cut back to its size then (None for a run that saved none)."""
    if not (path / STATE).is_file():
        return None
    state = read_json(path / STATE)
    for name, size in state["bytes"].items():
        with (path / name).open("r+b") as handle:
            handle.truncate(size)
    return state


def save_state(path: Path, tables: Iterable[str], **payload: Any) -> None:
    """Record the tables' sizes and `payload` (what the next generation starts from) in one atomic write."""
    sizes = {name: (path / name).stat().st_size for name in tables}
    atomic_write_text(path / STATE, json.dumps({**payload, "bytes": sizes}))
