"""The command line's application object, its two consoles, its error exit and its progress bars, shared by every
command module.

`sandbox.cli.runs` defines the core commands on `app`; each run kind's command
modules (`sandbox.core.kinds.RunKind.commands`) register theirs on the same `app`.
They import this module, never `sandbox.cli.runs`, so imports run one way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from sandbox.base.errors import SandboxError

__all__ = [
    "RootSeed",
    "RunOut",
    "app",
    "check_figure_out",
    "ci_cell",
    "console",
    "fail",
    "model_option",
    "out_console",
    "progress_bar",
    "scenario_argument",
    "with_progress",
    "write_figure",
]

T = TypeVar("T")

RunOut = Annotated[Path | None, typer.Option("--out", help="Run directory (default runs/<name>-<time>).")]
"""A command's `--out`: the run directory it writes."""
RootSeed = Annotated[int | None, typer.Option("--seed", help="Root seed.")]
"""A command's `--seed`: the scenario's root seed instead of its own."""


def model_option(help: str) -> Any:
    """A command's repeatable `--model ROLE=SPEC` (`help`: the roles it takes, with an example)."""
    return typer.Option("--model", help=help)


def set_option() -> Any:
    """A command's repeatable `--set PATH=VALUE` (`sandbox.core.scenario_files.with_sets`)."""
    return typer.Option(
        "--set",
        help="PATH=VALUE: set a field of the file without editing it, e.g. population.agents=200 (a sweep's base: "
        "sweep.base.population.agents=200); VALUE is YAML. Repeatable.",
    )


app = typer.Typer(
    name="sandbox",
    help="Run societies of LLM agents that play games under fixed norms, and read the results.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# No emoji codes: a path, a name or a file's line prints as written (`a:x:b.yaml`, not a cross). Markup stays on for
# the messages' own styles: what a user or a model wrote is escaped (`rich.markup.escape`) or printed with markup off.
console = Console(stderr=True, emoji=False)  # progress, messages and errors
out_console = Console(emoji=False)  # results (tables), on stdout


def _version(value: bool) -> None:
    if value:
        from importlib import metadata

        try:
            version = metadata.version("norm-sandbox")
        except metadata.PackageNotFoundError:  # run from a checkout that is not installed
            from sandbox import __version__ as version
        out_console.print(f"norm-sandbox {version}", highlight=False)
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Run societies of LLM agents that play games under fixed norms, and read the results."""


def ci_cell(row: Any, metric: str) -> str:
    """A share and its 95% CI from a table row's `metric`, `metric_ci_low`, `metric_ci_high`: "42% (40%–45%)";
    "n/a" when the share is NaN, no interval when its ends are.

    >>> ci_cell({"x": 0.42, "x_ci_low": 0.4, "x_ci_high": 0.45}, "x"), ci_cell({"x": float("nan"), "x_ci_low": 0, "x_ci_high": 0}, "x")
    ('42% (40%–45%)', 'n/a')
    """
    mean, low, high = row[metric], row[f"{metric}_ci_low"], row[f"{metric}_ci_high"]
    if mean != mean:
        return "n/a"
    return f"{mean:.0%}" + ("" if low != low else f" ({low:.0%}–{high:.0%})")


def _scenario_file(value: Any) -> Any:
    """A scenario argument's value (one path or a list): each a file, or a shipped scenario's name made its path."""
    from sandbox.examples import scenario_path

    try:
        if isinstance(value, list):
            return [scenario_path(item) for item in value]
        return None if value is None else scenario_path(value)
    except SandboxError as error:
        raise typer.BadParameter(str(error)) from None


def scenario_argument(help: str) -> Any:
    """A Typer argument for a scenario file that also takes a shipped scenario's name (`sandbox run default`)."""
    return typer.Argument(help=f"{help} Or a shipped scenario's name (sandbox examples list).", callback=_scenario_file)


def fail(error: BaseException) -> typer.Exit:
    """Print `error` on stderr and return the exit to raise: its `exit_code` (2 for bad input), else 1."""
    console.print("[bold red]error:[/]", end=" ")
    console.print(str(error), highlight=False, markup=False, soft_wrap=True)
    return typer.Exit(getattr(error, "exit_code", 1))


def check_figure_out(out: Path) -> None:
    """`UsageError` unless `--out` names a PNG file in a folder that exists (checked before anything is read)."""
    from sandbox.base.errors import UsageError

    if out.suffix.lower() != ".png":
        raise UsageError(f"--out {out}: the figure is written as PNG; name a .png file")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: the folder {out.parent} does not exist")


def write_figure(figure: Any, table: Any, out: Path) -> None:
    """A matplotlib figure at `out` (PNG) and the DataFrame behind it beside it as CSV, each written whole (a
    failure leaves neither half-written)."""
    from sandbox.core.run_dir import atomic_write_text

    partial = out.with_name(f".{out.stem}.partial.png")
    try:
        figure.savefig(partial, dpi=120)
        atomic_write_text(out.with_suffix(".csv"), table.to_csv(index=False))
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)


class RateColumn(ProgressColumn):
    """A task's steps per second over Rich's recent window (`task.speed`), for tasks added with `rate=True`; for a
    bar of calls, how many wait for an endpoint's rate limit now (`sandbox.llm.rate.waiting`)."""

    def render(self, task: Task) -> Text:
        if not task.fields.get("rate"):
            return Text("")
        from sandbox.llm.rate import waiting

        held = waiting()
        text = Text("" if task.speed is None else f"{task.speed:,.0f}/s", style="progress.data.speed")
        if held:
            text.append(f" ({held:,} waiting for a rate limit)", style="yellow")
        return text


def progress_bar(
    label: str | None, unit: str = "", *, eta: bool = True, last: bool = False, rate: bool = False
) -> Progress:
    """A Rich progress bar on stderr: `label` (None: each task's description), the bar, done of total `unit`
    (a `{task.fields[...]}` template too), the steps per second of tasks added with `rate=True` (`rate`), elapsed
    time, the time remaining (`eta`), and a `last` field (add tasks with `last=""`; update it with a line on the
    latest step)."""
    columns: list[Any] = [
        TextColumn(f"[bold]{label}" if label else "[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
    ]
    if unit:
        columns.append(TextColumn(unit))
    if rate:
        columns.append(RateColumn())
    columns.append(TimeElapsedColumn())
    if eta:
        columns += [TextColumn("eta"), TimeRemainingColumn()]
    if last:
        columns.append(TextColumn("{task.fields[last]}"))
    return Progress(*columns, console=console)


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
