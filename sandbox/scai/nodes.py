"""The nodes Social Contract AI adds to the society graph (through `sandbox.scai.layer`): the first policy, the
meta step, and the final policy's proposals.

Policies are versioned by the epoch they are played in: version k guides the
assistant through epoch k. Version 0 is given or drawn from a seeded list;
version k+1 is written by the MetaLM from epoch k's interactions (or a longer
window) and version k, by one draw or a search (`assistant.revision`). Under
the oracle bound every version is the users' own norm text. Each record
keeps the evidence (episode ids) and a word diff against the previous version.
"""

from __future__ import annotations

import asyncio
import operator
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
from langgraph.runtime import Runtime

from agents.assistant import library_policies
from agents.meta import Interaction
from sandbox.base.seeding import Branch, generator, seed_node
from sandbox.base.words import word_diff
from sandbox.llm.contracts import CallInfo
from sandbox.rules.ultimatum import Stake
from sandbox.rules.ultimatum_episode import propose_move
from sandbox.society.context import SocietyContext
from sandbox.society.nodes import run_currency
from sandbox.society.state import SocietyState
from societies.norms import resolve_norm

if TYPE_CHECKING:
    from sandbox.scai.assistant_block import ScaiScenario


class ScaiState(SocietyState, total=False):
    """A society run's state with SCAI's keys.

    Attributes:
        policies: The assistant's policies, one per epoch, version k played in epoch k.
        finals: The final policy's proposals after the last epoch.
    """

    policies: Annotated[list[dict[str, Any]], operator.add]
    finals: Annotated[list[dict[str, Any]], operator.add]


# The assistant's agent id; two copies that meet are `assistant-0` and `assistant-1`.
ASSISTANT = "assistant"
COPIES = (f"{ASSISTANT}-0", f"{ASSISTANT}-1")


def _policy_record(run: int, version: int, policy: str, **fields: Any) -> dict[str, Any]:
    return {
        "run": run,
        "version": version,
        "epoch": version,
        "policy": policy,
        "source": "meta",
        "legal": True,
        "evidence": [],
        "diff": "",
        "answer": None,
        "illegal_answers": 0,
        "copy_reasks": 0,
        "kept": None,
        "candidates": [],
        **fields,
    }


def oracle_policy(scenario: ScaiScenario) -> str:
    """The users' own norm text (of the norm with the largest share; the first of equal shares): the oracle bound."""
    top = max(scenario.society.norms, key=lambda share: share.proportion)
    return resolve_norm(top.norm, top.text).text


def init_policy(state: ScaiState, runtime: Runtime[SocietyContext]) -> dict[str, Any]:
    """Version 0: the scenario's initial policy, or one drawn (seeded, per run) from the list."""
    ctx = runtime.context
    config = ctx.scenario.assistant
    assert config is not None, "init_policy runs only in scenarios with an assistant"
    run = state["run"]
    if config.prompt == "none":  # a distilled student: no policy, now or later
        record = _policy_record(run, 0, "", source="none")
        ctx.layer.on_policy(record)
        return {"policies": [record]}
    if config.oracle:
        record = _policy_record(run, 0, oracle_policy(ctx.scenario), source="oracle")
        ctx.layer.on_policy(record)
        return {"policies": [record]}
    if config.initial_policy is not None:
        policy = config.initial_policy
    else:
        choices = list(config.initial_policies or library_policies())
        policy = choices[int(generator(ctx.scenario.seed, run, Branch.POLICY).integers(len(choices)))]
    record = _policy_record(run, 0, policy, source="initial")
    ctx.layer.on_policy(record)
    return {"policies": [record]}


def _observed(episode: dict[str, Any]) -> Interaction:
    """An episode as the MetaLM reads it: the proposal as said, and the decision (or the illegal answer)."""
    return Interaction.from_episode(episode, lambda name: name.startswith(ASSISTANT))


def evidence(state: ScaiState, runtime: Runtime[SocietyContext]) -> list[dict[str, Any]]:
    """The episodes the MetaLM reads before writing the policy of epoch `state["epoch"]`.

    The window's episodes (the last `history_epochs` epochs, or all), shuffled
    with the run's seeded generator and cut to `max_interactions`.
    """
    ctx = runtime.context
    config = ctx.scenario.assistant
    assert config is not None
    epoch = state["epoch"]
    first = 0 if config.history_epochs == 0 else epoch - config.history_epochs
    episodes = sorted(
        (e for e in state["episodes"] if first <= e["epoch"] < epoch), key=lambda e: (e["epoch"], e["index"])
    )
    rng = generator(ctx.scenario.seed, state["run"], Branch.META, epoch)
    order = rng.permutation(len(episodes))[: config.max_interactions]
    return [episodes[i] for i in order]


