"""The donor game's agents: the first generation's (`start_agents`), the survivors of a selection (`select`), the
strategies that agents without one write (`write_missing`) and the survivors' lead in donations (`survivor_gap`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from sandbox.base.jobs import gather_jobs, jobs_ahead
from sandbox.population.games.donor.norms import NormBook
from sandbox.population.games.donor.players import Players, Survivor
from sandbox.population.games.donor.records import DonorAgent
from sandbox.population.revision.texts import NormRow, RevisionRow, given_norm
from sandbox.population.settings import LLM, PopulationScenarioSettings, place_members

__all__ = ["select", "start_agents", "survivor_gap", "write_missing"]


def start_agents(scenario: PopulationScenarioSettings, book: NormBook) -> tuple[list[DonorAgent], list[NormRow]]:
    """The first generation's agents, by slot (`place_members`); `llm` members have no strategy yet, a given
    text is norm version of its own (and its `norms.csv` row)."""
    block = scenario.population
    agents: list[DonorAgent] = []
    rows: list[NormRow] = []
    given: dict[str, int | None] = {}
    for slot, m in enumerate(place_members(scenario)):
        member = block.members[int(m)]
        text = None if member.strategy == LLM else member.strategy
        if text is not None and text not in given:
            given[text], outcome = book.add(text, True)
            if outcome == "new":  # with the check, a text differing in case or spaces only is the same norm
                rows.append(given_norm(0, given[text], "", "given", text))
        if text is not None:
            text = book.text(given[member.strategy], text)
        agents.append(
            DonorAgent(
                name=f"1_{slot + 1}",
                born=0,
                fixed=member.fixed,
                strategy=text,
                found=text is not None,
                norm=None if text is None else given[member.strategy],
            )
        )
    return agents, rows


def select(scores: np.ndarray, agents: Sequence[DonorAgent], share: float, rng: np.random.Generator) -> list[int]:
    """The surviving slots: fixed members, then the best scores up to the share; ties fall by a seeded draw (the
    notebook sorted a shuffled list)."""
    keep = max(1, round(len(agents) * share))
    fixed = [i for i, a in enumerate(agents) if a["fixed"]]
    draw = rng.permutation(len(agents))
    level = np.round(scores, 6)  # resources equal but for their last digits tie (sandbox.base.rounding)
    order = [i for i in sorted(range(len(agents)), key=lambda i: (-level[i], draw[i])) if i not in fixed]
    return sorted(fixed + order[: max(0, keep - len(fixed))])


async def write_missing(
    players: Players, agents: list[DonorAgent], g: int, book: NormBook
) -> tuple[list[NormRow], list[RevisionRow]]:
    """Agents without a strategy write one: the first generation's `llm` members from the game's description, the
    new agents of the last selection from the survivors' strategies (with their scores, best first); the norms'
    and the revisions' rows."""
    missing = [i for i, a in enumerate(agents) if a["strategy"] is None]
    if not missing:
        return [], []
    survivors = sorted(
        (
            Survivor(name=a["name"], strategy=a["strategy"], score=a.get("score", math.nan), norm=a["norm"])
            for a in agents
            if a["strategy"] is not None and a.get("survived")
        ),
        key=lambda a: -a["score"],
    )  # best first, as the notebook listed them
    written = await gather_jobs(
        missing,
        lambda i: players.strategy(agents[i]["name"], g, i, survivors),
        limit=jobs_ahead(players.scenario.concurrency),
    )
    parents = ";".join(str(s["norm"]) for s in survivors)
    norm_rows: list[NormRow] = []
    revision_rows: list[RevisionRow] = []
    for i, result in zip(missing, written):
        norm, outcome = book.add(result["strategy"], result["found"])
        if norm is None:  # rejected by the check: a new agent has no norm to keep, so it holds the text unchecked
            norm, outcome = book.next_id, "rejected, kept"
            book.next_id += 1
        agent = agents[i]
        agent["strategy"] = book.text(norm, result["strategy"])
        agent["found"] = result["found"]
        agent["norm"] = norm
        if outcome != "duplicate":
            norm_rows.append(
                NormRow(
                    generation=g,
                    norm=norm,
                    author=agent["name"],
                    rule="inherit" if survivors else "write",
                    strategy=result["strategy"],
                    found=result["found"],
                    parents=parents,
                    justification=result["justification"],
                    evidence="",
                )
            )
        if survivors:
            revision_rows.append(
                RevisionRow(
                    generation=g - 1,
                    agent=i,
                    name=agent["name"],
                    rule="select",
                    partner="",
                    probability="",
                    outcome=outcome,
                    old_norm=agent.pop("replaced_norm", ""),
                    new_norm=norm,
                )
            )
    return norm_rows, revision_rows


def survivor_gap(shares: Sequence[float], survived: Sequence[int]) -> float:
    """The survivors' mean donated share minus the others', over the generation's mean (Vallinder & Hughes' Fig. 6
    last row); NaN when a side has no valid donation or nobody donated."""
    kept = [v for i, v in enumerate(shares) if i in survived and not math.isnan(v)]
    gone = [v for i, v in enumerate(shares) if i not in survived and not math.isnan(v)]
    average = float(np.mean(kept + gone)) if kept + gone else math.nan
    if not kept or not gone or not average:
        return math.nan
    return (float(np.mean(kept)) - float(np.mean(gone))) / average
