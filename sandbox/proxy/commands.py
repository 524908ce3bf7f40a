"""The command line's reward-design command: `sandbox label`.

It is registered on `sandbox.core.commands.app` when `sandbox.cli.runs` imports this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from sandbox.base.errors import SandboxError
from sandbox.base.files import read_json
from sandbox.core.commands import (
    RootSeed,
    RunOut,
    app,
    model_option,
    out_console,
    progress_bar,
    scenario_argument,
    with_progress,
)
from sandbox.core.commands import fail as _fail

__all__ = ["label", "label_table", "label_with_progress"]


def label_with_progress(job: Any) -> Path:
    """Run a labeling job under a Rich progress bar over the judge's verdicts."""
    from sandbox.proxy.label_run import LabelHooks

    progress = progress_bar(None, "{task.fields[what]}")
    task: Any = None

    def on_start(total: int, done: int) -> None:
        nonlocal task
        task = progress.add_task("labeling", total=total, completed=done, what="verdicts")

    def on_phase(what: str, total: int) -> None:  # negotiators training on the judge's verdicts
        nonlocal task
        task = progress.add_task("training", total=total, what=what)

    return with_progress(
        lambda: job(LabelHooks(on_start=on_start, on_item=lambda: progress.advance(task), on_phase=on_phase)),
        progress,
        "interrupted; the verdicts so far are kept: `sandbox resume DIR` asks the rest",
    )


def label_table(path: Path) -> None:
    """Print a labeling run's accuracy table and its cost."""
    summary = read_json(path / "summary.json")
    table = Table(
        title=f"{summary['scenario']}: labeling accuracy on {summary['items']} items "
        f"({summary['objective']['name']}, intent: {summary['intent']})",
        title_justify="left",
    )
    for column in ("condition", "accuracy", "95% CI", "unparsed", "AUC"):
        table.add_column(column, justify="left" if column == "condition" else "right")
    for condition, row in summary["accuracy"].items():
        ci = "" if row.get("ci_low") is None else f"{row['ci_low']:.2f}-{row['ci_high']:.2f}"
        auc = row.get("auc")
        table.add_row(
            condition, f"{row['accuracy']:.2f}", ci, str(row.get("unparsed", 0)), "" if auc is None else f"{auc:.2f}"
        )
    out_console.print(table)
    rate = summary["judge_cache_hit_rate"]
    out_console.print(
        f"judge ({summary['judge']}): {summary['judge_calls']} calls, "
        f"{summary['judge_cache_hits']} cache hits{'' if rate is None else f' ({rate:.0%})'}; "
        f"graded rewards from {summary['graded_sources'] or 'n/a'}; {summary['seconds']:.0f} s"
    )
    if summary.get("calibration"):
        fitted = ", ".join(
            f"{k} {v['threshold']:.3f} (in-sample {v['examples_fit_accuracy']:.0%} of {v['examples']})"
            if v["threshold"] is not None
            else f"{k} not fitted ({v['scored_examples']} examples with P(yes), {v['example_classes']} "
            "class(es)): its answers are its labels"
            for k, v in summary["calibration"].items()
        )
        out_console.print(f"labels are P(yes) at or above a threshold fitted on the user's examples: {fitted}")
    if summary.get("rl_dialogues"):
        agents = ", ".join(
            f"{k} {v['mean']:.2f}" for k, v in summary["agent_accuracy"].items() if v["mean"] is not None
        )
        out_console.print(
            f"negotiators' agent accuracy on the true style: {agents}; the judge rated "
            f"{summary['rl_judge_calls']} distinct dialogues of {summary['rl_dialogues']}"
        )
    out_console.print(f"results in [bold]{escape(str(path))}[/]: labels.csv, accuracy.csv, agents.csv, accuracy.png")


@app.command()
def label(
    file: Annotated[Path, scenario_argument("A labeling scenario (YAML with a proxy: block).")],
    out: RunOut = None,
    seed: RootSeed = None,
    items: Annotated[int | None, typer.Option("--items", help="Test items (proxy.test_items).")] = None,
    model: Annotated[list[str] | None, model_option("ROLE=SPEC, e.g. judge=openai:gpt-4o-mini. Repeatable.")] = None,
) -> None:
    """Label a test set with an LLM judge given the user's examples or description; accuracy against the truth."""
    from sandbox.core.scenario_files import load_scenario
    from sandbox.proxy.label_run import label_scenario
    from sandbox.proxy.scenario import apply_proxy_overrides

    try:
        scenario = apply_proxy_overrides(load_scenario(file, kind="proxy"), seed=seed, models=model, test_items=items)
    except SandboxError as error:
        raise _fail(error) from None
    label_table(label_with_progress(lambda hooks: label_scenario(scenario, out, hooks=hooks)))
