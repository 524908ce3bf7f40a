"""Does an agent's play follow its own written norm? The proxy judge, asked per agent and generation.

With `population.judge_play` (the donor game), after each generation's
games the judge (role `judge`, `sandbox.rewards.judge.ProxyJudge`: a yes/no
question at temperature 0, with P(yes) read from the log-probabilities
where the backend gives them) reads one agent's strategy text and every
move it made as donor in that generation
(`prompts/population/donor/judge.j2`) and answers whether the moves follow
the strategy. An agent that made no move as donor is not asked; an answer
that is neither yes nor no is recorded unparsed (no label), never read as
a no. `fidelity.csv` holds one row per agent asked: generation, agent,
name, norm id, the moves shown, the label, P(yes) and the answer.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from typing_extensions import ReadOnly, TypedDict

from prompts import render
from sandbox.base.seeding import Branch, call_seed
from sandbox.llm.contracts import CallInfo
from sandbox.population.games.donor.rules import DonorRecord
from sandbox.population.games.donor.spec import DonorSpec

if TYPE_CHECKING:
    from sandbox.rewards.judge import ProxyJudge

__all__ = [
    "FIDELITY",
    "FIDELITY_COLUMNS",
    "KNOWN_CASES",
    "FidelityBench",
    "FidelityRow",
    "JudgedAgent",
    "KnownCaseVerdict",
    "bench_fidelity",
    "judge_play",
    "moves_text",
]

FIDELITY = "fidelity.csv"


class FidelityRow(TypedDict):
    """A row of fidelity.csv: the agent asked about in a generation, its norm id, the moves shown, the judge's label
    ("" when its answer did not parse), P(yes) ("" without log-probabilities) and its answer."""

    generation: int
    agent: int
    name: str
    norm: int | None
    moves: str
    label: bool | str
    p_yes: float | str
    answer: str


FIDELITY_COLUMNS = tuple(FidelityRow.__annotations__)


class JudgedAgent(TypedDict):
    """What the judge reads of an agent: its strategy (None: none written) and its norm id."""

    strategy: ReadOnly[str | None]
    norm: ReadOnly[int | None]


def _units(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def moves_text(records: Sequence[DonorRecord], agent: int, names: Sequence[str]) -> str:
    """One line per move `agent` made as donor: the resources on both sides before it, and what it did."""
    lines = []
    for h in records:
        if h.donor != agent:
            continue
        where = (
            f"Game {h.game + 1}, round {h.round + 1}: it had {_units(h.donor_before)} units; the recipient "
            f"{names[h.recipient]} had {_units(h.recipient_before)}."
        )
        if not h.valid or h.amount is None:
            did = "It gave no readable answer."
        else:
            share = "" if math.isnan(h.share) else f" ({h.share:.0%} of its units)"
            did = f"It {'gave' if h.action == 'donate' else 'spent on punishing'} {_units(h.amount)} units{share}."
        lines.append(f"{where} {did}")
    return "\n".join(lines)


async def judge_play(
    judge: ProxyJudge,
    agents: Sequence[JudgedAgent],
    records: Sequence[DonorRecord],
    names: Sequence[str],
    g: int,
    seed: int,
    game: DonorSpec,
) -> list[FidelityRow]:
    """Ask `judge` (a `ProxyJudge`) about every agent with a strategy and a move as donor in generation `g`; the
    rows of `fidelity.csv`."""
    asked = [(i, moves_text(records, i, names)) for i, a in enumerate(agents) if a.get("strategy")]
    asked = [(i, moves) for i, moves in asked if moves]

    async def one(i: int, moves: str) -> FidelityRow:
        prompt = render(
            "population/donor/judge.j2",
            strategy=agents[i]["strategy"],
            moves=moves,
            endowment=game.endowment,
            multiplier=game.multiplier,
            punishment=game.punishment,
            punishment_loss=game.punishment_loss,
        )
        call = CallInfo(role="judge", agent=names[i], run=0, epoch=g, step="fidelity")
        verdict = await judge.yes_no(
            prompt, step_by_step=False, call=call, seed=call_seed(seed, Branch.META, g, i, 7)
        )  # the revision's node of g, i; 7: judge
        label = "" if verdict.label is None else verdict.label
        p_yes = "" if verdict.p_yes is None else round(verdict.p_yes, 6)
        return FidelityRow(
            generation=g,
            agent=i,
            name=names[i],
            norm=agents[i].get("norm"),
            moves=moves,
            label=label,
            p_yes=p_yes,
            answer=verdict.answer,
        )

    return list(await asyncio.gather(*(one(i, moves) for i, moves in asked)))


# Known cases for `sandbox bench fidelity`: (strategy, the shares it gave in three rounds, whether they follow it).
KNOWN_CASES: list[tuple[str, tuple[float, float, float], bool]] = [
    ("My strategy will be to give nothing, whatever the recipient did.", (0.0, 0.0, 0.0), True),
    ("My strategy will be to give nothing, whatever the recipient did.", (1.0, 1.0, 1.0), False),
    ("My strategy will be to give nothing, whatever the recipient did.", (0.0, 0.0, 0.5), False),
    ("My strategy will be to donate 50% of my resources in each round.", (0.5, 0.5, 0.5), True),
    ("My strategy will be to donate 50% of my resources in each round.", (0.0, 0.0, 0.0), False),
    ("My strategy will be to give everything I have to every recipient.", (1.0, 1.0, 1.0), True),
    ("My strategy will be to give everything I have to every recipient.", (0.1, 0.1, 0.1), False),
    ("My strategy will be to give a small share, about 10%, in each round.", (0.1, 0.1, 0.1), True),
]


def known_case_records(shares: Sequence[float]) -> list[DonorRecord]:
    """Three rounds of agent 0 as donor, with 10 units before each move, giving `shares`."""
    return [
        DonorRecord(
            game=0,
            round=2 * r,
            donor=0,
            recipient=r + 1,
            donor_before=10.0,
            recipient_before=10.0,
            action="donate",
            amount=10.0 * share,
            valid=True,
        )
        for r, share in enumerate(shares)
    ]


class KnownCaseVerdict(TypedDict):
    """The judge on a known case: the strategy (from its first word after "My strategy will be"), the shares given,
    whether they follow it, the judge's label and P(yes) (as in fidelity.csv), and whether the label is right."""

    strategy: str
    shares: tuple[float, float, float]
    follows: bool
    label: bool | str
    p_yes: float | str
    right: bool


