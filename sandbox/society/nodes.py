"""The nodes of a society run: pair agents, play a batch of episodes, score the epoch.

Each node is small and reads its fixed inputs from the runtime context.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from sandbox.base.seeding import Branch, generator, seed_node
from sandbox.rules.ultimatum import Stake
from sandbox.rules.ultimatum_episode import play_ultimatum
from sandbox.society.context import SocietyContext
from sandbox.society.state import SocietyState
from societies.network import match


def pair(state: dict[str, Any], runtime: Runtime[SocietyContext]) -> dict[str, Any]:
    """Draw the epoch's pairs (users along the network, then the layer's, such as SCAI's assistant) and stakes.

    The state is typed as a plain dict: LangGraph hands a node only the keys of
    the schema its first parameter names, and a layer's keys (SCAI's policies)
    must reach `task_fields`.
    """
    ctx = runtime.context
    scenario, run, epoch = ctx.scenario, state["run"], state["epoch"]
    rng = generator(scenario.seed, run, Branch.EPOCH, epoch)
    layer = ctx.layer
    count = layer.user_pairs() if layer is not None else scenario.interactions_per_epoch
    pairs: list[tuple[int | str, int | str, str]] = []
    if count != 0:
        pairs += [
            (p.first, p.second, "user-user") for p in match(ctx.networks[run], scenario.society.matching, count, rng)
        ]
    if layer is not None:
        pairs += layer.pairs(run, rng)
    amounts, currencies = draw_stakes(scenario, run, epoch, rng, len(pairs))
    game = scenario.game
    fields = layer.task_fields(state) if layer is not None else {}
    tasks = [
        {
            "run": run,
            "epoch": epoch,
            "index": index,
            "interaction": interaction,
            "proposer": proposer,
            "responder": responder,
            "amount": int(amount),
            "currency": game.currencies[int(currency)],
            **fields,
        }
        for index, ((proposer, responder, interaction), amount, currency) in enumerate(zip(pairs, amounts, currencies))
    ]
    ctx.on_epoch_start(run, epoch, len(tasks))
    return {"tasks": tasks}


def run_currency(scenario: Any, run: int) -> int:
    """The index of the run's currency when stakes are drawn per epoch or per run (the stake branch's first draw)."""
    return int(generator(scenario.seed, run, Branch.STAKE).integers(len(scenario.game.currencies)))


def draw_stakes(scenario: Any, run: int, epoch: int, rng: Any, count: int) -> tuple[list[int], list[int]]:
    """The amount and currency index of each of `count` episodes, as `game.stakes` says.

    Per episode they come from the epoch's generator after the pairs (as they
    always did); per epoch or run from their own branch, so the pairs'
    draws do not move them.
    """
    game = scenario.game
    if game.stakes == "episode":
        amounts = rng.integers(game.amount.min, game.amount.max, endpoint=True, size=count)
        return [int(a) for a in amounts], [int(c) for c in rng.integers(len(game.currencies), size=count)]
    per_run = generator(scenario.seed, run, Branch.STAKE)
    currency = int(per_run.integers(len(game.currencies)))  # run_currency's draw
    source = per_run if game.stakes == "run" else generator(scenario.seed, run, Branch.STAKE, epoch)
    amount = int(source.integers(game.amount.min, game.amount.max, endpoint=True))
    return [amount] * count, [currency] * count


# How an epoch's episodes are split into play tasks: batches of at least MIN_BATCH episodes,
# at most MAX_PLAY_TASKS tasks (episodes inside a task are played concurrently, so the
# split does not change the epoch's critical path). Every task costs LangGraph bookkeeping
# and a checkpoint write, which for small epochs (a SCAI epoch has 10 episodes) cost more
# than the episodes' own framework time; a 10,000-user epoch is 64 batches. A killed run
# redoes the unfinished batches, and their finished calls come back from the response cache.
MIN_BATCH = 16
MAX_PLAY_TASKS = 64


def fan_out(state: SocietyState) -> list[Send]:
    """Map step: `play` tasks, each a batch of the epoch's episodes."""
    tasks = state["tasks"]
    size = max(MIN_BATCH, math.ceil(len(tasks) / MAX_PLAY_TASKS))
    return [Send("play", {"batch": tasks[i : i + size]}) for i in range(0, len(tasks), size)]


async def play(batch: dict[str, Any], runtime: Runtime[SocietyContext]) -> dict[str, Any]:
    """Play a batch of episodes concurrently; their records are appended to the state.

    When an episode fails (a budget refuses its call), the others still end before the step fails with the first
    failure: their calls in flight finish (and are cached), and none outlives the run's transcript, which records
    every call made."""
    outcomes = await asyncio.gather(
        *(_play_one(task, runtime.context) for task in batch["batch"]), return_exceptions=True
    )
    failures = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    if failures:
        raise failures[0]
    return {"episodes": list(outcomes)}


async def _play_one(task: dict[str, Any], ctx: SocietyContext) -> dict[str, Any]:
    run, epoch, index = task["run"], task["epoch"], task["index"]
    proposer, responder = ctx.player(task, task["proposer"]), ctx.player(task, task["responder"])
    record = await play_ultimatum(
        proposer,
        responder,
        Stake(task["amount"], task["currency"]),
        seed=seed_node(ctx.scenario.seed, run, Branch.EPISODE, epoch, index),
        info={
            "run": run,
            "epoch": epoch,
            "episode": f"r{run}-e{epoch}-i{index:05d}",
            "index": index,
            "interaction": task.get("interaction", "user-user"),
            "policy_version": task.get("policy_version"),
        },
        max_reasks=ctx.scenario.game.max_reasks,
    )
    who = ctx.profiles.get(run, {})
    for side in ("proposer", "responder") if who else ():
        profile = who.get(record[side], {})
        record[f"{side}_norm"], record[f"{side}_manner"] = profile.get("norm"), profile.get("manner")
    ctx.on_episode(record)
    return record


def score(state: SocietyState) -> dict[str, Any]:
    """Reduce step: summarise the epoch just played and move to the next one."""
    epoch = state["epoch"]
    played = [e for e in state["episodes"] if e["epoch"] == epoch]
    decisions = Counter(e["decision"] for e in played if e["decision"] is not None)
    summary = {
        "run": state["run"],
        "epoch": epoch,
        "episodes": len(played),
        "illegal_proposals": sum(not e["proposal_legal"] for e in played),
        "accepted": decisions["accept"],
        "rejected": decisions["reject"],
    }
    return {"epoch": epoch + 1, "tasks": [], "epoch_scores": [summary]}


def next_step(state: SocietyState) -> Literal["pair", "__end__"]:
    """Router: another epoch, or the end (a layer routes through its own nodes instead)."""
    return "__end__" if state["epoch"] >= state["epochs"] else "pair"
