"""A sweep page's chart (a `SweepChart` section): the settings of a sweep (`seeds.csv`) as the browser draws them
(`static/sweep.js`): each swept parameter's values, and each metric's mean and 95% interval over seeds by setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sandbox.viewer.reading import inside, plain, read_table
from sandbox.viewer.sections import SweepChart

__all__ = ["sweep_json"]


def _same(a: pd.Series, b: pd.Series) -> bool:
    """Whether two columns hold the same numbers."""
    x, y = pd.to_numeric(a, errors="coerce"), pd.to_numeric(b, errors="coerce")
    return bool(x.notna().all() and y.notna().all() and np.allclose(x.to_numpy(float), y.to_numpy(float)))


def sweep_json(section: SweepChart, path: Path) -> dict[str, Any] | None:
    """A sweep's settings (`seeds.csv`): each parameter's values, and each metric's mean and interval by setting
    (a metric that never varies, or a parameter not in the table, is left out)."""
    file = inside(path, section.file)
    if file is None or not file.is_file():
        return None
    frame = read_table(file)
    axes = [axis for axis in section.axes if axis and all(p in frame.columns for p in axis)]
    parameters = [axis[0] for axis in axes]
    if frame.empty or not parameters:
        return None
    metrics = {}
    for column in frame.columns:
        if not column.endswith(".mean") or not pd.api.types.is_numeric_dtype(frame[column]):
            continue
        name = column[: -len(".mean")]
        if frame[column].nunique(dropna=True) < 2:
            continue  # the same in every setting (the agents of a grid that does not vary them): nothing to see
        if any(_same(frame[column], frame[p]) for p in parameters):
            continue  # a parameter read back (summary.agents of a grid over population.agents)
        low, high = frame.get(f"{name}.ci_low"), frame.get(f"{name}.ci_high")
        metrics[name.removeprefix("summary.")] = {
            "mean": [plain(v) for v in frame[column]],
            "low": None if low is None else [plain(v) for v in low],
            "high": None if high is None else [plain(v) for v in high],
        }
    if not metrics:
        return None
    return {
        "type": "sweep",
        "title": section.title,
        "file": section.file,
        "parameters": parameters,
        "names": [" with ".join(axis) for axis in axes],  # a zip group's fields, named together
        "values": {p: [plain(v) for v in frame[p]] for p in parameters},
        "seeds": [plain(v) for v in frame["seeds"]] if "seeds" in frame.columns else None,
        "metrics": metrics,
    }
