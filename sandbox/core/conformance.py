"""A kind's conformance case: the small run the conformance test plays for every registered kind.

`tests/test_conformance.py` runs every kind the registry finds (a third-party kind's too) through the same checks:
its example validates and its block is in `sandbox schema`; its dry run writes nothing; a small run finishes, and
the same run interrupted at a point drawn from the kind's name and resumed ends with identical tables;
`summary.json` follows the common schema; bad input exits 2. The small run is the kind's own, named by
`RunKind.conformance` (a `"module:attribute"` reference to a `ConformanceCase`), so a new kind brings its case
with it and the tests need no edit:

    CASE = ConformanceCase(
        scenario=lambda tmp: parse_kind("mykind", {"name": "t", "mykind": {"steps": 6}}),
        hooks=lambda tick: MyHooks(on_step=lambda _: tick()),
        tables=("steps.csv",),
    )

Scripted models (`models`) are for this test only: a case never stands for a simulation result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ConformanceCase"]


def _no_models() -> dict[str, Any] | None:
    return None


@dataclass(frozen=True)
class ConformanceCase:
    """A kind's small run for the conformance test."""

    scenario: Callable[[Path], Any]
    """`scenario(tmp) -> scenario`: a small scenario of the kind (`tmp`: a fresh folder it may write files to)."""
    hooks: Callable[[Callable[[], None]], Any]
    """`hooks(tick) -> hooks`: the kind's progress hooks, calling `tick()` at each step of progress (the test stops
    the run from a tick, as Ctrl-C would, and resumes it)."""
    tables: tuple[str, ...]
    """The files (relative to the run directory) that an interrupted and resumed run must write identically."""
    models: Callable[[], dict[str, Any] | None] = _no_models
    """`models() -> {role: chat model}`: scripted models for the run's roles (None: the scenario's own, e.g. the
    tiny model of a training run, or none at all)."""
    timing: tuple[str, ...] = ("seconds",)
    """Columns that vary from session to session (wall-clock time), left out of the comparison."""
