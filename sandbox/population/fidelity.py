"""Does an agent's play follow its own written norm? The proxy judge, asked per agent and generation.

With `population.judge_play` (the donor game), after each generation's
games the judge (role `judge`, `sandbox.proxy.judge.ProxyJudge`: a yes/no
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
from typing import Any

from prompts import render
from sandbox.games.donor import DonorRecord
from sandbox.llm.contracts import CallInfo
from sandbox.seeding import Branch, seed_node

__all__ = ["FIDELITY", "FIDELITY_COLUMNS", "judge_play", "moves_text"]

FIDELITY = "fidelity.csv"
FIDELITY_COLUMNS = ["generation", "agent", "name", "norm", "moves", "label", "p_yes", "answer"]


def _units(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def moves_text(records: Sequence[DonorRecord], agent: int, names: Sequence[str]) -> str:
    """One line per move `agent` made as donor: the resources on both sides before it, and what it did."""
    lines = []
    for h in records:
        if h.donor != agent:
            continue
        where = (f"Game {h.game + 1}, round {h.round + 1}: it had {_units(h.donor_before)} units; the recipient "
                 f"{names[h.recipient]} had {_units(h.recipient_before)}.")  # fmt: skip
        if not h.valid or h.amount is None:
            did = "It gave no readable answer."
        else:
            share = "" if math.isnan(h.share) else f" ({h.share:.0%} of its units)"
            did = f"It {'gave' if h.action == 'donate' else 'spent on punishing'} {_units(h.amount)} units{share}."
        lines.append(f"{where} {did}")
    return "\n".join(lines)


async def judge_play(judge: Any, agents: Sequence[dict[str, Any]], records: Sequence[DonorRecord],
                     names: Sequence[str], g: int, seed: int, game: Any) -> list[list[Any]]:  # fmt: skip
    """Ask `judge` (a `ProxyJudge`) about every agent with a strategy and a move as donor in generation `g`; the
    rows of `fidelity.csv`."""
    asked = [(i, moves_text(records, i, names)) for i, a in enumerate(agents) if a.get("strategy")]
    asked = [(i, moves) for i, moves in asked if moves]

    async def one(i: int, moves: str) -> list[Any]:
        prompt = render("population/donor/judge.j2", strategy=agents[i]["strategy"], moves=moves,
                        endowment=game.endowment, multiplier=game.multiplier, punishment=game.punishment,
                        punishment_loss=game.punishment_loss)  # fmt: skip
        call = CallInfo(role="judge", agent=names[i], run=0, epoch=g, step="fidelity")
        node = seed_node(seed, Branch.META, g, i, 7)  # the revision's node of generation g, agent i; 7: the judge
        verdict = await judge.yes_no(prompt, step_by_step=False, call=call, seed=int(node.generate_state(1)[0] % 2**31))
        label = "" if verdict.label is None else verdict.label
        p_yes = "" if verdict.p_yes is None else round(verdict.p_yes, 6)
        return [g, i, names[i], agents[i].get("norm"), moves, label, p_yes, verdict.answer]

    return list(await asyncio.gather(*(one(i, moves) for i, moves in asked)))
