"""The command line: run, resume, evaluate, compare (validate, schema, models, bench: `sandbox.cli_tools`;
train, evaluate-moral: `sandbox.moral.commands`; label: `sandbox.proxy.commands`; sweep: `sandbox.sweep.commands`).

Exit codes: 0 success; 2 invalid input (nothing written, no run directory
created), or a run directory another process holds; 1 runtime failure (the
run directory stays resumable); 3 a budget's cap reached (the run stopped
cleanly; resume it with a higher cap); 130 interrupted (resumable too).
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from sandbox.cli_app import app, console, out_console
from sandbox.cli_app import fail as _fail
from sandbox.errors import SandboxError, UsageError


class _ProgressDisplay:
    """A Rich progress bar over episodes, with counts and ETA."""

    def __init__(self) -> None:
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("episodes"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.task: Any = None
        self.per_epoch = 0

    def hooks(self) -> Any:
        from sandbox.runner import ProgressHooks

        return ProgressHooks(on_start=self.on_start, on_epoch_start=self.on_epoch_start, on_episode=self.on_episode,
                             on_policy=self.on_policy)  # fmt: skip

    def on_policy(self, record: dict[str, Any]) -> None:
        flag = "" if record["legal"] else " [red](illegal revision: previous policy kept)[/]"
        self.progress.console.print(
            f"run {record['run']} epoch {record['epoch']} policy v{record['version']}{flag}: "
            f"[italic]{escape(record['policy'])}[/]",
            soft_wrap=True,
        )

    def on_start(self, total: int, done: int, per_epoch: int) -> None:
        self.per_epoch = per_epoch
        self.task = self.progress.add_task("playing", total=total, completed=done)

    def on_epoch_start(self, run: int, epoch: int, episodes: int) -> None:
        # The total was an estimate (a maximal matching on a sparse network can be smaller).
        if self.task is not None and episodes != self.per_epoch:
            total = self.progress.tasks[self.task].total or 0
            self.progress.update(self.task, total=total + episodes - self.per_epoch)

    def on_episode(self, record: dict[str, Any]) -> None:
        if self.task is not None:
            self.progress.advance(self.task)


def _summary_table(path: Path) -> None:
    from sandbox.api import RunResult

    result = RunResult.load(path)
    summary = result.summary
    table = Table(
        title=f"{summary['scenario']}: offered share by the proposer's norm; acceptance as responder",
        title_justify="left",
    )
    for column in ("norm", "proposals", "offered share", "95% CI", "CI over", "accepts"):
        table.add_column(column, justify="left" if column == "norm" else "right")
    acceptance = summary.get("acceptance_rate_by_responder_norm", {})
    for norm, row in summary["offered_share_by_norm"].items():
        ci = "n/a" if row["ci_low"] is None else f"{row['ci_low']:.1%} – {row['ci_high']:.1%}"
        accepts = f"{acceptance[norm]:.0%}" if norm in acceptance else "n/a"
        table.add_row(norm, str(row["proposals"]), f"{row['mean']:.1%}", ci, row["ci_over"], accepts)
    out_console.print(table)
    rate = summary["illegal_answer_rate"]
    acceptance = summary["acceptance_rate"]
    out_console.print(
        f"episodes {summary['episodes']}, illegal answers "
        f"{'n/a' if rate is None else f'{rate:.1%}'}, acceptance "
        f"{'n/a' if acceptance is None else f'{acceptance:.1%}'}"
    )
    usage = Table(title="LLM calls by role", title_justify="left")
    for column in ("role", "calls", "cache hits", "input tokens", "reused", "output tokens"):
        usage.add_column(column, justify="left" if column == "role" else "right")
    for role, u in summary["llm_usage"].items():
        reused = u.get("prompt_cached_tokens", 0)  # prompt tokens the backend did not compute again
        share = f" ({reused / u['input_tokens']:.0%})" if u["input_tokens"] else ""
        usage.add_row(role, str(u["calls"]), str(u["cache_hits"]), str(u["input_tokens"]), f"{reused}{share}",
                      str(u["output_tokens"]))  # fmt: skip
    out_console.print(usage)
    if "scai" in summary:
        from sandbox.scai.commands import scai_table

        scai_table(summary["scai"], out_console)
    out_console.print(f"results in [bold]{path}[/]")


def _execute(coro_factory: Any) -> Path:
    from sandbox._sync import run_sync

    display = _ProgressDisplay()
    try:
        with display.progress:
            return run_sync(coro_factory(display.hooks()))
    except KeyboardInterrupt:
        console.print("interrupted; the run directory is resumable with `sandbox resume DIR`", soft_wrap=True)
        raise typer.Exit(130) from None
    except SandboxError as error:
        raise _fail(error) from None


MaxCalls = Annotated[Optional[int], typer.Option("--max-calls", min=0, help="Budget: most LLM calls that reach a model (budget.calls).")]  # noqa: UP007
MaxTokens = Annotated[Optional[int], typer.Option("--max-tokens", min=0, help="Budget: most prompt + answer tokens (budget.tokens).")]  # noqa: UP007
MaxCost = Annotated[Optional[float], typer.Option("--max-cost", min=0.0, help="Budget: most US dollars, at models.<role>.price (budget.usd).")]  # noqa: UP007


def _budget(base: Any, calls: int | None, tokens: int | None, usd: float | None) -> Any:
    """`base` (a `Budget`) with the caps given on the command line; None when none is given."""
    if calls is None and tokens is None and usd is None:
        return None
    given = {k: v for k, v in (("calls", calls), ("tokens", tokens), ("usd", usd)) if v is not None}
    return base.model_copy(update=given)


@app.command()
def run(
    file: Annotated[Path, typer.Argument(help="A scenario file (YAML).")],
    out: Annotated[Optional[Path], typer.Option("--out", help="Run directory (default runs/<name>-<time>).")] = None,  # noqa: UP007
    runs: Annotated[Optional[int], typer.Option("--runs", help="Independent runs.")] = None,  # noqa: UP007
    epochs: Annotated[Optional[int], typer.Option("--epochs", help="Epochs per run.")] = None,  # noqa: UP007
    seed: Annotated[Optional[int], typer.Option("--seed", help="Root seed.")] = None,  # noqa: UP007
    model: Annotated[
        Optional[list[str]],  # noqa: UP007
        typer.Option("--model", help="ROLE=SPEC, e.g. user=openai:gpt-4o-mini; ROLE may be all. Repeatable."),
    ] = None,
    max_calls: MaxCalls = None,
    max_tokens: MaxTokens = None,
    max_cost: MaxCost = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the LLM calls and tokens per role a run would take, and call no model.")] = False,
) -> None:
    """Run a scenario and write a run directory."""
    from sandbox.runner import arun
    from sandbox.scenario_file import apply_overrides, load_scenario

    try:
        scenario = apply_overrides(load_scenario(file), runs=runs, epochs=epochs, seed=seed, models=model)
        budget = _budget(scenario.budget, max_calls, max_tokens, max_cost)
        scenario = scenario if budget is None else scenario.model_copy(update={"budget": budget})
    except SandboxError as error:
        raise _fail(error) from None
    if dry_run:
        from sandbox.sweep.commands import dry_run_table

        try:
            dry_run_table([scenario], f"{scenario.name}: a dry run ({scenario.runs} runs x {scenario.epochs} epochs), "
                                      "no model called")  # fmt: skip
        except SandboxError as error:
            raise _fail(error) from None
        return
    path = _execute(lambda hooks: arun(scenario, out=out, hooks=hooks))
    _summary_table(path)


@app.command()
def resume(
    run_dir: Annotated[Path, typer.Argument(help="A run directory left by an interrupted run.")],
    device: Annotated[Optional[str], typer.Option("--device", help="Training runs: cpu, cuda, cuda:N instead of the run's models.device.")] = None,  # noqa: UP007
    max_calls: MaxCalls = None,
    max_tokens: MaxTokens = None,
    max_cost: MaxCost = None,
    executor: Annotated[Optional[str], typer.Option("--executor", help="Sweeps: local or ray, instead of the sweep's.")] = None,  # noqa: UP007
    address: Annotated[Optional[str], typer.Option("--address", help="Sweeps: a Ray cluster's address.")] = None,  # noqa: UP007
    workers: Annotated[Optional[int], typer.Option("--workers", min=1, help="Sweeps: runs at once.")] = None,  # noqa: UP007
) -> None:
    """Continue an interrupted run (a society, training, labeling, distillation or solve run) from its last checkpoint."""
    from sandbox.distill.commands import distill_table, distill_with_progress, evaluate_with_progress
    from sandbox.distill.run import resume_distill
    from sandbox.moral.commands import seeds_table, train_table, train_with_progress
    from sandbox.moral.run import resume_training
    from sandbox.moral.seeds import resume_seeds
    from sandbox.proxy.commands import label_table, label_with_progress
    from sandbox.proxy.label import resume_labeling
    from sandbox.run_dir import hold
    from sandbox.run_kinds import run_kind
    from sandbox.run_dir import RunDirectory
    from sandbox.runner import aresume

    from sandbox.dialogue.commands import resume_dialogue_run

    with ExitStack() as held:
        try:
            kind = run_kind(run_dir)
            if device is not None and kind not in ("seeds", "training"):
                raise UsageError(f"--device is for training runs; {run_dir} is a {kind} run")
            if (executor or address or workers) and kind != "sweep":
                raise UsageError(f"--executor, --address and --workers are for sweeps; {run_dir} is a {kind} run")
            if executor not in (None, "local", "ray"):
                raise UsageError(f"--executor is local or ray, not {executor!r}")
            budget = None
            if max_calls is not None or max_tokens is not None or max_cost is not None:
                if kind not in ("society", "sweep", "label", "solve"):
                    raise UsageError(f"--max-calls, --max-tokens and --max-cost are for society, labeling and solve "
                                     f"runs and sweeps; {run_dir} is a {kind} run")  # fmt: skip
                if kind == "sweep":
                    from sandbox.sweep.config import load_sweep

                    budget = _budget(load_sweep(run_dir / "sweep.yaml")[0].sweep.budget, max_calls, max_tokens, max_cost)
                else:
                    from sandbox.llm.budget import Budget, set_budget
                    from sandbox.scenario_file import read_yaml

                    budget = _budget(Budget(**(read_yaml(run_dir / "scenario.yaml").get("budget") or {})), max_calls,
                                     max_tokens, max_cost)  # fmt: skip
                    if kind != "society":  # a society run's resume writes it after its preflight
                        set_budget(RunDirectory.open(run_dir), budget)
            held.enter_context(hold(run_dir, create=False))  # for the whole command: a second resume exits 2, naming this one
        except SandboxError as error:
            raise _fail(error) from None
        if kind == "sweep":
            from sandbox.sweep.commands import sweep_with_progress
            from sandbox.sweep.run import run_sweep

            sweep_with_progress(lambda on_start, on_run: run_sweep(
                run_dir, budget=budget, executor=executor or ("ray" if address else None), workers=workers,
                address=address, on_start=on_start, on_run=on_run))  # fmt: skip
        elif kind in ("reward-model", "solve"):
            resume_dialogue_run(run_dir)
        elif kind == "distill":
            path = distill_with_progress(lambda hooks: resume_distill(run_dir, hooks=hooks, evaluate=False))
            distill_table(path)
            from sandbox.distill.evaluate import RESULTS

            if not (path / RESULTS).is_file():
                evaluate_with_progress(path)
        elif kind == "label":
            label_table(label_with_progress(lambda hooks: resume_labeling(run_dir, hooks=hooks)))
        elif kind == "seeds":
            seeds_table(train_with_progress(lambda hooks: resume_seeds(run_dir, hooks=lambda _: hooks, device=device)))
        elif kind == "training":
            train_table(train_with_progress(lambda hooks: resume_training(run_dir, hooks=hooks, device=device)))
        else:
            _summary_table(_execute(lambda hooks: aresume(run_dir, hooks=hooks, budget=budget)))


@app.command()
def evaluate(
    run_dir: Annotated[Path, typer.Argument(help="A finished SCAI run directory, or a distillation run directory.")],
    trials: Annotated[Optional[int], typer.Option("--trials", help="Proposals per condition and run.")] = None,  # noqa: UP007
    currency: Annotated[
        Optional[list[str]],  # noqa: UP007
        typer.Option("--currency", help="Test on this currency, e.g. 'grams of medicine'. Repeatable."),
    ] = None,
    amount: Annotated[
        Optional[list[int]],  # noqa: UP007
        typer.Option("--amount", help="Test on this amount, e.g. 2220000000. Repeatable."),
    ] = None,
    reason: Annotated[bool, typer.Option("--reason", help="Ask the assistant for the reason of each proposal.")] = False,
    prior: Annotated[
        Optional[str],  # noqa: UP007
        typer.Option("--prior", help="State this prior at test time, before the principle (Fig. 3b); \"\": none."),
    ] = None,
    learned_on: Annotated[
        Optional[bool],  # noqa: UP007
        typer.Option("--learned-on/--no-learned-on", help="Say what the principle was learned on, and ask to weigh it."),
    ] = None,
) -> None:
    """Replay each run's final policy on new currencies and amounts (generalisation); for a distillation run, play
    the distilled student, the policy-prompted assistant, the users and the base model with no policy."""
    from sandbox.run_kinds import run_kind
    from sandbox.scai.evaluate import aevaluate, conditions_from_options

    try:
        kind = run_kind(run_dir)
    except SandboxError as error:
        raise _fail(error) from None
    if kind == "distill":
        from sandbox.distill.commands import evaluate_with_progress

        if currency or amount or reason or prior is not None or learned_on is not None:
            raise _fail(UsageError("a distillation's conditions are its distill.conditions; --trials alone applies"))
        evaluate_with_progress(run_dir, trials)
        return
    try:
        conditions = conditions_from_options(currency or [], amount or [], reason)
    except SandboxError as error:
        raise _fail(error) from None
    path = _execute(lambda hooks: _evaluated(aevaluate(run_dir, conditions=conditions, trials=trials, hooks=hooks,
                                                       prior=prior, state_learned_on=learned_on), run_dir))  # fmt: skip
    from sandbox.scai.commands import evaluation_table

    evaluation_table(path, out_console)


async def _evaluated(job: Any, run_dir: Path) -> Path:
    await job
    return run_dir


@app.command()
def compare(
    run_dirs: Annotated[list[Path], typer.Argument(help="Finished SCAI run directories.")],
    out: Annotated[Path, typer.Option("--out", help="The figure (PNG); the table goes beside it as CSV.")] = Path(
        "compare.png"
    ),
) -> None:
    """Overlay SCAI runs in the paper's layout: one group, mixed societies, manners, assistant-assistant."""
    from sandbox.scai.commands import compare_command

    try:
        compare_command(run_dirs, out, out_console)
    except SandboxError as error:
        raise _fail(error) from None


# The moral fine-tuning commands (train, evaluate-moral) live in their own module; importing it registers them.
from sandbox.moral import commands as _moral_commands  # noqa: E402, F401
from sandbox.proxy import commands as _proxy_commands  # noqa: E402, F401
from sandbox.distill import commands as _distill_commands  # noqa: E402, F401
from sandbox.dialogue import commands as _dialogue_commands  # noqa: E402, F401
from sandbox.sweep import commands as _sweep_commands  # noqa: E402, F401
from sandbox import cli_tools as _tool_commands  # noqa: E402, F401


def main() -> None:
    """Entry point of the `sandbox` command."""
    app()


if __name__ == "__main__":
    main()
