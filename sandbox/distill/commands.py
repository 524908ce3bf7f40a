"""The command line's distillation command: `sandbox distill FILE` (resumed by `sandbox resume DIR`).

Registered on `sandbox.core.commands.app` when `sandbox.cli.runs` imports this module.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from sandbox.base.errors import SandboxError, ScenarioError
from sandbox.base.files import read_csv, read_json
from sandbox.core.commands import (
    RootSeed,
    RunOut,
    app,
    ci_cell,
    model_option,
    out_console,
    progress_bar,
    scenario_argument,
    with_progress,
)
from sandbox.core.commands import fail as _fail

__all__ = ["distill", "distill_table", "distill_with_progress", "evaluate_with_progress", "evaluation_table"]

_ROLES = ("student", "judge", "assistant", "user")


def distill_with_progress(job: Any) -> Path:
    """Run a distillation under a Rich progress bar over episodes, with the last episode's offered share."""
    from sandbox.training.progress import episodes_with_progress

    def last(row: dict[str, Any]) -> str:
        share = row.get("offered_share")
        return (
            f"offered {share:.0%} " if share == share else ""
        ) + f"illegal {row['illegal']:.0%} reward {row['reward']:+.2f}"

    return episodes_with_progress(job, "distilling", last)


def evaluate_with_progress(path: Path, trials: int | None = None) -> Path:
    """Play the evaluation without the policy under a Rich progress bar over moves; print its table."""
    from sandbox.distill.evaluate import RESULTS, evaluate_distill
    from sandbox.distill.run import DistillHooks

    progress = progress_bar("evaluating", "moves", eta=False)
    task: Any = None

    def on_start(total: int, done: int) -> None:
        nonlocal task
        task = progress.add_task("evaluating", total=total, completed=done)

    with_progress(
        lambda: evaluate_distill(
            path, trials=trials, hooks=DistillHooks(on_start=on_start, on_episode=lambda _: progress.advance(task))
        ),
        progress,
        "interrupted; play it again from the cache with `sandbox evaluate DIR`",
    )
    evaluation_table(path / RESULTS)
    return path


def evaluation_table(path: Path) -> None:
    """Print `distillation.csv`: offered share and acceptance per subject and condition, with 95% CIs."""
    from rich.table import Table

    frame = read_csv(path)
    table = Table(
        "condition",
        "subject",
        "offered share (95% CI)",
        "acceptance (95% CI)",
        "illegal",
        title="without the policy: users, policy-prompted assistant, distilled student, base model",
    )

    for _, row in frame.iterrows():
        table.add_row(
            row["condition"],
            row["subject"],
            ci_cell(row, "offered_share"),
            ci_cell(row, "acceptance"),
            f"{row['illegal']:.0%}",
        )
    out_console.print(table)
    out_console.print(
        f"tables in [bold]{escape(str(path.parent))}[/] (distillation.csv, evaluation.csv, distillation.png)"
    )


def distill_table(path: Path) -> None:
    """Print a finished distillation's headline figures."""

    summary = read_json(path / "summary.json")
    final, judge = summary["final"], summary["judge"]
    share = final["offered_share"]
    out_console.print(
        f"[bold]{summary['scenario']}[/]: {summary['algorithm']} on the {summary['reward']} reward "
        f"(judge: {summary.get('judge_mode', 'verdict')}), "
        f"{summary['episodes']} episodes of {summary['moves_per_episode']} moves ({summary['final_from']})"
    )
    out_console.print(
        f"student without a policy: offered share {'n/a' if share is None else f'{share:.1%}'}, "
        f"illegal {final['illegal']:.1%}"
    )
    if "judge_target_share" in judge:
        out_console.print(f"the judge rewards an offered share of {judge['judge_target_share']:.0%} most")
    if "accuracy_vs_truth" in judge:
        out_console.print(
            f"judge against the true norm ({summary['truth']}): accuracy {judge['accuracy_vs_truth']:.1%} "
            f"on {judge['judged_moves_with_truth']} distinct moves"
        )
    out_console.print(
        f"judge: {judge['table_entries']} verdicts ({judge['calls']} calls, {judge['cache_hits']} cache hits) "
        f"for {judge['moves_played']} moves played"
    )
    out_console.print(
        f"results in [bold]{escape(str(path))}[/] (adapter in {escape(str(path / summary['adapter']))}, "
        "judge_table.csv)"
    )
    out_console.print(
        f"as a society's assistant: --model assistant={escape(summary['assistant_spec'])}", soft_wrap=True
    )


@app.command()
def distill(
    file: Annotated[Path, scenario_argument("A distillation scenario (YAML with a distill: block).")],
    out: RunOut = None,
    source: Annotated[Path | None, typer.Option("--source", help="A SCAI run directory: distill.source.run.")] = None,
    reward: Annotated[
        str | None,
        typer.Option("--reward", help="judge, or a control: truth, no_principle, flipped (distill.reward)."),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option("--judge", help="verdict (the judge says yes or no) or act (it plays under the principle)."),
    ] = None,
    episodes: Annotated[int | None, typer.Option("--episodes", help="Training episodes.")] = None,
    seed: RootSeed = None,
    model: Annotated[
        list[str] | None, model_option("ROLE=SPEC for student, judge, assistant or user, e.g. judge=openai:gpt-4o.")
    ] = None,
    evaluate: Annotated[
        bool, typer.Option("--evaluate/--no-evaluate", help="Play the evaluation without the policy after training.")
    ] = True,
    trials: Annotated[int | None, typer.Option("--trials", help="Evaluation moves per condition and subject.")] = None,
) -> None:
    """Distil a society's learned norm into a student's weights: the judge's verdicts as a PPO/GRPO/RLOO reward."""
    from sandbox.core.scenario_files import load_scenario, parse_kind
    from sandbox.distill.run import distill_scenario

    try:
        original = load_scenario(file, kind="distill").model_dump(mode="json", exclude_none=True)
        data = copy.deepcopy(original)
        if source is not None:
            data["distill"]["source"] = {
                **{k: v for k, v in data["distill"]["source"].items() if k != "text"},
                "run": str(source),
            }
        if reward is not None:
            data["distill"]["reward"] = reward
        if judge is not None:
            data["distill"]["judge"] = judge
        if trials is not None:
            data["distill"]["trials"] = trials
        if episodes is not None:
            data["training"]["episodes"] = episodes
        if seed is not None:
            data["seed"] = seed
        for item in model or []:
            role, sep, spec = item.partition("=")
            if not sep or role not in _ROLES:
                raise ScenarioError(
                    "<command line>", [("--model", f"{item!r} is not ROLE=SPEC with ROLE in {', '.join(_ROLES)}")]
                )
            data["models"][role] = spec
        scenario = parse_kind("distill", data, str(file) if data == original else "<command line>")
    except SandboxError as error:
        raise _fail(error) from None
    path = distill_with_progress(
        lambda hooks: distill_scenario(scenario, out, source=str(file), hooks=hooks, evaluate=False)
    )
    distill_table(path)
    if evaluate:
        evaluate_with_progress(path)
