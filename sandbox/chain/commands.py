"""The command line's chain command: `sandbox chain FILE` (resumed by `sandbox resume DIR` or the same command).

Registered on `sandbox.core.commands.app` when `sandbox.cli.runs` imports this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from sandbox.base.errors import SandboxError
from sandbox.base.files import read_csv, read_json
from sandbox.core.commands import app, ci_cell, out_console, progress_bar, scenario_argument, with_progress
from sandbox.core.commands import fail as _fail

__all__ = ["chain", "chain_with_progress", "print_chain"]


def chain_with_progress(job: Any) -> Path:
    """Run a chain under a Rich progress bar: one task per stage directory, advanced by its episodes."""
    from sandbox.chain.run import ChainHooks

    progress = progress_bar(None, "steps", eta=False, last=True)
    current: dict[str, Any] = {}

    def on_stage(stage: str, directory: str, state: str) -> None:
        if state in ("start", "resume", "skip"):
            current["task"] = progress.add_task(f"{stage} {directory}".strip(), total=None, last=state)
        if state in ("done", "skip"):
            progress.update(current["task"], total=1, completed=1, last="done" if state == "done" else "already done")

    hooks = ChainHooks(on_stage=on_stage, on_step=lambda: progress.advance(current["task"]))
    return with_progress(
        lambda: job(hooks), progress, "interrupted; go on from the unfinished stage with `sandbox resume DIR`"
    )


def print_chain(path: Path) -> None:
    """The comparison table, the policy and the stages' wall times of a finished chain."""
    from rich.table import Table

    summary = read_json(path / "summary.json")
    frame = read_csv(path / "comparison.csv")
    out_console.print(
        f"[bold]{summary['scenario']}[/]: the policy learned in words: {escape(repr(summary['policy']))}",
        soft_wrap=True,
    )
    judge = summary["judge"]
    if "accuracy_vs_truth" in judge:
        out_console.print(
            f"the {judge['mode']} judge against the true norm ({summary['truth']}): accuracy "
            f"{judge['accuracy_vs_truth']:.0%} on {judge['judged_moves_with_truth']} moves, "
            f"{judge['calls']} calls"
        )
    table = Table(
        "subject",
        "offered share (95% CI)",
        "acceptance (95% CI)",
        "illegal",
        "n",
        title="in the society, without the policy for the student and the base",
    )

    for _, row in frame.iterrows():
        table.add_row(
            row["subject"],
            ci_cell(row, "offered_share"),
            ci_cell(row, "acceptance"),
            f"{row['illegal']:.0%}",
            f"{row['n']} {row['replicates']}",
        )
    out_console.print(table)
    seconds = ", ".join(f"{stage} {s:.0f} s" for stage, s in summary["stage_seconds"].items() if s is not None)
    out_console.print(f"wall time per stage: {seconds}")
    out_console.print(f"results in [bold]{escape(str(path))}[/] (comparison.csv, comparison.png, chain.json)")


@app.command()
def chain(
    file: Annotated[Path, scenario_argument("A chain scenario (YAML with a chain: block).")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="The chain's directory (default runs/<name>-<time>); one holding this chain goes on where it stopped.",
        ),
    ] = None,
    rerun_from: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="Rerun from this stage (society, judge, distill, evaluate, compare) with the file's settings.",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Estimate every stage's LLM calls and training; call no model.")
    ] = False,
) -> None:
    """Run the chain: a society learns a norm, a judge rewards it, students learn it, and go back into the society."""
    from sandbox.chain.run import run_chain
    from sandbox.core.scenario_files import load_scenario

    try:
        scenario = load_scenario(file, kind="chain")
        if dry_run:
            _dry_run(scenario, str(file))
            return
    except SandboxError as error:
        raise _fail(error) from None
    path = chain_with_progress(
        lambda hooks: run_chain(scenario, out, rerun_from=rerun_from, hooks=hooks, source=str(file))
    )
    print_chain(path)


def _dry_run(scenario: Any, source: str) -> None:
    from sandbox.chain.stages import dry_run_stages
    from sandbox.core.dry_run import dry_run_table

    dry_run_table(dry_run_stages(scenario), f"{scenario.name}: a dry run of the chain's stages, no model called")
    block = scenario.chain
    moves = block.training.episodes * block.training.parallel * block.training.rounds
    out_console.print(
        f"distill: {block.seeds} students x {block.training.episodes} episodes of "
        f"{block.training.parallel * block.training.rounds} moves ({moves} moves each), rewarded from "
        f"the judge's table: no LLM call",
        soft_wrap=True,
    )
