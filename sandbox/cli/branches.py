"""Branches of a run: `sandbox fork` (a run forked at a step, run on with changes) and `sandbox replay` (a finished
run played again from its recorded answers, no model called, its tables checked)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from sandbox.base.errors import SandboxError
from sandbox.core import kinds
from sandbox.core.commands import app
from sandbox.core.commands import fail as _fail


@app.command()
def fork(
    run_dir: Annotated[Path, typer.Argument(help="A run directory of a kind with steps (society, population).")],
    at: Annotated[
        int, typer.Option("--at", help="The step to fork at: an epoch of a society, a generation of a population.")
    ],
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="FIELD=VALUE: a scenario field by its dotted path (population.revision.beta=2, epochs=8), or a state "
            "edit the kind names (state.policy=TEXT, state.agents.3.committed=B, state.stock=40). Repeatable.",
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="The fork's directory; default RUN-fork<STEP>-<time> beside it.")
    ] = None,
) -> None:
    """Fork a run at a step: its steps before STEP are the run's own (copied), the rest run again with the changes,
    each call the run made served from its response cache (a fork without a change makes no model call)."""
    from sandbox.core.run_dir import hold
    from sandbox.core.steps import parse_changes
    from sandbox.engine.fork import make_fork

    with ExitStack() as held:
        try:
            path = make_fork(run_dir, at, parse_changes(set_ or []), out=out)
            held.enter_context(hold(path, create=False))
            kinds.kind_of_dir(path).call("cli_resume", path)
        except SandboxError as error:
            raise _fail(error) from None


@app.command()
def replay(
    run_dir: Annotated[
        Path, typer.Argument(help="A finished run directory of a kind with steps (society, population).")
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Keep the replay in this directory (default: a temporary one, kept only when it differs)."
        ),
    ] = None,
) -> None:
    """Play a finished run again offline, every answer from its recording (no model called), and say whether every
    table comes out identical; where one differs, the first row and its step. Exit 0 identical, 1 not."""
    from rich.console import Console

    from sandbox.engine.replay import replay_run

    try:
        with Console(stderr=True).status(f"replaying {run_dir} offline"):
            report = replay_run(run_dir, out=out)
    except SandboxError as error:
        raise _fail(error) from None
    for line in report.lines():
        typer.echo(line)
    if report.replay is not None:
        typer.echo(f"the replay is in {report.replay}")
    if not report.identical:
        raise typer.Exit(1)
