"""Sweeps: a grid of runs (a base scenario x overrides x seeds) on a local process pool or Ray, with budgets.

from sandbox.sweep import load_sweep, expand, start_sweep
"""

from __future__ import annotations

from sandbox.sweep.config import SweepBlock, SweepFile, SweepRun, expand, load_sweep, parse_sweep
from sandbox.sweep.run import is_sweep, run_sweep, start_sweep, sweep_table

__all__ = [
    "SweepBlock",
    "SweepFile",
    "SweepRun",
    "expand",
    "is_sweep",
    "load_sweep",
    "parse_sweep",
    "run_sweep",
    "start_sweep",
    "sweep_table",
]
