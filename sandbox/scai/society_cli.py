"""The society kind on the command line: `sandbox run`, `resume`, `evaluate` and `compare` of a society (SCAI) run.

The core's commands (`sandbox.cli.runs`, `sandbox.cli.branches`) find these through the society kind
(`sandbox.scai.kind`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from sandbox.core import run_dir as layout
from sandbox.core.commands import out_console, progress_bar, with_progress
from sandbox.core.kinds import by_option

__all__ = [
    "apply_overrides",
    "cli_compare",
    "cli_evaluate",
    "cli_resume",
    "cli_run",
    "payoff_table",
    "summary_table",
]


class _ProgressDisplay:
    """A Rich progress bar over episodes, with counts and ETA, and each new policy printed above it."""

    def __init__(self) -> None:
        self.progress = progress_bar("playing", "episodes", last=True)
        self.task: Any = None
        self.phase: Any = None
        self.per_epoch = 0

    def hooks(self) -> Any:
        from sandbox.society.runner import ProgressHooks

        return ProgressHooks(
            on_start=self.on_start,
            on_epoch_start=self.on_epoch_start,
            on_episode=self.on_episode,
            on_policy=self.on_policy,
            on_phase=self.on_phase,
            on_advance=self.on_advance,
        )

    def on_phase(self, what: str, total: int | None) -> None:
        """A phase before the episodes (the guided members' game being solved): a bar of its own."""
        if self.phase is not None:
            self.progress.update(self.phase, total=self.progress.tasks[self.phase].completed)
        self.phase = self.progress.add_task(what + (" (LLM calls)" if total is None else ""), total=total, last="")

    def on_advance(self, n: int) -> None:
        if self.phase is not None:
            self.progress.advance(self.phase, n)

    def on_policy(self, record: dict[str, Any]) -> None:
        flag = "" if record["legal"] else " [red](illegal revision: previous policy kept)[/]"
        self.progress.console.print(
            f"run {record['run']} epoch {record['epoch']} policy v{record['version']}{flag}: "
            f"[italic]{escape(record['policy'])}[/]",
            soft_wrap=True,
        )

    def on_start(self, total: int, done: int, per_epoch: int) -> None:
        self.per_epoch = per_epoch
        self.task = self.progress.add_task("playing", total=total, completed=done, last="")

    def on_epoch_start(self, run: int, epoch: int, episodes: int) -> None:
        # The total was an estimate (a maximal matching on a sparse network can be smaller).
        if self.task is not None and episodes != self.per_epoch:
            total = self.progress.tasks[self.task].total or 0
            self.progress.update(self.task, total=total + episodes - self.per_epoch)

    def on_episode(self, record: dict[str, Any]) -> None:
        if self.task is not None:
            self.progress.advance(self.task)


def _execute(coro_factory: Any) -> Path:
    from sandbox.base.sync import run_sync

    display = _ProgressDisplay()
    return with_progress(
        lambda: run_sync(coro_factory(display.hooks())),
        display.progress,
        "interrupted; the run directory is resumable with `sandbox resume DIR`",
    )


def summary_table(path: Path) -> None:
    """A finished society run's tables on stdout: offered share and acceptance by norm, LLM calls by role, and
    SCAI's epochs when the run had an assistant."""
    from sandbox.base.files import read_json
    from sandbox.scai.commands import scai_table

    summary = read_json(path / "summary.json")
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
    payoffs = summary.get("payoff_by_member") or []
    if len({(row["member"], row["norm"]) for row in payoffs}) > 1:
        out_console.print(payoff_table(payoffs))
    if (path / layout.GUIDED / layout.SUMMARY).is_file():
        out_console.print(
            f"the guided members' game was solved in {escape(str(path / layout.GUIDED))} (a `sandbox solve` run: its "
            f"policy.csv, calls and NashConv)",
            soft_wrap=True,
        )
    usage = Table(title="LLM calls by role", title_justify="left")
    for column in ("role", "calls", "cache hits", "input tokens", "reused", "output tokens"):
        usage.add_column(column, justify="left" if column == "role" else "right")
    for role, u in summary["llm_usage"].items():
        reused = u.get("prompt_cached_tokens", 0)  # prompt tokens the backend did not compute again
        share = f" ({reused / u['input_tokens']:.0%})" if u["input_tokens"] else ""
        usage.add_row(
            role,
            str(u["calls"]),
            str(u["cache_hits"]),
            str(u["input_tokens"]),
            f"{reused}{share}",
            str(u["output_tokens"]),
        )
    out_console.print(usage)
    if "scai" in summary:
        scai_table(summary["scai"], out_console)
    out_console.print(f"results in [bold]{escape(str(path))}[/]")


def payoff_table(rows: list[dict[str, Any]]) -> Table:
    """Each member kind's payoff per role (`summary.json`'s `payoff_by_member`): the mean payoff over the amount,
    with its 95% CI."""
    table = Table(title="payoff per member kind and role: share of the amount, mean (95% CI)", title_justify="left")
    for column in ("member", "as proposer", "as responder", "both", "episodes"):
        table.add_column(column, justify="left" if column == "member" else "right")
    cells: dict[str, dict[str, str]] = {}
    for row in rows:
        name = row["member"] if row["member"] != "user" else f"user: {row['norm']}"
        ci = "" if row["ci_low"] is None else f" ({row['ci_low']:.0%}–{row['ci_high']:.0%})"
        cells.setdefault(name, {})[row["role"]] = "n/a" if row["utility"] is None else f"{row['utility']:.0%}{ci}"
        if row["role"] == "both":
            cells[name]["episodes"] = str(row["episodes"])
    for name, cell in cells.items():
        table.add_row(name, *(cell.get(k, "-") for k in ("proposer", "responder", "both", "episodes")))
    return table


def apply_overrides(
    scenario: Any,
    *,
    source: str = "<command line>",
    seed: int | None = None,
    models: list[str] | None = None,
    runs: int | None = None,
    epochs: int | None = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    max_cost: float | None = None,
) -> Any:
    """`scenario` with `sandbox run`'s options applied and validated again: `--runs`, `--epochs`, `--seed`,
    `--model ROLE=SPEC` (ROLE may be all) and the budget's caps."""
    from sandbox.core.scenario import ROLES
    from sandbox.core.scenario_files import model_overrides, parse_kind

    data = scenario.model_dump(mode="json")
    for key, value in (("runs", runs), ("epochs", epochs), ("seed", seed)):
        if value is not None:
            data[key] = value
    model_overrides(data, models, ROLES, source)
    budget = scenario.budget.with_caps(max_calls=max_calls, max_tokens=max_tokens, max_cost=max_cost)
    if budget is not None:
        data["budget"] = budget.model_dump()
    return parse_kind("society", data, source)


def cli_run(scenario: Any, out: Path | None, *, source: str = "<scenario>") -> Path:
    """`sandbox run` of a society scenario: the run under a progress bar, then its tables."""
    from sandbox.society.runner import arun

    path = _execute(lambda hooks: arun(scenario, out=out, hooks=hooks))
    summary_table(path)
    return path


def cli_resume(path: Path, **options: Any) -> None:
    """`sandbox resume` of a society run (`--max-calls`, `--max-tokens`, `--max-cost` raise its budget)."""
    from sandbox.base.files import read_yaml
    from sandbox.llm.budget import Budget
    from sandbox.society.runner import aresume

    caps = {k: options.pop(k) for k in ("max_calls", "max_tokens", "max_cost") if k in options}
    by_option(options, (), f"{path}, a society run")
    budget = Budget(**(read_yaml(path / "scenario.yaml").get("budget") or {})).with_caps(**caps)
    summary_table(_execute(lambda hooks: aresume(path, hooks=hooks, budget=budget)))


def cli_evaluate(
    path: Path,
    *,
    trials: int | None = None,
    currency: list[str] | None = None,
    amount: list[int] | None = None,
    reason: bool = False,
    prior: str | None = None,
    learned_on: bool | None = None,
    **others: Any,
) -> None:
    """`sandbox evaluate` of a finished SCAI run: its final policies under new currencies and amounts."""
    from sandbox.scai.commands import evaluation_table
    from sandbox.scai.evaluate import aevaluate, conditions_from_options

    by_option(others, (), "SCAI runs")
    conditions = conditions_from_options(currency or [], amount or [], reason)

    async def evaluated(hooks: Any) -> Path:
        await aevaluate(
            path, conditions=conditions, trials=trials, hooks=hooks, prior=prior, state_learned_on=learned_on
        )
        return path

    evaluation_table(_execute(evaluated), out_console)


def cli_compare(run_dirs: list[Path], out: Path) -> None:
    """`sandbox compare` of SCAI runs (none a fork of another): the paper's layout, one group, mixed societies,
    manners, assistant-assistant; the figure at `out`, its table beside it as CSV."""
    from sandbox.scai.commands import compare_command

    compare_command(run_dirs, out, out_console)
