"""Reading a run's files into what the page sends: a table (CSV or JSON lines), a cell as JSON, a path kept inside
the run directory. Shared by the run page (`sandbox.viewer.page`) and its sections' readers (`sandbox.viewer.sweep`,
`sandbox.viewer.network`)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["inside", "plain", "read_table"]


def read_table(path: Path) -> pd.DataFrame:
    if path.suffix == ".jsonl":
        return pd.read_json(path, lines=True)
    return pd.read_csv(path)


def plain(value: Any) -> Any:
    """A cell as JSON: NaN and infinities as None, numpy scalars as Python's."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict | list):
        return json.dumps(value, default=str)
    return value


def inside(root: Path, relative: str) -> Path | None:
    """`root / relative` when it stays inside `root` (symlinks resolved), else None."""
    target = (root / relative).resolve()
    return target if target.is_relative_to(root.resolve()) else None
