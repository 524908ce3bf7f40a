"""PSRO with LLM-proposed instructions (the paper's Section 4, Algorithm 1).

Each iteration: solve the meta-game over the current instruction sets (every
player follows one fixed instruction; payoffs exact on the expanded tree)
with the meta-solver; then, for each growing player, the LLM proposes
`candidates` new instructions as best-response candidates (a duplicate of
an instruction in the set, or of another candidate, is refused and asked
again with the next seed); each candidate is scored by its exact expected
payoff against the others' current meta-strategies, and the best joins the
set (in a symmetric game, both players' sets, as OpenSpiel's example does).
Every expansion goes through the run's cache, so the instructions already in
the set cost nothing again.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from prompts import render
from sandbox.base.rounding import best as best_of
from sandbox.dialogue.expand import DialogueModels, expand
from sandbox.dialogue.game import DialogueGame
from sandbox.dialogue.meta_games import meta_payoffs, meta_solve, value_against
from sandbox.dialogue.reward import choices
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.llm.wrapper import acall
from sandbox.rules.dialogue import ANY

ONE_WORD = Constraint(
    grammar="root ::= [a-z] [a-z] [a-z] [a-z]? [a-z]? [a-z]? [a-z]? [a-z]? [a-z]? [a-z]? [a-z]? [a-z]?",
    regex=r"[a-z]{3,12}",
)


@dataclass
class PSROResult:
    """What PSRO did: the meta-strategy per iteration, every candidate and its fate."""

    instructions: list[list[str]]
    meta: list[dict[str, Any]] = field(default_factory=list)  # iteration, player, instruction, probability
    candidates: list[dict[str, Any]] = field(default_factory=list)  # iteration, player, candidate, status, score


async def propose(
    model: BaseChatModel,
    game: DialogueGame,
    player: int,
    existing: list[str],
    count: int,
    seeds: list[int],
    *,
    options: tuple[str, ...] | None,
    iteration: int,
    refused: list[dict[str, Any]],
) -> list[str]:
    """Up to `count` new instructions for `player`, asked one seed at a time; duplicates are refused (recorded)."""
    found: list[str] = []
    taken = {i.lower() for i in existing} | {ANY}
    for seed in seeds:
        if len(found) == count:
            break
        free = None if options is None else [o for o in options if o.lower() not in taken]
        if free is not None and not free:
            break
        constraint = ONE_WORD if free is None else choices(free)
        prompt = render(
            "dialogue/propose_instruction.j2",
            domain=game.domain.name,
            existing=existing,
            player=game.setups[0].players[player],
            choices=free,
        )
        answer = await acall(
            model,
            [HumanMessage(prompt)],
            seed=seed,
            max_tokens=8,
            constraint=constraint,
            call=CallInfo(role="players", agent="psro", episode=f"{iteration}/{player}/{seed}", step="propose"),
        )
        said = str(answer.content).strip().strip(".")
        word = next((o for o in free if o.lower() == said.lower()), "") if free is not None else said.lower()
        if not word or (free is None and not re.fullmatch(ONE_WORD.regex or "", word)):
            refused.append(
                {"iteration": iteration, "player": player, "candidate": said[:40], "status": "illegal", "score": None}
            )
            continue
        if word.lower() in taken:
            refused.append(
                {"iteration": iteration, "player": player, "candidate": word, "status": "duplicate", "score": None}
            )
            continue
        taken.add(word.lower())
        found.append(word)
    return found


async def run_psro(
    game: DialogueGame,
    models: DialogueModels,
    proposer: BaseChatModel,
    *,
    iterations: int,
    candidates: int,
    solver: str,
    seeds: Callable[[int, int], list[int]],
    shared: bool,
    options: tuple[str, ...] | None = None,
    on_iteration: Callable[[int], None] | None = None,
    solver_options: dict[str, Any] | None = None,
) -> PSROResult:
    """Grow the instruction sets for `iterations` iterations; see the module docstring.

    Args:
        game: The game with its initial instruction sets.
        models: The LLM calls of expansions (the run's stack and cache).
        proposer: The model that proposes new instructions.
        iterations: PSRO iterations (each adds at most one instruction per growing player).
        candidates: Candidates proposed per player and iteration.
        solver: The meta-solver, `prd` or `nash_bargaining`.
        seeds: `seeds(iteration, player)` -> the proposal seeds to try in order.
        shared: One instruction set for every player (a symmetric game): a candidate is scored for player 0 and
            joins every player's set.
        options: The closed set of instructions a domain admits (the days of the week), or None for any word.
    """
    sets = [list(own) for own in game.instructions]
    result = PSROResult(instructions=sets)
    players = game.num_players
    growing = [0] if shared else list(range(players))
    for iteration in range(iterations + 1):
        current = dataclasses.replace(game, instructions=tuple(tuple(s) for s in sets))
        payoffs = meta_payoffs(await expand(current, models))
        strategies = meta_solve(payoffs, solver, **(solver_options or {}))
        for p in range(players):
            values = value_against(payoffs, p, strategies)
            for instruction, probability, value in zip(sets[p], strategies[p], values):
                result.meta.append(
                    {
                        "iteration": iteration,
                        "player": p,
                        "instruction": instruction,
                        "probability": float(probability),
                        "value": float(value),
                    }
                )
        if on_iteration:
            on_iteration(iteration)
        if iteration == iterations:
            break
        for p in growing:
            refused: list[dict[str, Any]] = []
            new = await propose(
                proposer,
                current,
                p,
                sets[p],
                candidates,
                seeds(iteration, p),
                options=options,
                iteration=iteration,
                refused=refused,
            )
            result.candidates.extend(refused)
            if not new:
                continue
            trial_sets = [list(s) for s in sets]
            trial_sets[p] = sets[p] + new  # only p's set grows while its candidates are scored
            trial = dataclasses.replace(game, instructions=tuple(tuple(s) for s in trial_sets))
            trial_payoffs = meta_payoffs(await expand(trial, models))
            # the others keep this iteration's meta-strategies (nothing on an instruction added since)
            others = [np.pad(s, (0, len(trial_sets[q]) - len(s))) for q, s in enumerate(strategies)]
            values = value_against(trial_payoffs, p, others)
            scores = {c: float(values[len(sets[p]) + k]) for k, c in enumerate(new)}
            best = new[best_of([scores[c] for c in new])]  # the first of those tied but for rounding
            for c in new:
                result.candidates.append(
                    {
                        "iteration": iteration,
                        "player": p,
                        "candidate": c,
                        "status": "added" if c == best else "scored",
                        "score": scores[c],
                    }
                )
            for q in range(players) if shared else (p,):
                sets[q].append(best)
    return result
