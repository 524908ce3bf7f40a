"""The command line's `sandbox sweep FILE`: a grid of runs on a local process pool or Ray, with a dry run.

Registered on `sandbox.core.commands.app` when `sandbox.cli.runs` imports this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from sandbox.base.errors import SandboxError
from sandbox.core.commands import (
    app,
    model_option,
    out_console,
    progress_bar,
    scenario_argument,
    set_option,
    with_progress,
)
from sandbox.core.commands import fail as _fail

__all__ = ["sweep", "sweep_with_progress"]


def sweep_with_progress(job: Any) -> Path:
    """Run a sweep under a Rich progress bar over runs, with the count of each outcome; its exit code."""
    from sandbox.llm.budget import BudgetExhaustedError

    progress = progress_bar("sweep", "runs", last=True)
    task: Any = None
    counts: dict[str, int] = {}

    def on_start(total: int, done: int) -> None:
        nonlocal task
        task = progress.add_task("sweep", total=total, completed=done, last=f"{done} finished before")

    def on_run(outcome: dict[str, Any]) -> None:
        counts[outcome["status"]] = counts.get(outcome["status"], 0) + 1
        progress.update(task, advance=1, last=" ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        if outcome.get("error"):
            progress.console.print(
                f"{outcome['id']}: {outcome['status']}: {outcome['error']}",
                soft_wrap=True,
                markup=False,
                highlight=False,
            )

    path = with_progress(lambda: job(on_start, on_run), progress, "interrupted; finish it with `sandbox resume DIR`")
    _status_table(path)
    if counts.get("stopped"):
        raise _fail(
            BudgetExhaustedError(
                f"{counts['stopped']} runs stopped on a budget. The sweep's: `sandbox resume {path} --max-calls N` (or "
                f"--max-tokens, --max-cost). A run's own (its scenario's budget:): `sandbox resume {path}/runs/RUN "
                f"--max-calls N`, then `sandbox resume {path}`. sweep.json says which runs stopped and why."
            )
        )
    if counts.get("failed"):
        raise typer.Exit(1)
    return path


def _changed(file: Path, models: list[str], sets: list[str]) -> dict[str, Any]:
    """The sweep file's data with `--set` and `--model` applied (`sandbox run` does the same)."""
    from sandbox.core.scenario_files import with_sets
    from sandbox.sweep.config import read_sweep, with_base_options

    scenario = read_sweep(file)
    if sets:
        scenario = with_sets(scenario, sets, f"{file} (--set)")
    if models:
        scenario = with_base_options(scenario, "<command line>", models=models)
    return scenario.model_dump(mode="json")


def _status_table(path: Path) -> None:
    from sandbox.base.files import read_json

    status = read_json(path / "sweep.json")
    table = Table(title=f"{status['name']}: {status['runs']} runs ({status['executor']})", title_justify="left")
    for column in ("status", "runs"):
        table.add_column(column, justify="left" if column == "status" else "right")
    for name, count in sorted(status["statuses"].items()):
        table.add_row(name, str(count))
    out_console.print(table)
    out_console.print(
        f"results in [bold]{escape(str(path))}[/] (sweep.csv: one row per run, its overrides and summary)"
    )


@app.command()
def sweep(
    file: Annotated[Path, scenario_argument("A sweep file (YAML with a sweep: block).")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Sweep directory (default runs/<name>-<time>); one holding this sweep goes on."),
    ] = None,
    executor: Annotated[
        str | None, typer.Option("--executor", help="local (a process pool) or ray; default: the file's.")
    ] = None,
    address: Annotated[
        str | None,
        typer.Option("--address", help="A Ray cluster's address (ray://HOST:10001 or auto); default: a local Ray."),
    ] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Runs at once; default: the file's.")] = None,
    model: Annotated[
        list[str] | None, model_option("ROLE=SPEC for every run, e.g. user=openai:gpt-4o-mini; ROLE may be all.")
    ] = None,
    sets: Annotated[list[str] | None, set_option()] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the runs' LLM calls and tokens per role, and call no model.")
    ] = False,
) -> None:
    """Run a grid of scenarios (a base scenario x overrides x seeds) on a local pool or Ray, into one directory."""
    from sandbox.base.errors import UsageError
    from sandbox.base.files import read_yaml
    from sandbox.core.dry_run import dry_run_table
    from sandbox.sweep.config import expand, parse_sweep
    from sandbox.sweep.run import start_sweep

    try:
        if executor not in (None, "local", "ray"):
            raise UsageError(f"--executor is local or ray, not {executor!r}")
        if address and executor not in (None, "ray"):
            raise UsageError("--address is a Ray cluster's: use it with --executor ray")
        data, folder = read_yaml(file), file.parent
        if model or sets:  # the base read in, then changed: its own paths were read relative to the file
            data, folder = _changed(file, model or [], sets or []), Path(".")
        if dry_run:  # inside the try: a dry run's failure is a clean exit too
            runs = expand(*parse_sweep(data, str(file), folder), str(file))
            dry_run_table(
                [(run.kind, run.scenario) for run in runs], f"A dry run of the sweep: {len(runs)} runs, no model called"
            )
            return
    except SandboxError as error:
        raise _fail(error) from None
    sweep_with_progress(
        lambda on_start, on_run: start_sweep(
            data,
            str(file),
            folder,
            out,
            executor=executor or ("ray" if address else None),
            workers=workers,
            address=address,
            on_start=on_start,
            on_run=on_run,
        )
    )
