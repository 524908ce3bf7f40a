"""The LLM reward model's error, measured as the paper's Table 8 does: `sandbox reward-model FILE`.

For each of `dialogues` setups of the scenario's domain, three two-message
dialogues are written from templates whose payoffs are known: Valid (a
proposal accepted), Rejected (a proposal refused) and Incomplete (a counter
proposal, no agreement). The reward model scores each; per outcome type and
overall, `Norm` is the mean absolute error over the domain's payoff range and
`Sgn` the fraction of payoffs whose sign is wrong (one sample per player and
dialogue). Both modes (`value`, the paper's; `outcome`) are measured unless
one is asked for.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from langchain_core.language_models import BaseChatModel

from prompts import render
from sandbox._sync import run_sync
from sandbox.games.dialogue import Message, Setup
from sandbox.dialogue.scenario import DialogueScenario
from sandbox.errors import UsageError
from sandbox.run_dir import RunDirectory, hold, holding
from sandbox.seeding import Branch, generator
from sandbox.summary import write_summary

OUTCOMES = ("valid", "rejected", "incomplete")
CASES = "reward_model.csv"
KIND = "reward-model"
TABLE = "reward_model_error.csv"


@dataclass(frozen=True)
class Case:
    """A templated dialogue and the payoffs it truly has."""

    outcome: str
    setup: int
    dialogue: tuple[Message, ...]
    truth: tuple[float, ...]


def _meeting_cases(domain: Any, setups: tuple[Setup, ...], rng: np.random.Generator) -> list[Case]:
    from sandbox.dialogue.domains.meeting import DAYS

    cases = []
    for index, setup in enumerate(setups):
        a, b = setup.players
        values = setup.data["values"]
        common = [d for d in values[0] if d in values[1]] or list(values[0])
        day = common[int(rng.integers(len(common)))]
        other_day = [d for d in DAYS if d != day][int(rng.integers(len(DAYS) - 1))]
        proposal = Message(0, "any", render("dialogue/table8/meeting_proposal.j2", sender=a, receiver=b, day=day))
        answers = {"valid": ("meeting_accept.j2", domain.payoffs_of(setup, day)),
                   "rejected": ("meeting_reject.j2", domain.payoffs_of(setup, None)),
                   "incomplete": ("meeting_incomplete.j2", domain.payoffs_of(setup, None))}  # fmt: skip
        for outcome, (template, truth) in answers.items():
            text = render(f"dialogue/table8/{template}", sender=b, receiver=a, day=day, other_day=other_day)
            cases.append(Case(outcome, index, (proposal, Message(1, "any", text)), truth))
    return cases


def _fruit_cases(domain: Any, setups: tuple[Setup, ...], rng: np.random.Generator) -> list[Case]:
    cases = []
    for index, setup in enumerate(setups):
        a, b = setup.players
        have_a, have_b = setup.data["endowments"]
        pairs = [(give, get) for give, n in have_a.items() if n > 0 for get, m in have_b.items() if m > 0 and get != give]
        if not pairs:  # nothing the two could swap: no valid trade to write
            continue
        give, get = pairs[int(rng.integers(len(pairs)))]
        give_n = int(rng.integers(1, have_a[give] + 1))
        get_n = int(rng.integers(1, have_b[get] + 1))
        trade = (give_n, give, get_n, get)
        proposal = Message(0, "any", render("dialogue/table8/fruit_proposal.j2", sender=a, receiver=b, give_n=give_n,
                                            give=give, get_n=get_n, get=get))  # fmt: skip
        answers = {"valid": ("fruit_accept.j2", domain.payoffs_of(setup, trade)),
                   "rejected": ("fruit_reject.j2", domain.payoffs_of(setup, None)),
                   "incomplete": ("fruit_incomplete.j2", domain.payoffs_of(setup, None))}  # fmt: skip
        for outcome, (template, truth) in answers.items():
            cases.append(Case(outcome, index, (proposal, Message(1, "any", render(f"dialogue/table8/{template}",
                                                                                   sender=b, receiver=a))), truth))  # fmt: skip
    return cases


def template_cases(scenario: DialogueScenario, dialogues: int) -> tuple[Any, tuple[Setup, ...], list[Case]]:
    """The domain, `dialogues` fresh setups, and three templated dialogues per setup."""
    config = scenario.dialogue.domain
    builders = {"meeting": _meeting_cases, "fruit": _fruit_cases}
    if config.kind not in builders:
        raise UsageError(f"dialogue.domain.kind: {config.kind} has no templated dialogues with known payoffs "
                         "(the paper's Table 8 covers meeting and fruit)")  # fmt: skip
    rng = generator(scenario.seed, Branch.DIALOGUE, 5)
    # more setups than asked for: a fruit setup where no trade is possible is skipped
    domain, setups = config.build(scenario.dialogue.players, 3 * dialogues, rng)
    cases = builders[config.kind](domain, setups, rng)
    kept = sorted({c.setup for c in cases})[:dialogues]
    return domain, setups, [c for c in cases if c.setup in kept]


async def score_cases(cases: list[Case], setups: tuple[Setup, ...], domain: Any, judge: BaseChatModel, mode: str,
                      seed: int) -> list[dict[str, Any]]:  # fmt: skip
    """One row per case and player: the true and the predicted payoff."""
    from sandbox.dialogue.reward import RewardModel

    model = RewardModel(domain, mode)  # type: ignore[arg-type]
    outcomes = await asyncio.gather(*(model.score(judge, setups[c.setup], c.dialogue, seed=seed) for c in cases))
    rows = []
    for case, outcome in zip(cases, outcomes):
        for player, (truth, predicted) in enumerate(zip(case.truth, outcome.payoffs)):
            rows.append({"mode": mode, "outcome": case.outcome, "setup": case.setup, "player": player,
                         "truth": truth, "predicted": predicted, "illegal": outcome.illegal or "",
                         "dialogue": "\n".join(m.text for m in case.dialogue)})  # fmt: skip
    return rows


def error_table(rows: pd.DataFrame, low: float, high: float) -> pd.DataFrame:
    """Norm and Sgn per mode and outcome type, and over all types."""
    out = []
    for mode, by_mode in rows.groupby("mode", sort=False):
        for outcome, group in [*by_mode.groupby("outcome", sort=False), ("all", by_mode)]:
            error = (group["predicted"] - group["truth"]).abs() / (high - low)
            wrong_sign = np.sign(group["predicted"]) != np.sign(group["truth"])
            out.append({"mode": mode, "outcome": outcome, "n": len(group), "norm": float(error.mean()),
                        "sgn": float(wrong_sign.mean()), "illegal": int((group["illegal"] != "").sum())})  # fmt: skip
    return pd.DataFrame(out)


def measure_reward_model(scenario: DialogueScenario, out: Path | str, *, dialogues: int = 10,
                         modes: tuple[str, ...] = ("value", "outcome"),
                         judge: BaseChatModel | None = None) -> Path:  # fmt: skip
    """Write `reward_model.csv` (every case) and `reward_model_error.csv` (the paper's Table 8) into `out`."""
    path = Path(out)
    RunDirectory.check_new(path)
    domain, setups, cases = template_cases(scenario, dialogues)  # a domain without templates writes nothing
    with hold(path):
        run_dir = RunDirectory.create(path, scenario)  # type: ignore[arg-type]
        run_dir.write_status("running", kind=KIND, dialogues=dialogues, modes=list(modes))
        return _measure(run_dir, scenario, domain, setups, cases, modes, judge)


def is_reward_model_run(path: Path | str) -> bool:
    """Whether `path` is a run directory of `sandbox reward-model`."""
    return RunDirectory(Path(path)).status().get("kind") == KIND


@holding
def resume_reward_model(path: Path | str, *, judge: BaseChatModel | None = None) -> Path:
    """Finish an interrupted measurement with the options it started with (answered calls come from the cache)."""
    from sandbox.scenario_file import load_scenario

    run_dir = RunDirectory.open(path)
    status = run_dir.status()
    if status.get("status") == "complete":
        return run_dir.path
    scenario = load_scenario(run_dir / "scenario.yaml", kind="dialogue")
    domain, setups, cases = template_cases(scenario, int(status["dialogues"]))
    return _measure(run_dir, scenario, domain, setups, cases, tuple(status["modes"]), judge)


def _measure(run_dir: RunDirectory, scenario: DialogueScenario, domain: Any, setups: tuple[Setup, ...],
             cases: list[Case], modes: tuple[str, ...], judge: BaseChatModel | None) -> Path:  # fmt: skip
    from sandbox.dialogue.models import run_roles

    started = time.time()
    rows: list[dict[str, Any]] = []
    with run_roles(run_dir, scenario, {"judge": judge} if judge is not None else None) as roles:
        for mode in modes:
            rows += run_sync(score_cases(cases, setups, domain, roles["judge"], mode, seed=scenario.seed))
    frame = pd.DataFrame(rows)
    frame.to_csv(run_dir / CASES, index=False)
    low, high = domain.payoff_range()
    table = error_table(frame, low, high)
    table.to_csv(run_dir / TABLE, index=False)
    summary = {"scenario": scenario.name, "domain": scenario.dialogue.domain.kind, "judge": scenario.models.judge.spec,
               "dialogues": len(cases), "payoff_range": [low, high],
               "table": table.to_dict("records"), "seconds": round(time.time() - started, 2)}  # fmt: skip
    write_summary(run_dir, summary, kind="dialogue")
    run_dir.write_status("complete", finished=time.time())
    return run_dir.path


