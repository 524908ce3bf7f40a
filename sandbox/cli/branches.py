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
