"""A sweep's page in `sandbox view` and `sandbox report`: the grid, each cell linked to its run's page, and the
seeds' aggregates."""

from __future__ import annotations

from pathlib import Path

from sandbox.viewer.sections import Cells, Section, Table


def view(path: Path) -> list[Section]:
    return [
        Cells("sweep.csv", column="run", under="runs", title="Grid (each cell links to its run)"),
        Table("seeds.csv", title="Over seeds (mean and 95% CI per grid point)"),
    ]
