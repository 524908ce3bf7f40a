"""A sweep's page in `sandbox view` and `sandbox report`: its results against the swept parameters (a chosen metric
with 95% CIs over seeds, a heat map over two), the grid, each cell linked to its run's page, and the seeds'
aggregates."""

from __future__ import annotations

from pathlib import Path

from sandbox.viewer.sections import Cells, Section, SweepChart, Table


def _axes(path: Path) -> tuple[tuple[str, ...], ...]:
    """The axes of the sweep in `path` (each grid field, each zip group's fields), read from its `sweep.yaml`."""
    from sandbox.base.files import read_yaml
    from sandbox.sweep.config import SweepBlock

    try:
        block = read_yaml(path / "sweep.yaml")["sweep"]
        return tuple(SweepBlock.model_validate({**block, "base": {}}).axes)
    except Exception:  # a sweep file this version does not read: no chart, the tables still show
        return ()


def view(path: Path) -> list[Section]:
    return [
        SweepChart("seeds.csv", axes=_axes(path)),
        Cells("sweep.csv", column="run", under="runs", title="Grid (each cell links to its run)"),
        Table("seeds.csv", title="Over seeds (mean and 95% CI per grid point)"),
    ]
