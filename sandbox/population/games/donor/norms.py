"""How the agents of a donor-game population revise their strategies (norm texts) after a generation's play.

Rules (`revision.rule`), each agent's new strategy drawn from the strategies
and scores at the generation's end (a synchronous update):

* `select`: Vallinder & Hughes' cultural evolution, in `donor_run` (the new
  agents write their strategies at the next generation's start);
* `reflect`: each agent's own MetaLM reads what happened to it (its moves,
  what it received, its score against the others') and rewrites its strategy
  (`prompts/population/donor/reflect.j2`): SCAI's verbal reinforcement,
  applied to every member;
* `imitate`: each agent draws a neighbour and, with the Fermi probability
  1/(1+exp(-beta (score_neighbour - score_own))), copies its strategy
  (`adopt: copy`) or has the LLM merge the two (`adopt: merge`, `merge.j2`);
* `mutate` (and `mutation` after reflect or imitate): with probability
  `mutation` an agent writes a new strategy freely, as in the first
  generation (`strategy.j2`); a mutant skips the rule.

Fixed members (zealots) never revise. Every new text is a norm *version*
with an id, its author, its parents' ids (lineage) and the evidence shown
(`norms.csv`); every revision is a row of `revisions.csv`. With
`revision.check`, as CRSEC evaluates a norm before it is adopted, a text
without the strategy sentence (or with fewer than two words after it) is
rejected (the agent keeps its norm) and a
text equal to a known norm, case and spaces aside, is that norm.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field

import numpy as np

from prompts import round_units
from sandbox.core.steps import StateEdit, set_path
from sandbox.population.games.donor.players import Players, WrittenStrategy
from sandbox.population.games.donor.records import DonorAgent, DonorPopulation, NormBookState
from sandbox.population.games.donor.rules import STRATEGY_START, DonorRecord, DonorRules
from sandbox.population.network import Neighbours, random_neighbour
from sandbox.population.revision.rules import fermi
from sandbox.population.revision.texts import (
    NormRow,
    RevisionRow,
    Step,
    Written,
    derived_field,
    given_norm,
    revise_texts,
)
from sandbox.population.settings import Revision

__all__ = ["NormBook", "edit_strategy", "evidence_text", "revise_norms"]


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _empty(text: str) -> bool:
    """Whether the strategy sentence says nothing: fewer than two words between "My strategy will be" and the end of
    its sentence (the embedded model wrote "My strategy will be ." alone, and once followed by a critique)."""
    body = re.split(re.escape(STRATEGY_START), text, maxsplit=1, flags=re.IGNORECASE)[-1]
    sentence = re.split(r"(?<!\d)[.!?](?:\s|$)", body.strip(), maxsplit=1)[0]  # "1. Give half" ends nothing
    return len(re.findall(r"\w+", sentence)) < 2


@dataclass
class NormBook:
    """The run's norm versions: the next id and, with `check`, each known norm's wording by id (for
    de-duplication; `known` indexes them by their text's key)."""

    check: bool = False
    next_id: int = 0
    texts: dict[str, str] = field(default_factory=dict)  # with check: each id (as text) -> the norm's own wording
    known: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.known = {_key(text): int(norm) for norm, text in self.texts.items()}

    def add(self, text: str, found: bool) -> tuple[int | None, str]:
        """(norm id, outcome): outcome `new` (a new id), `duplicate` (a known norm's id) or `rejected` (None)."""
        if self.check and (not found or _empty(text)):
            return None, "rejected"  # no strategy sentence, or nothing in it
        if self.check and _key(text) in self.known:
            return self.known[_key(text)], "duplicate"
        norm, self.next_id = self.next_id, self.next_id + 1
        if self.check:
            self.known[_key(text)] = norm
            self.texts[str(norm)] = text
        return norm, "new"

    def text(self, norm: int | None, text: str) -> str:
        """The wording an agent holding `norm` follows: the norm's first wording (a duplicate takes it)."""
        return self.texts.get(str(norm), text)

    def state(self) -> NormBookState:
        return {"check": self.check, "next_id": self.next_id, "texts": self.texts}


def evidence_text(
    agent: int,
    records: Sequence[DonorRecord],
    names: Sequence[str],
    finals: Sequence[np.ndarray],
    scores: np.ndarray,
    rules: DonorRules,
) -> str:
    """What happened to `agent` in a generation, in words: each of its moves and each gift or punishment it
    received (what the donor spent and what it gained or lost by it), game by game, then its final resources and
    its score against the population's."""
    lines = []
    for h in records:
        where = f"Game {h.game + 1}, round {h.round + 1}:"
        if h.donor == agent:
            other = names[h.recipient]
            if not h.valid:
                lines.append(f"{where} you made no valid move towards {other}.")
            elif h.action == "donate":
                share = "" if h.donor_before <= 0 else f" ({round_units(100 * h.share)}%)"
                lines.append(
                    f"{where} you gave {round_units(h.amount or 0.0)} of your {round_units(h.donor_before)} units"
                    f"{share} to {other}."
                )
            else:
                lines.append(f"{where} you spent {round_units(h.amount or 0.0)} units punishing {other}.")
        elif h.recipient == agent and h.valid and h.amount:
            other = names[h.donor]
            if h.action == "donate":
                lines.append(
                    f"{where} {other} gave {round_units(h.amount)} units, so you received "
                    f"{round_units(rules.multiplier * h.amount)}."
                )
            else:
                lost = min(h.recipient_before, rules.punishment_loss * h.amount)
                lines.append(
                    f"{where} {other} spent {round_units(h.amount)} units punishing you, so you lost "
                    f"{round_units(lost)}."
                )
    games = ", ".join(f"game {k + 1}: {round_units(float(f[agent]))}" for k, f in enumerate(finals))
    rank = 1 + int((scores > scores[agent]).sum())
    lines.append(
        f"Your final resources: {games}. Your score (their mean) is {round_units(float(scores[agent]))}; "
        f"the average score was {round_units(float(scores.mean()))} and the best "
        f"{round_units(float(scores.max()))}. You ranked {rank} of {len(scores)}."
    )
    return "\n".join(lines)


async def revise_norms(
    players: Players,
    agents: list[DonorAgent],
    g: int,
    records: Sequence[DonorRecord],
    finals: Sequence[np.ndarray],
    scores: np.ndarray,
    neighbours: Neighbours,
    book: NormBook,
    revision: Revision,
    rng: np.random.Generator,
    rules: DonorRules,
) -> tuple[list[DonorAgent], list[NormRow], list[RevisionRow]]:
    """The agents after generation `g`'s revision by reflect, imitate or mutate, with the new norms' rows (for
    `norms.csv`, generation g + 1: where they are first played) and the revisions' rows: each agent's step planned
    here, the calls gathered and the texts applied by `sandbox.population.revision.texts.revise_texts`."""
    n = len(agents)
    names = [a["name"] for a in agents]
    strategies = [a["strategy"] or "" for a in agents]  # every agent's, written before the play
    free = np.array([not a["fixed"] for a in agents])
    mutants = free & (rng.random(n) < revision.mutation) if revision.mutation else np.zeros(n, dtype=bool)
    partners = random_neighbour(neighbours, rng)
    chance = fermi(revision.beta, scores[partners] - scores)
    adopt = rng.random(n) < chance

    async def written(call: Awaitable[WrittenStrategy]) -> Written:
        answer = await call
        return Written(answer["strategy"], answer["found"], answer["justification"], answer.get("evidence", ""))

    steps: dict[int, Step] = {}
    for i in map(int, np.flatnonzero(free)):
        old = str(agents[i]["norm"])
        if mutants[i]:
            steps[i] = Step("mutate", "", revision.mutation, ask=written(players.rewrite(names[i], g, i)))
        elif revision.rule == "reflect":
            evidence = evidence_text(i, records, names, finals, scores, rules)
            reflection = players.reflect(names[i], strategies[i], g, i, evidence)
            steps[i] = Step("reflect", "", 1.0, ask=written(reflection), parents=old)
        elif revision.rule == "mutate":  # not drawn this time: recorded as kept
            steps[i] = Step("mutate", "", revision.mutation)
        elif revision.rule == "imitate":
            j = int(partners[i])
            probability = round(float(chance[i]), 6)
            if adopt[i] and revision.adopt == "merge" and agents[j]["norm"] != agents[i]["norm"]:
                mine, theirs = (strategies[i], float(scores[i])), (strategies[j], float(scores[j]))
                merged = written(players.merge(names[i], *mine, names[j], *theirs, g, i))
                parents = f"{old};{agents[j]['norm']}"
                step = Step("imitate", names[j], probability, ask=merged, written_as="merge", parents=parents)
            else:
                step = Step("imitate", names[j], probability, copies=j if adopt[i] else None)
            steps[i] = step
    return await revise_texts(agents, g, steps, book)


def edit_strategy(population: DonorPopulation, name: str, value: object, generation: int) -> StateEdit:
    """A fork's state edit of a donor-game population (`sandbox fork --set state.NAME=VALUE`):
    `agents.I.strategy=TEXT` gives agent I that text as its strategy, a norm version of its own (a new norm, with its
    row in norms.csv written at the fork's generation under the rule `fork`, or the known norm it duplicates); what
    follows the texts (an agent's norm id and `found`, the norm book) is refused; any other path is set as it is, to
    a value of the same type."""
    parts = name.split(".")
    if derived_field(name) or (len(parts) == 3 and parts[0] == "agents" and parts[2] == "found"):
        raise ValueError(derived_field(name) or f"{name}: whether its text holds the strategy sentence, read from it")
    if parts[0] == "norms":
        raise ValueError(f"{name}: the run's norm book, which follows the agents' texts (state.agents.I.strategy=TEXT)")
    if len(parts) != 3 or parts[0] != "agents" or parts[2] != "strategy":
        return StateEdit({"agents": set_path(population, name, value, same_type=True)})
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name}: a strategy is a text")
    agents = list(population["agents"])
    if not parts[1].isdigit() or int(parts[1]) >= len(agents):
        raise ValueError(f"{name}: {parts[1]} is not an agent's index (0 to {len(agents) - 1})")
    book = NormBook(**copy.deepcopy(population["norms"]))
    norm, outcome = book.add(value, True)
    if norm is None:
        raise ValueError(f"{name}: the norm check rejects {value!r} (no strategy in it)")
    agent = agents[int(parts[1])]
    agents[int(parts[1])] = {**agent, "strategy": book.text(norm, value), "norm": norm, "found": True}
    row = given_norm(generation, norm, agent["name"], "fork", value)
    following: DonorPopulation = {**population, "agents": agents, "norms": book.state()}
    return StateEdit({"agents": following}, {"norms.csv": [row]} if outcome == "new" else {})
