"""The population kind's command-line helpers: a progress bar over generations and the result's table."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from sandbox.base.files import read_csv, read_json

if TYPE_CHECKING:
    import pandas as pd

    from sandbox.llm.record import CallRecord

__all__ = ["generations_table", "with_progress"]

console = Console(emoji=False)  # a path prints as written (`a:x:b`, no emoji); markup in it is escaped


def with_progress(
    total: int,
    done: int,
    run: Callable[[Callable[[int], None], Callable[[CallRecord | None], None] | None], Path],
    calls: int = 0,
) -> Path:
    """Call `run(hook, on_call)` under a bar that `hook(generation)` advances, as every kind's CLI runs: a
    `SandboxError` (bad input, a budget reached, a failed run) exits with its code, printed; Ctrl-C says how to
    resume and exits 130. With `calls` (the LLM calls expected, `sandbox run --dry-run`'s count), a second bar
    counts the calls as they finish (`on_call`), with calls per second and the time left (None: no such bar)."""
    from sandbox.core.commands import progress_bar
    from sandbox.core.commands import with_progress as guarded

    bar = progress_bar(None, rate=bool(calls))
    task = bar.add_task("generations", total=total, completed=done)
    counter = bar.add_task("LLM calls", total=calls, rate=True) if calls else None
    on_call = None if counter is None else lambda _: bar.advance(counter)
    return guarded(
        lambda: run(lambda _: bar.advance(task), on_call),
        bar,
        "interrupted: the finished generations are kept; `sandbox resume RUN_DIR` plays the rest",
    )


def read_result(path: Path | str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A finished run's generations.csv and summary.json."""
    path = Path(path)
    return read_csv(path / "generations.csv"), read_json(path / "summary.json")


def generations_table(path: Path | str) -> None:
    """A finished run's table on the command line, as its game prints it (its plug-in's `print_table`)."""
    from sandbox.core.scenario_files import load_run_scenario
    from sandbox.population.registry import plugin_for

    plugin_for(load_run_scenario(path).population.game).print_table(Path(path))
