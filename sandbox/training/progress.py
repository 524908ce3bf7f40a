"""A training job on the command line: a Rich progress bar over its episodes, the last episode's figures beside it,
and Ctrl-C answered with how to resume. `sandbox train` and `sandbox distill` use it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.core.commands import progress_bar, with_progress
from sandbox.training.hooks import TrainHooks

__all__ = ["episodes_with_progress"]


def episodes_with_progress(
    job: Callable[[TrainHooks], Path], label: str, last: Callable[[dict[str, Any]], str]
) -> Path:
    """Run `job(hooks)` under a progress bar named `label` over its episodes; `last(row)`: the line shown on the
    latest episode's metrics row. Interrupted, it says how to resume from the last checkpoint."""
    progress = progress_bar(label, "episodes", last=True)
    task: Any = None

    def on_start(total: int, done: int) -> None:
        nonlocal task
        task = progress.add_task(label, total=total, completed=done, last="")

    return with_progress(
        lambda: job(
            TrainHooks(on_start=on_start, on_episode=lambda row: progress.update(task, advance=1, last=last(row)))
        ),
        progress,
        "interrupted; resume from the last checkpoint with `sandbox resume DIR`",
    )
