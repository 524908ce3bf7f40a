"""The `search` revision: K MetaLM draws and the current policy, each replayed against the users' observed behaviour.

A 1.5B MetaLM's single draw mostly copies the previous principle; the
proposals of a small model improve little on their own (Zhang et al. 2024,
"Revisiting OPRO"), so here the selection carries the learning, as in OPRO
(Yang et al. 2023) and APO (Pryzant et al. 2023): each candidate principle
is played by a fresh, memoryless assistant on what the users did in the
evidence the MetaLM read. It proposes on each stake a user proposed on, and
answers each proposal a user answered, with those episodes' seeds (common
random numbers). Its distance to the users is the mean absolute difference
of offered share, and of acceptance, averaged over the two. The closest
candidate is kept (ties to the current policy), or one is drawn with
probability proportional to exp(-distance / tau). Nothing about the users'
norm is read beyond the behaviour the MetaLM is shown.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from agents.assistant import PolicyFollowingAssistant
from agents.meta import Interaction
from sandbox.base.rounding import best
from sandbox.base.seeding import Branch, generator, seed_node
from sandbox.llm.contracts import CallInfo
from sandbox.rules.ultimatum import Stake
from sandbox.rules.ultimatum_episode import propose_move, respond_move
from sandbox.scai.assistant_block import RevisionStrategy


@dataclass(frozen=True)
class Target:
    """What users did once or more on one prompt: proposed on a stake, or answered one proposal."""

    kind: str  # propose | respond
    amount: int
    currency: str
    proposal: str | None  # respond: the users' proposal answered
    users: float  # propose: the users' mean offered share; respond: their acceptance rate
    n: int  # user episodes behind it
    epoch: int  # of the first such episode, whose seeds the replay uses
    index: int


def _is_user(agent: Any) -> bool:
    """A user of fixed norm: the society whose norm is learned (not the assistant, not a solver-guided member)."""
    return str(agent).startswith("user-")


def targets(episodes: list[dict[str, Any]], most: int) -> list[Target]:
    """The users' proposals (by stake) and answers (by proposal) in `episodes`, in their order, `most` of each kind."""
    proposed: dict[tuple[int, str], list[dict[str, Any]]] = {}
    answered: dict[tuple[int, str, str], list[dict[str, Any]]] = {}
    for e in episodes:
        if _is_user(e["proposer"]) and e["proposal_legal"]:
            proposed.setdefault((e["amount"], e["currency"]), []).append(e)
        if _is_user(e["responder"]) and e["decision"] is not None:
            answered.setdefault((e["amount"], e["currency"], e["proposal"]), []).append(e)
    out = [
        Target(
            "propose",
            a,
            c,
            None,
            float(np.mean([e["offered_share"] for e in group])),
            len(group),
            group[0]["epoch"],
            group[0]["index"],
        )
        for (a, c), group in list(proposed.items())[:most]
    ]
    out += [
        Target(
            "respond",
            a,
            c,
            p,
            float(np.mean([e["decision"] == "accept" for e in group])),
            len(group),
            group[0]["epoch"],
            group[0]["index"],
        )
        for (a, c, p), group in list(answered.items())[:most]
    ]
    return out


async def replay(
    assistant: PolicyFollowingAssistant, target: Target, *, root: int, run: int, episode: str, max_reasks: int
) -> dict[str, Any]:
    """The candidate's move on one target, and its distance to the users' (1 for an illegal move)."""
    from sandbox.rules.ultimatum import parse_proposal

    stake = Stake(target.amount, target.currency)
    seed = seed_node(root, run, Branch.EPISODE, target.epoch, target.index)
    info = {"run": run, "epoch": target.epoch, "episode": episode}
    row: dict[str, Any] = {
        "kind": target.kind,
        "amount": target.amount,
        "currency": target.currency,
        "proposal": target.proposal,
        "users": target.users,
        "n": target.n,
    }
    if target.kind == "propose":
        answer, split, _ = await propose_move(
            assistant, stake, seed=seed, info=info, max_reasks=max_reasks, step="replay-propose"
        )
        value = None if split is None else split.offered_share()
    else:
        assert target.proposal is not None
        split = parse_proposal(target.proposal, stake)
        answer, decision, _ = await respond_move(
            assistant, stake, target.proposal, split, seed=seed, info=info, max_reasks=max_reasks, step="replay-respond"
        )
        value = None if decision is None else float(decision == "accept")
    distance = 1.0 if value is None else abs(value - target.users)
    return row | {"answer": answer, "value": value, "distance": distance}


