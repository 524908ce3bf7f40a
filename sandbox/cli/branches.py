"""Branches of a run: `sandbox fork` (a run forked at a step, run on with changes), `sandbox replay` (a finished
run played again from its recorded answers, no model called, its tables checked) and `sandbox compare` (the
branches' headline figures side by side from the fork step on; runs of one kind none of which is a fork of another:
the kind's own comparison, `RunKind.cli_compare`, when it has one)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from sandbox.base.errors import SandboxError
from sandbox.core import kinds
from sandbox.core.commands import app, check_figure_out, ci_cell, out_console, write_figure
from sandbox.core.commands import fail as _fail

if TYPE_CHECKING:
    import pandas as pd


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
    table comes out identical: what the game decided exactly, measured floats within a stated tolerance (5
    significant digits; another machine's kernels differ in the last ones). Where one differs, the first row, its
    step, the column and both values. Exit 0 identical, 1 not."""
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


@app.command()
def compare(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="Finished run directories: a run and its forks, or any runs of kinds with steps (society, "
            "population). DIR,DIR,... is one branch run with several seeds (their runs pooled in its CI).",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="The figure (PNG); the table goes beside it as CSV.")] = Path(
        "compare.png"
    ),
    branches: Annotated[
        bool,
        typer.Option("--branches", help="Compare as branches even SCAI runs none of which is a fork of another."),
    ] = False,
) -> None:
    """Compare runs side by side.

    Branches (a run and its forks, forks of one run, runs of different kinds):
    each run's headline figure per step (a society's assistant offered share
    per epoch, a population's game figure per generation), its mean and 95% CI
    across the run's independent runs, printed from the step where the
    branches part; the figure draws every step and marks the fork step.

    SCAI runs none of which is a fork of another (without --branches): the
    paper's layout, one group, mixed societies, manners, assistant-assistant.
    """
    try:
        check_figure_out(out)
        groups = [_branch(path) for path in run_dirs]
        flat = [path for group in groups for path in group]
        found = {kind.name: kind for kind in map(kinds.kind_of_dir, flat)}
        if not branches and len(found) == 1 and len(flat) == len(groups):
            from sandbox.engine.branches import fork_step

            kind = next(iter(found.values()))
            if kind.cli_compare is not None and fork_step(flat) is None:
                kind.call("cli_compare", flat, out)
                return
        _compare_branches(groups, out)
    except SandboxError as error:
        raise _fail(error) from None


def _branch(path: Path) -> list[Path]:
    """A branch argument's run directories: the path itself, or DIR,DIR,... (a branch run with several seeds)."""
    if path.exists() or "," not in str(path):
        return [path]
    return [Path(part) for part in str(path).split(",") if part]


def _compare_branches(groups: list[list[Path]], out: Path) -> None:
    from sandbox.engine.branches import compare_branches, divergence_figure

    table = compare_branches(groups)  # reads and checks every directory before anything is written
    write_figure(divergence_figure(groups), table, out)
    step = table.attrs.get("fork_step")
    for figure, rows in table.groupby("figure", sort=False):
        out_console.print(_branch_table(str(figure), rows, step))
    out_console.print(f"figure in [bold]{escape(str(out))}[/], table in {escape(str(out.with_suffix('.csv')))}")


def _branch_table(figure: str, rows: pd.DataFrame, step: int | None) -> Table:
    """One figure's rows: a row per step, a column per branch, each cell the mean (95% CI across its runs)."""
    units = " / ".join(dict.fromkeys(rows["unit"]))
    since = "" if step is None else f", from the fork at {units} {step}"
    table = Table(title=f"{figure} per {units}: mean (95% CI across runs){since}", title_justify="left")
    table.add_column(units)
    labels = list(dict.fromkeys(rows["label"]))
    for label in labels:
        table.add_column(label, justify="right")
    ends = rows[["mean", "ci_low", "ci_high"]].astype(float)
    shares = bool(((ends >= 0) & (ends <= 1) | ends.isna()).all().all())
    for at, in_step in rows.groupby("step", sort=True):
        by_label = {row["label"]: row for _, row in in_step.iterrows()}
        table.add_row(str(at), *(_cell(by_label.get(label), shares) for label in labels))
    return table


def _cell(row: Any, shares: bool) -> str:
    if row is None:
        return "-"
    if shares:
        return ci_cell({"mean": row["mean"], "mean_ci_low": row["ci_low"], "mean_ci_high": row["ci_high"]}, "mean")
    mean, low, high = float(row["mean"]), float(row["ci_low"]), float(row["ci_high"])
    if mean != mean:
        return "n/a"
    return f"{mean:.3g}" + ("" if low != low else f" ({low:.3g}–{high:.3g})")