class FidelityBench(TypedDict):
    """`sandbox bench fidelity`'s result: the known cases, how many the judge got right, how many it said yes to,
    and its verdict on each."""

    cases: int
    right: int
    said_yes: int
    table: list[KnownCaseVerdict]


async def ajudge_known_cases(judge: ProxyJudge, game: DonorSpec) -> list[KnownCaseVerdict]:
    """The judge's verdict on each of `KNOWN_CASES` (a player's strategy and three moves, followed or not)."""
    rows = []
    for k, (strategy, shares, follows) in enumerate(KNOWN_CASES):
        agents = [JudgedAgent(strategy=strategy, norm=k)]
        (row,) = await judge_play(judge, agents, known_case_records(shares), ["A", "B", "C", "D"], k, 0, game)
        rows.append(
            KnownCaseVerdict(
                strategy=strategy.removeprefix("My strategy will be "),
                shares=shares,
                follows=follows,
                label=row["label"],
                p_yes=row["p_yes"],
                right=row["label"] == follows,
            )
        )
    return rows


def bench_fidelity(spec: str = "embedded") -> FidelityBench:
    """`sandbox bench fidelity`: the judge of play against norm on known cases (8: half followed, half not), so a
    judge that says yes to everything scores 4 of 8."""
    import pandas as pd

    from sandbox.base.sync import run_sync
    from sandbox.llm.resolve import scratch_model
    from sandbox.rewards.judge import ProxyJudge

    with scratch_model("judge", spec, {"temperature": 0.0}) as model:
        rows = run_sync(ajudge_known_cases(ProxyJudge(model), DonorSpec(kind="donor")))
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_colwidth", 70):
        print(table.to_string(index=False))
    right, said_yes = int(table["right"].sum()), int((table["label"] == True).sum())  # noqa: E712
    print(f"\nright on {right} of {len(table)} known cases; said yes {said_yes} times (half are followed)")
    return FidelityBench(cases=len(table), right=right, said_yes=said_yes, table=rows)