def distance(rows: list[dict[str, Any]]) -> float | None:
    """The mean of the mean distances of proposals and of answers (those there are); None with no target."""
    parts = [
        float(np.mean([r["distance"] for r in rows if r["kind"] == kind]))
        for kind in ("propose", "respond")
        if any(r["kind"] == kind for r in rows)
    ]
    return float(np.mean(parts)) if parts else None


def choose(candidates: list[dict[str, Any]], config: RevisionStrategy, rng: np.random.Generator) -> int:
    """The index of the kept candidate among the scored ones (the first, the current policy, wins ties)."""
    scored = [i for i, c in enumerate(candidates) if c["distance"] is not None]
    if not scored:  # nothing of the users to compare with: the first new draw, as a single revision would
        fresh = [i for i, c in enumerate(candidates) if c["source"] == "meta" and c["legal"] and not c["duplicate"]]
        return fresh[0] if fresh else 0
    if config.select == "best":  # distances equal but for their last digits tie (sandbox.base.rounding)
        return scored[best([-candidates[i]["distance"] for i in scored])]
    weights = np.array([math.exp(-candidates[i]["distance"] / config.tau) for i in scored])
    weights /= weights.sum()
    for i, w in zip(scored, weights):
        candidates[i]["probability"] = float(w)
    return scored[int(rng.choice(len(scored), p=weights))]


async def search(
    layer: Any,
    *,
    run: int,
    epoch: int,
    previous: str,
    observed: list[Interaction],
    episodes: list[dict[str, Any]],
    seeds: list[list[int]],
) -> dict[str, Any]:
    """Draw, replay and choose; the fields of the policy record (the chosen policy and every candidate)."""
    config: RevisionStrategy = layer.config.revision
    scenario = layer.scenario
    call = CallInfo(role="meta", agent="meta", run=run, epoch=epoch - 1, episode=f"r{run}-policy{epoch}", step="revise")
    draws = await asyncio.gather(
        *(
            layer.meta.revise(
                previous,
                observed,
                seeds=seeds[k],
                call=replace(call, step=f"candidate-{k}"),
                temperature=config.temperature,
                check_copy=False,
            )
            for k in range(config.candidates)
        )
    )
    candidates = [{"policy": previous, "source": "current", "answer": None, "legal": True, "duplicate": False}]
    for draw in draws:
        seen = any(c["legal"] and draw.policy is not None and c["policy"] == draw.policy for c in candidates)
        candidates.append(
            {
                "policy": draw.policy,
                "source": "meta",
                "answer": draw.answer,
                "legal": draw.policy is not None,
                "duplicate": seen,
                "illegal_answers": draw.illegal_answers,
            }
        )
    wanted = targets(episodes, config.replays)
    replayed = [i for i, c in enumerate(candidates) if c["legal"] and not c["duplicate"]]

    async def play(i: int) -> list[dict[str, Any]]:
        assistant = layer.policy_assistant(candidates[i]["policy"])
        return list(
            await asyncio.gather(
                *(
                    replay(
                        assistant,
                        t,
                        root=scenario.seed,
                        run=run,
                        episode=f"r{run}-policy{epoch}-c{i}-t{j}",
                        max_reasks=scenario.game.max_reasks,
                    )
                    for j, t in enumerate(wanted)
                )
            )
        )

    results = await asyncio.gather(*(play(i) for i in replayed))
    for candidate in candidates:
        candidate.update(replay=[], distance=None, probability=None)
    for i, rows in zip(replayed, results):
        candidates[i].update(replay=rows, distance=distance(rows))
    chosen = choose(candidates, config, generator(scenario.seed, run, Branch.META, epoch, 1_000))
    for i, candidate in enumerate(candidates):
        candidate["chosen"] = i == chosen
    return {
        "policy": candidates[chosen]["policy"],
        "source": "search",
        "legal": any(d.policy is not None for d in draws),  # illegal when no draw was a usable policy
        "answer": candidates[chosen]["answer"],
        "illegal_answers": sum(d.illegal_answers for d in draws),
        "kept": chosen == 0,
        "candidates": candidates,
    }
