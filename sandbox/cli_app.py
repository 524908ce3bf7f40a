"""The command line's application object, its two consoles, its error exit and its progress bars, shared by every
command module.

`sandbox.cli` defines the core commands on `app`; each run kind's command
modules (`sandbox.kinds.RunKind.commands`) register theirs on the same `app`.
They import this module, never `sandbox.cli`, so imports run one way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from sandbox.errors import SandboxError

__all__ = ["app", "console", "fail", "out_console", "progress_bar", "with_progress"]

T = TypeVar("T")

app = typer.Typer(
    name="sandbox",
    help="Run societies of LLM agents that play games under fixed norms, and read the results.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(stderr=True)  # progress, messages and errors
out_console = Console()  # results (tables), on stdout


def fail(error: BaseException) -> typer.Exit:
    """Print `error` on stderr and return the exit to raise: its `exit_code` (2 for bad input), else 1."""
    console.print("[bold red]error:[/]", end=" ")
    console.print(str(error), highlight=False, markup=False, soft_wrap=True)
    return typer.Exit(getattr(error, "exit_code", 1))


def progress_bar(label: str, unit: str) -> Progress:
    """A Rich progress bar on stderr: `label`, the bar, done of total `unit`, elapsed, eta, and a `last` field
    (add tasks with `last=""`; update it with a line on the latest step)."""
    return Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TextColumn(unit),
                    TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.fields[last]}"),
                    console=console)  # fmt: skip


def with_progress(job: Callable[[], T], progress: Progress, interrupted: str) -> T:
    """Run `job` with `progress` shown: Ctrl-C prints `interrupted` (how to resume) and exits 130; a
    `SandboxError` exits with its code, printed."""
    try:
        with progress:
            return job()
    except KeyboardInterrupt:
        console.print(interrupted, soft_wrap=True)
        raise typer.Exit(130) from None
    except SandboxError as error:
        raise fail(error) from None
