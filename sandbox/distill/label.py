"""The judge alone: every move a distillation's judge can be shown, labelled before any training (`sandbox label`).

A distillation's judge sees a finite game (`sandbox.distill.judge_table`): at
the resolution of 0.05, 21 proposals and 42 answers. A label run asks about
each of them once, for the source's principles, and writes the same
`judge_table.csv` a distillation writes, with the judge's accuracy against
the true norm in `summary.json`. A distillation given that table
(`distill.judge_table`) reads its verdicts back and asks the judge nothing:
the chain's judge stage (`sandbox.chain`) is a label run.

A scenario of this kind is a distillation scenario with a `label:` block
(its `training:` block, if any, is not used):

    name: judge-selfish
    models: {judge: embedded}
    distill: {source: {run: runs/scai-selfish}, judge: act, resolution: 0.05}
    label: {roles: [proposer]}
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from sandbox.base.scenario_model import StrictModel
from sandbox.core.kinds import Ledgers
from sandbox.distill.layout import PRINCIPLES, DistillPlan
from sandbox.distill.scenario import DistillScenario

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


__all__ = ["LabelBlock", "LabelScenario", "label_moves", "resume_label"]


class LabelBlock(StrictModel):
    """Which moves the judge labels."""

    roles: list[Literal["proposer", "responder"]] | None = Field(
        None,
        min_length=1,
        description="The roles whose moves are labelled; default: proposer, and responder when "
        "distill.responder_share is above 0 (the moves a distillation of this scenario plays).",
    )

    def chosen(self, scenario: DistillScenario) -> list[str]:
        if self.roles is not None:
            return list(dict.fromkeys(self.roles))
        return ["proposer"] + (["responder"] if scenario.distill.responder_share > 0 else [])


class LabelScenario(DistillScenario):
    """A distillation scenario whose judge labels every move, with no training (a file with `label:`)."""

    label: LabelBlock = Field(default_factory=LabelBlock)


def _variants(scenario: DistillScenario) -> list[Any]:
    return ["principle", "no_principle"] if scenario.distill.reward == "no_principle" else ["principle"]


def label_moves(
    scenario: LabelScenario,
    out: Path | str | None = None,
    *,
    source: str = "<scenario>",
    judge: BaseChatModel | None = None,
    ledgers: Ledgers = (),
    on_move: Callable[[], None] | None = None,
) -> Path:
    """Label every move of the scenario's roles into a new run directory and return its path.

    Args:
        scenario: The label scenario.
        out: The run directory (default `runs/<name>-<time>`); it must not hold files.
        source: The scenario file's name, for error messages.
        judge: A chat model to judge with instead of `models.judge`.
        ledgers: Budget ledgers the judge's calls count against (a chain's).
        on_move: Called after each move's label is written (progress).
    """
    from sandbox.core.run_dir import RunDirectory, default_out, hold
    from sandbox.distill.planning import plan

    path = Path(out) if out is not None else default_out(scenario)
    RunDirectory.check_new(path)
    plan_ = plan(scenario, source)  # a bad source writes nothing
    with hold(path):
        run_dir = RunDirectory.create(path, scenario)
        return _label(run_dir, scenario, plan_, judge, ledgers, on_move)


def resume_label(
    path: Path | str,
    *,
    judge: BaseChatModel | None = None,
    ledgers: Ledgers = (),
    on_move: Callable[[], None] | None = None,
) -> Path:
    """Ask what an interrupted label run has not asked yet (its table is read back)."""
    from sandbox.base.files import read_json
    from sandbox.core.run_dir import RunDirectory, hold
    from sandbox.core.scenario_files import load_scenario

    with hold(path, create=False):
        run_dir = RunDirectory.open(path)
        scenario = load_scenario(run_dir / "scenario.yaml", kind="judge")
        if (run_dir / PRINCIPLES).is_file():
            plan_ = DistillPlan.from_dict(read_json(run_dir / PRINCIPLES))
        else:  # killed before it wrote its plan: plan again, as it did
            from sandbox.distill.planning import plan

            plan_ = plan(scenario, str(run_dir / "scenario.yaml"))
        return _label(run_dir, scenario, plan_, judge, ledgers, on_move)


def _label(
    run_dir: Any,
    scenario: LabelScenario,
    plan_: DistillPlan,
    judge: BaseChatModel | None,
    ledgers: Ledgers,
    on_move: Callable[[], None] | None,
) -> Path:
    from sandbox.core.run_dir import atomic_write_text
    from sandbox.core.summary import write_summary
    from sandbox.distill.run import judge_table
    from sandbox.distill.summary import judge_figures
    from sandbox.llm.accounting import TokenLedger
    from sandbox.llm.transcript import read_transcript

    if not (run_dir / PRINCIPLES).is_file():  # a new run's plan, or one killed before it was written
        atomic_write_text(run_dir / PRINCIPLES, json.dumps(plan_.to_dict(), indent=2))
    roles = scenario.label.chosen(scenario)
    table, close = judge_table(run_dir, scenario, plan_, judge, ledgers=ledgers)
    started = time.time()
    try:
        table.label_all(roles, _variants(scenario), on_move)
    finally:
        close()
    path = run_dir / "transcripts.jsonl"
    usage = TokenLedger.from_transcript(read_transcript(path) if path.is_file() else []).totals().get("judge", {})
    summary = {
        "scenario": scenario.name,
        "judge_model": scenario.models.judge,
        "judge_mode": scenario.distill.judge,
        "scoring": scenario.distill.scoring,
        "resolution": scenario.distill.resolution,
        "roles": roles,
        "principles": [p.text for p in plan_.principles],
        "source": plan_.source,
        "truth": plan_.truth,
        "judge": {
            **judge_figures(table),
            "calls": int(usage.get("calls", 0)),
            "cache_hits": int(usage.get("cache_hits", 0)),
        },
        "seconds": round(time.time() - started, 3),
    }
    write_summary(run_dir, summary, kind="judge")
    run_dir.write_status("complete", finished=time.time())
    return run_dir.path