def _attempt_seeds(root: int, run: int, epoch: int, attempts: int, *path: int) -> list[int]:
    node = seed_node(root, run, Branch.META, epoch, *path)
    return [
        int(np.random.SeedSequence(node.entropy, spawn_key=(*node.spawn_key, a)).generate_state(1)[0])
        for a in range(attempts)
    ]


async def meta(state: ScaiState, runtime: Runtime[SocietyContext]) -> dict[str, Any]:
    """The policy of the coming epoch: the MetaLM's revision of the last one, from the observed interactions."""
    from sandbox.scai.revise import search

    ctx = runtime.context
    layer = ctx.layer
    assert layer is not None and ctx.scenario.assistant is not None
    config = ctx.scenario.assistant
    run, epoch = state["run"], state["epoch"]
    previous = state["policies"][-1]
    if config.prompt == "none" or config.oracle or not config.revise:  # no policy to revise, the users' own, or
        # a policy held fixed: the MetaLM is not asked
        record = _policy_record(run, epoch, previous["policy"], source=previous["source"])
        layer.on_policy(record)
        return {"policies": [record]}
    episodes = evidence(state, runtime)
    observed = [_observed(e) for e in episodes]
    attempts = layer.meta.max_reasks + 2
    if config.revision.strategy == "search":
        seeds = [
            _attempt_seeds(ctx.scenario.seed, run, epoch, attempts, 100 + k) for k in range(config.revision.candidates)
        ]
        fields = await search(
            layer, run=run, epoch=epoch, previous=previous["policy"], observed=observed, episodes=episodes, seeds=seeds
        )
    else:
        call = CallInfo(
            role="meta", agent="meta", run=run, epoch=epoch - 1, episode=f"r{run}-policy{epoch}", step="revise"
        )
        revision = await layer.meta.revise(
            previous["policy"], observed, seeds=_attempt_seeds(ctx.scenario.seed, run, epoch, attempts), call=call
        )
        fields = {
            "policy": revision.policy,
            "answer": revision.answer,
            "illegal_answers": revision.illegal_answers,
            "copy_reasks": revision.copy_reasks,
        }
    policy = fields.pop("policy")
    legal = fields.pop("legal", policy is not None)
    policy = policy if policy is not None else previous["policy"]
    record = _policy_record(
        run,
        epoch,
        policy,
        legal=legal,
        evidence=[i.episode for i in observed],
        diff=word_diff(previous["policy"], policy),
        **fields,
    )
    layer.on_policy(record)
    return {"policies": [record]}


async def final(state: ScaiState, runtime: Runtime[SocietyContext]) -> dict[str, Any]:
    """After the last epoch: the final policy proposes `final_proposals` times, on seeded stakes of the game's range.

    A fresh assistant per proposal, as in training; the currency is the run's
    (or drawn per proposal when stakes change every episode). Each run's final
    bin is read from these proposals.
    """
    ctx = runtime.context
    layer = ctx.layer
    assert layer is not None and ctx.scenario.assistant is not None
    scenario, run = ctx.scenario, state["run"]
    policy = state["policies"][-1]
    game = scenario.game
    currency_index = run_currency(scenario, run)

    async def one(k: int) -> dict[str, Any]:
        rng = generator(scenario.seed, run, Branch.REPLAY, k)
        amount = int(rng.integers(game.amount.min, game.amount.max, endpoint=True))
        currency = game.currencies[
            int(rng.integers(len(game.currencies))) if game.stakes == "episode" else currency_index
        ]
        assistant = layer.player({"run": run, "policy": policy["policy"]}, ASSISTANT)
        info = {"run": run, "epoch": policy["epoch"], "episode": f"r{run}-final-{k:03d}"}  # played after that epoch
        proposal, split, _ = await propose_move(
            assistant,
            Stake(amount, currency),
            seed=seed_node(scenario.seed, run, Branch.REPLAY, k),
            info=info,
            max_reasks=game.max_reasks,
            step="final-propose",
        )
        return {
            "run": run,
            "proposal_index": k,
            "policy_version": policy["version"],
            "amount": amount,
            "currency": currency,
            "proposal": proposal,
            "proposal_legal": split is not None,
            "offered_share": None if split is None else split.offered_share(),
        }

    count = ctx.scenario.assistant.final_proposals
    return {"finals": list(await asyncio.gather(*(one(k) for k in range(count))))}
