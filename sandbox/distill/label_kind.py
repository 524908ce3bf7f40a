"""The judge kind: a distillation's judge labelling every move it can be shown, with no training (a `label:` file).

Registered under the entry-point group `sandbox.kinds`; importing this module
imports nothing else of the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.core.kinds import GivenModels, Ledgers, RunKind, by_option

if TYPE_CHECKING:
    from sandbox.distill.label import LabelScenario


__all__ = ["JUDGE", "estimate_calls"]


def _judge(models: GivenModels) -> Any:
    from sandbox.base.errors import UsageError

    given = dict(models or {})
    unknown = sorted(set(given) - {"judge"})
    if unknown:
        raise UsageError(f"unknown roles in models: {', '.join(unknown)} (a judge run has judge)")
    return given.get("judge")


def run(
    scenario: LabelScenario,
    out: Path | str | None = None,
    *,
    models: GivenModels = None,
    hooks: Any = None,
    ledgers: Ledgers = (),
) -> Path:
    """Label every move (`sandbox.distill.label.label_moves`); `models`: {"judge": a chat model}; `hooks`: called
    after each move's label is written."""
    from sandbox.distill.label import label_moves

    return label_moves(scenario, out, judge=_judge(models), ledgers=ledgers, on_move=hooks)


def resume(path: Path | str, *, models: GivenModels = None, hooks: Any = None, ledgers: Ledgers = ()) -> Path:
    """Ask what an interrupted label run has not (its table is read back)."""
    from sandbox.distill.label import resume_label

    return resume_label(path, judge=_judge(models), ledgers=ledgers, on_move=hooks)


def estimate_calls(scenario: LabelScenario, principles: int = 1) -> int:
    """The judge calls a label run of `scenario` makes for `principles` principles, every answer legal: a verdict
    per move and principle, or (act) `act_samples` proposals per principle and one answer per offer answered."""
    from sandbox.distill.judge_table import every_move

    roles = scenario.label.chosen(scenario)
    moves = every_move(scenario.distill.resolution, roles)
    players = principles + (1 if scenario.distill.reward == "no_principle" else 0)  # the control: no principle
    if scenario.distill.judge == "act":
        offers = {m.offered for m in moves if m.role == "responder"}
        return players * ((scenario.distill.act_samples if "proposer" in roles else 0) + len(offers))
    return len(moves) * players


def dry_run(scenario: LabelScenario) -> Any:
    """The judge's calls (one principle for a run source: its final policy), and a rough token count."""
    import pandas as pd

    from sandbox.core.dry_run import CHARS_PER_TOKEN

    calls = estimate_calls(scenario)
    return pd.DataFrame(
        [
            {
                "role": "judge",
                "calls": calls,
                "cache_hits": 0,
                "prompt_tokens": int(calls * 600 / CHARS_PER_TOKEN),
                "max_answer_tokens": calls * 64,
            }
        ]
    )


def describe(scenario: LabelScenario, *, source: str = "<scenario>") -> str:
    d = scenario.distill
    origin = f"the run {d.source.run}" if d.source.run else "a policy text"
    return f"the {d.judge} judge {scenario.models.judge} labelling every move of {origin}"


def print_label(path: Path) -> None:
    """The judge's reward by offered share and its accuracy against the true norm (from `summary.json`)."""
    from rich.table import Table

    from sandbox.base.files import read_json
    from sandbox.core.commands import out_console

    summary = read_json(path / "summary.json")
    judge = summary.get("judge", {})
    table = Table("offered share", "judge's reward", title=f"{path}: the {summary.get('judge_mode')} judge")
    for share, reward in judge.get("judge_reward_by_share", {}).items():
        table.add_row(share, f"{reward:.3f}")
    out_console.print(table)
    accuracy = judge.get("accuracy_vs_truth")
    out_console.print(
        f"{judge.get('table_entries', 0)} moves labelled with {judge.get('calls', 0)} calls"
        + (
            f"; accuracy against the true norm {accuracy:.0%}, AUC {judge.get('auc_vs_truth')}"
            if accuracy is not None
            else ""
        )
    )


def cli_run(scenario: LabelScenario, out: Path | None, *, source: str = "<scenario>") -> Path:
    from sandbox.core.commands import console
    from sandbox.distill.label import label_moves

    with console.status("the judge labels every move"):
        path = label_moves(scenario, out, source=source)
    print_label(path)
    return path


def cli_resume(path: Path, **options: Any) -> None:
    by_option(options, (), f"{path}, a judge run")
    print_label(resume(path))


JUDGE = RunKind(
    name="judge",
    block="label",
    precedence=10,  # before distill: a label file has a distill: block too
    title="a judge (label) scenario",
    command="run",
    description="A distillation's judge labels every move it can be shown (a SCAI run's policy, or a text), with "
    "its accuracy against the true norm; a distillation reads the table back (distill.judge_table).",
    model="sandbox.distill.label:LabelScenario",
    run="sandbox.distill.label_kind:run",
    resume="sandbox.distill.label_kind:resume",
    describe="sandbox.distill.label_kind:describe",
    dry_run="sandbox.distill.label_kind:dry_run",
    cli_run="sandbox.distill.label_kind:cli_run",
    cli_resume="sandbox.distill.label_kind:cli_resume",
    tables={"judge_table": "judge_table.csv"},
    conformance="sandbox.distill.conformance:JUDGE_CASE",
    example="scenarios/chain/judge_selfish.yaml",
    view="sandbox.distill.view:judge_view",
    budget=True,
)
