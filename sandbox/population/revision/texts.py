"""One revision step for populations whose members follow principle texts (the ultimatum and matrix games with LLM
members).

Each agent that is not fixed either asks a model for its next principle (the
assistant always; every member under `reflect`) or, under `imitate`, compares
itself with a random neighbour and copies its principle with the Fermi
probability 1/(1+exp(-beta (score_neighbour - score_own))). A model's answer
that is not a usable principle is recorded as `illegal` and the principle
stays; an answer equal to the old principle is `same`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import numpy as np

from sandbox.core.steps import StateEdit, set_path
from sandbox.population.network import Neighbours, random_neighbour
from sandbox.population.revision.rules import fermi

__all__ = ["REVISIONS_COLUMNS", "derived_field", "edit_principle", "first_principles", "revise_principles"]

REVISIONS_COLUMNS = ["generation", "agent", "name", "rule", "partner", "probability", "outcome", "old_norm", "new_norm"]


def first_principles(
    neighbours: Neighbours,
    start: tuple[list[dict[str, Any]], list[list[Any]]],
) -> tuple[dict[str, Any], dict[str, list[list[Any]]]]:
    """A new run's population (the agents `start` gives, and the next norm id) and its first rows: the network in
    `edges.csv`, the first principles (`start`'s rows) in `norms.csv`."""
    agents, first = start
    edges = [] if neighbours.edges is None else neighbours.edges.tolist()
    return {"agents": agents, "next_id": len(first)}, {"edges.csv": edges, "norms.csv": first}


async def revise_principles(
    agents: list[dict[str, Any]],
    g: int,
    scores: np.ndarray,
    neighbours: Neighbours,
    *,
    rule: str,
    beta: float,
    rng: np.random.Generator,
    ask: Callable[[int], Awaitable[Any] | None],
    evidence: Callable[[int], str],
    next_id: int,
) -> tuple[list[dict[str, Any]], list[list[Any]], list[list[Any]], int]:
    """The agents after generation `g`'s revision, the new norms' rows (`norms.csv`, first played in g + 1), the
    revisions' rows (`revisions.csv`) and the next norm id.

    `ask(i)` is the call that writes agent i's next principle (an object with `policy`, None when illegal, and
    `answer`), or None where the agent does not ask; `evidence(i)` says what it was shown. The neighbour draws and
    the Fermi draws are made for every agent, in order, so the draws do not depend on who asks."""
    n = len(agents)
    partners = random_neighbour(neighbours, rng)
    chance = fermi(beta, np.nan_to_num(scores[partners] - scores))
    adopt = rng.random(n) < chance
    asks: dict[int, Awaitable[Any]] = {}
    plan: dict[int, tuple[str, str, float]] = {}
    for i, agent in enumerate(agents):
        if agent["fixed"]:
            continue
        call = ask(i)
        if call is not None:
            plan[i], asks[i] = (agent["kind"] if agent["kind"] == "assistant" else rule, "", 1.0), call
        else:
            plan[i] = ("imitate", agents[int(partners[i])]["name"], round(float(chance[i]), 6))
    answers = dict(zip(asks, await asyncio.gather(*asks.values())))
    following = [dict(a) for a in agents]
    norm_rows, revision_rows = [], []
    for i, (how, partner, probability) in sorted(plan.items()):
        old = agents[i]["norm"]
        if i in answers:
            written = answers[i]
            if written.policy is None:
                outcome = "illegal"
            elif written.policy.strip() == agents[i]["strategy"].strip():
                outcome = "same"
            else:
                following[i].update(norm=next_id, strategy=written.policy)
                norm_rows.append(
                    [
                        g + 1,
                        next_id,
                        agents[i]["name"],
                        how,
                        written.policy,
                        True,
                        str(old),
                        written.answer,
                        evidence(i),
                    ]
                )
                next_id, outcome = next_id + 1, "new"
        elif adopt[i]:
            j = int(partners[i])
            following[i].update(norm=agents[j]["norm"], strategy=agents[j]["strategy"])
            outcome = "copied" if agents[j]["norm"] != old else "same"
        else:
            outcome = "kept"
        revision_rows.append([g, i, agents[i]["name"], how, partner, probability, outcome, old, following[i]["norm"]])
    return following, norm_rows, revision_rows, next_id


def derived_field(name: str) -> str | None:
    """Why the state path `name` (of a population whose agents follow norm texts) cannot be set by a fork's state
    edit, or None: an agent's `norm` is the id of its text and the next id is the run's count of texts, both set with
    the text (`agents.I.strategy=TEXT`)."""
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == "agents" and parts[2] == "norm":
        return (
            f"{name}: the id of agent {parts[1]}'s norm, which follows its text; set state.agents.{parts[1]}.strategy"
            "=TEXT (a norm of its own) instead"
        )
    if name == "next_id":
        return "next_id: the id the run's next norm takes; set state.agents.I.strategy=TEXT (a norm of its own) instead"
    return None


def edit_principle(population: Mapping[str, Any], name: str, value: Any, generation: int) -> StateEdit:
    """A fork's state edit of a population whose members follow principle texts (`sandbox fork --set
    state.NAME=VALUE`): `agents.I.strategy=TEXT` gives agent I that text as a norm of its own (the next id, with its
    row in norms.csv written at the fork's generation under the rule `fork`); an agent's norm id and the next id
    follow the texts and are refused (`derived_field`); any other path is set as it is, to a value of the same
    type."""
    refused = derived_field(name)
    if refused:
        raise ValueError(refused)
    parts = name.split(".")
    if len(parts) != 3 or parts[0] != "agents" or parts[2] != "strategy":
        return StateEdit({"agents": set_path(population, name, value, same_type=True)})
    if not isinstance(value, str) or len(value.strip()) < 12:
        raise ValueError(f"{name}: a principle is a text of 12 characters or more")
    agents = [dict(agent) for agent in population["agents"]]
    if not parts[1].isdigit() or int(parts[1]) >= len(agents):
        raise ValueError(f"{name}: {parts[1]} is not an agent's index (0 to {len(agents) - 1})")
    i, norm = int(parts[1]), int(population["next_id"])
    agents[i] = {**agents[i], "strategy": value, "norm": norm}
    row = [generation, norm, agents[i]["name"], "fork", value, True, "", "", ""]
    return StateEdit({"agents": {**population, "agents": agents, "next_id": norm + 1}}, {"norms.csv": [row]})
