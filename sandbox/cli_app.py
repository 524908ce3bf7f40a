"""The command line's application object, its two consoles and its error exit, shared by every command module.

`sandbox.cli` defines the core commands on `app` and imports the command
modules of the method packages (`sandbox.moral.commands`, ...), which
register theirs on the same `app`; they import this module, never
`sandbox.cli`, so imports run one way.
"""

from __future__ import annotations

import typer
from rich.console import Console

__all__ = ["app", "console", "fail", "out_console"]

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
