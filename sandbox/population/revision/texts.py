"""How agents revise norm texts after a generation's play, for every game whose agents write and follow them (the
donor game's strategies, the principles of the matrix game's LLM members and of the ultimatum game's).

One step, `revise_texts`, in three parts: each agent's revision is planned (`Step`: the rule recorded, the partner
it compared itself with and the probability, the call that writes its next text, or whether it copies its partner);
the calls are gathered concurrently; their texts are applied in the agents' order. A written text becomes a norm of
the run's book (`Book`: a new id, a known norm it duplicates, or rejected), an unusable answer is `illegal` and the
norm stays; a copy is `copied` (or `same`, the partner's norm being its own); an agent that does not revise `kept`.
Each new norm is a row of `norms.csv` (first played in the next generation) and each revision a row of
`revisions.csv`. The games plan their own steps (`revise_principles` below; the donor game's
`sandbox.population.games.donor.norms.revise_norms`) from the Fermi rule's draws
1/(1+exp(-beta (score_neighbour - score_own))) (Szabo & Toke 1998), drawn for every agent in order so that the
draws do not depend on who asks.

The records they share: `NormRow` and `RevisionRow` (a row of `norms.csv` and of `revisions.csv`), and the
population of the games whose members follow principle texts (`PrincipledAgent`, `PrincipledPopulation`,
`PrincipledRevision`: the matrix game's LLM members, the ultimatum game's).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, cast

import numpy as np
from typing_extensions import ReadOnly, TypedDict, TypeVar

from sandbox.core.steps import StateEdit, set_path
from sandbox.population.network import Neighbours, random_neighbour
from sandbox.population.revision.rules import fermi

__all__ = [
    "NORMS_COLUMNS",
    "REVISIONS_COLUMNS",
    "Book",
    "IdBook",
    "NormRow",
    "PrincipledAgent",
    "PrincipledPopulation",
    "PrincipledRevision",
    "RevisionRow",
    "Step",
    "TextAgent",
    "TextPopulation",
    "Written",
    "derived_field",
    "edit_principle",
    "first_principles",
    "first_rows",
    "given_norm",
    "principle_text",
    "revise_principles",
    "revise_texts",
]


class NormRow(TypedDict):
    """A norm version (`norms.csv`): the generation it is first played in, its id, its author, the rule that made
    it, its text, whether the text held the norm's sentence, its parents' ids (`;`), why, and what was shown."""

    generation: int
    norm: int | None
    author: str
    rule: str
    strategy: str
    found: bool
    parents: str
    justification: str
    evidence: str


class RevisionRow(TypedDict):
    """An agent's revision (`revisions.csv`): the generation revised after, the agent, the rule, the partner and the
    probability drawn, the outcome, the old and the new norm id."""

    generation: int
    agent: int
    name: str
    rule: str
    partner: str
    probability: float | str
    outcome: str
    old_norm: int | str | None
    new_norm: int | None


def given_norm(generation: int, norm: int | None, author: str, rule: str, text: str) -> NormRow:
    """The row of a norm that no call wrote (a scenario's, or a fork's): its text as given, nothing shown."""
    return NormRow(
        generation=generation,
        norm=norm,
        author=author,
        rule=rule,
        strategy=text,
        found=True,
        parents="",
        justification="",
        evidence="",
    )


NORMS_COLUMNS = tuple(NormRow.__annotations__)
REVISIONS_COLUMNS = tuple(RevisionRow.__annotations__)


class TextAgent(TypedDict):
    """What `revise_texts` reads of an agent who follows a norm text (a game's agent holds more)."""

    name: ReadOnly[str]
    norm: ReadOnly[int | None]
    strategy: ReadOnly[str | None]


class TextPopulation(TypedDict):
    """What `edit_principle` reads of a population whose agents follow norm texts (a game's holds more)."""

    agents: ReadOnly[Sequence[TextAgent]]
    next_id: ReadOnly[int]


class PrincipledAgent(TypedDict):
    """A member who follows a principle text (the matrix game's LLM members, the ultimatum game's): its name, its
    kind (`member`, `fixed`, `assistant`), whether it never revises, its norm's id and the text."""

    name: str
    kind: Literal["member", "fixed", "assistant"]
    fixed: bool
    norm: int
    strategy: str


# a game's principled member (`PrincipledAgent`, or a record that adds to it: the ultimatum game's)
P = TypeVar("P", bound=PrincipledAgent, default=PrincipledAgent)


class PrincipledPopulation(TypedDict, Generic[P]):
    """Their population: the agents, and the id the run's next norm takes."""

    agents: list[P]
    next_id: int


class PrincipledRevision(TypedDict, Generic[P]):
    """A generation's revision of them: the next agents, the new norms' and the revisions' rows, the next id."""

    agents: list[P]
    norms: list[NormRow]
    revisions: list[RevisionRow]
    next_id: int


A = TypeVar("A", bound=TextAgent)


def first_rows(neighbours: Neighbours, first: list[NormRow]) -> dict[str, list[NormRow] | np.ndarray]:
    """A new run's first rows of a population whose members follow principle texts: the network in `edges.csv`, the
    first principles (`first`) in `norms.csv`."""
    edges = np.zeros((0, 2), dtype=np.int64) if neighbours.edges is None else neighbours.edges
    return {"edges.csv": edges, "norms.csv": first}


def first_principles(
    neighbours: Neighbours, start: tuple[list[P], list[NormRow]]
) -> tuple[PrincipledPopulation[P], dict[str, list[NormRow] | np.ndarray]]:
    """A new run's population (the agents `start` gives, and the next norm id) and its first rows (`first_rows`)."""
    agents, first = start
    return {"agents": agents, "next_id": len(first)}, first_rows(neighbours, first)


@dataclass(frozen=True)
class Written:
    """What an agent's call wrote: its norm's text (None: no usable text, an illegal answer), whether the text held
    the norm's sentence, why (the justification, or the whole answer), and what the agent was shown."""

    text: str | None
    found: bool = True
    reason: str = ""
    evidence: str = ""


@dataclass(frozen=True)
class Step:
    """One agent's revision, planned: the rule its revision row records, the partner it compared itself with and the
    probability it drew, the call that writes its next text (None: it asks nothing), whether it copies the partner
    `copies` (an agent's index) instead, and for a written text the rule and parents its norm row records."""

    rule: str
    partner: str = ""
    probability: float | str = 1.0
    ask: Awaitable[Written] | None = None
    copies: int | None = None
    written_as: str = ""
    parents: str = ""


class Book(Protocol):
    """The run's norms, by id: `add(text, found)` is (its id, or None where the text is rejected; the outcome
    `new`, `duplicate` or `rejected`), `text(norm, text)` the wording an agent holding it follows."""

    def add(self, text: str, found: bool) -> tuple[int | None, str]: ...

    def text(self, norm: int | None, text: str) -> str: ...


class IdBook:
    """A book that gives every written text a new id (no check, no de-duplication): the principles' games."""

    def __init__(self, next_id: int) -> None:
        self.next_id = next_id

    def add(self, text: str, found: bool) -> tuple[int | None, str]:
        norm, self.next_id = self.next_id, self.next_id + 1
        return norm, "new"

    def text(self, norm: int | None, text: str) -> str:
        return text


async def revise_texts(
    agents: Sequence[A], g: int, steps: Mapping[int, Step], book: Book, *, same: bool = False
) -> tuple[list[A], list[NormRow], list[RevisionRow]]:
    """The agents after generation `g`'s revision by `steps` (one for each agent that revises, by index), the new
    norms' rows (`norms.csv`, first played in g + 1) and the revisions' rows (`revisions.csv`). `same`: a text
    equal to the agent's own (spaces aside) is `same`, not a new norm. The steps' calls are gathered concurrently."""
    asks = {i: step.ask for i, step in steps.items() if step.ask is not None}
    answers: dict[int, Written] = dict(zip(asks, await asyncio.gather(*asks.values())))
    following = list(agents)
    norm_rows: list[NormRow] = []
    revision_rows: list[RevisionRow] = []
    for i, step in sorted(steps.items()):
        agent, old = agents[i], agents[i]["norm"]
        if i in answers:
            written = answers[i]
            if written.text is None:
                outcome = "illegal"
            elif same and written.text.strip() == (agent["strategy"] or "").strip():
                outcome = "same"
            else:
                norm, outcome = book.add(written.text, written.found)
                if norm is not None:
                    found = {"found": written.found} if "found" in agent else {}
                    following[i] = cast(A, {**agent, "norm": norm, "strategy": book.text(norm, written.text), **found})
                if outcome == "new":
                    norm_rows.append(
                        NormRow(
                            generation=g + 1,
                            norm=norm,
                            author=agent["name"],
                            rule=step.written_as or step.rule,
                            strategy=written.text,
                            found=written.found,
                            parents=step.parents,
                            justification=written.reason,
                            evidence=written.evidence,
                        )
                    )
        elif step.copies is not None:
            partner = agents[step.copies]
            copied = {key: value for key, value in partner.items() if key in ("norm", "strategy", "found")}
            following[i] = cast(A, {**agent, **copied})
            outcome = "copied" if partner["norm"] != old else "same"
        else:
            outcome = "kept"
        revision_rows.append(
            RevisionRow(
                generation=g,
                agent=i,
                name=agent["name"],
                rule=step.rule,
                partner=step.partner,
                probability=step.probability,
                outcome=outcome,
                old_norm=old,
                new_norm=following[i]["norm"],
            )
        )
    return following, norm_rows, revision_rows


class Reflection(Protocol):
    """A member's reflection: its next principle (None: illegal) and its whole answer."""

    @property
    def policy(self) -> str | None: ...

    @property
    def answer(self) -> str: ...


async def revise_principles(
    agents: list[P],
    g: int,
    scores: np.ndarray,
    neighbours: Neighbours,
    *,
    rule: str,
    beta: float,
    rng: np.random.Generator,
    ask: Callable[[int], Awaitable[Reflection] | None],
    evidence: Callable[[int], str],
    next_id: int,
) -> tuple[list[P], list[NormRow], list[RevisionRow], int]:
    """The revision of members who follow principle texts (the matrix game's LLM members, the ultimatum game's): the
    agents after generation `g`'s revision, the new norms' rows, the revisions' rows and the next norm id.

    Each agent that is not fixed either asks a model for its next principle (`ask(i)`: the call, an object with
    `policy`, None when illegal, and `answer`; the assistant always, every member under `reflect`) or, under
    `imitate`, copies a random neighbour's principle with the Fermi probability; `evidence(i)` says what it was
    shown. A principle equal to the old one is `same`."""
    n = len(agents)
    partners = random_neighbour(neighbours, rng)
    chance = fermi(beta, np.nan_to_num(scores[partners] - scores))
    adopt = rng.random(n) < chance

    async def written(call: Awaitable[Reflection], i: int) -> Written:
        answer = await call
        return Written(answer.policy, True, answer.answer, evidence(i))

    steps: dict[int, Step] = {}
    for i, agent in enumerate(agents):
        if agent["fixed"]:
            continue
        call = ask(i)
        if call is not None:
            how = agent["kind"] if agent["kind"] == "assistant" else rule
            steps[i] = Step(how, ask=written(call, i), parents=str(agent["norm"]))
        else:
            j = int(partners[i])
            steps[i] = Step("imitate", agents[j]["name"], round(float(chance[i]), 6), copies=j if adopt[i] else None)
    book = IdBook(next_id)
    following, norm_rows, revision_rows = await revise_texts(agents, g, steps, book, same=True)
    return following, norm_rows, revision_rows, book.next_id


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


def principle_text(name: str, value: object) -> str:
    """`value` as the principle a fork's state edit `name` gives an agent: a text of 12 characters or more, else a
    `ValueError` naming `name`."""
    if not isinstance(value, str) or len(value.strip()) < 12:
        raise ValueError(f"{name}: a principle is a text of 12 characters or more")
    return value


def edit_principle(population: TextPopulation, name: str, value: object, generation: int) -> StateEdit:
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
    value = principle_text(name, value)
    agents = list(population["agents"])
    if not parts[1].isdigit() or int(parts[1]) >= len(agents):
        raise ValueError(f"{name}: {parts[1]} is not an agent's index (0 to {len(agents) - 1})")
    i, norm = int(parts[1]), int(population["next_id"])
    agents[i] = {**agents[i], "strategy": value, "norm": norm}
    row = given_norm(generation, norm, agents[i]["name"], "fork", value)
    return StateEdit({"agents": {**population, "agents": agents, "next_id": norm + 1}}, {"norms.csv": [row]})
