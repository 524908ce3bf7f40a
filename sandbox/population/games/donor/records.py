"""The donor game's records: its state between the engine's steps (the population, the pairings, what the play gave,
the scores, the revision), each a plain `TypedDict` the checkpoint holds, and its tables' rows, from which the tables
take their headers (`COLUMNS`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import NotRequired, cast

from typing_extensions import TypedDict

from sandbox.population.games.donor.fidelity import FIDELITY, FIDELITY_COLUMNS, FidelityRow
from sandbox.population.games.donor.rules import Action, DonorRecord
from sandbox.population.revision.texts import NORMS_COLUMNS, REVISIONS_COLUMNS, NormRow, RevisionRow

__all__ = [
    "COLUMNS",
    "DONATIONS",
    "EDGES",
    "GENERATIONS",
    "NORMS",
    "POPULATION",
    "REVISIONS",
    "DonationRow",
    "DonorAgent",
    "DonorPlay",
    "DonorPopulation",
    "DonorRecordData",
    "DonorRevision",
    "DonorScores",
    "GenerationRow",
    "NormBookState",
    "Pairings",
    "PopulationRow",
    "record_data",
    "records_of",
]

POPULATION, GENERATIONS, DONATIONS, NORMS, REVISIONS, EDGES = (
    "population.csv",
    "generations.csv",
    "donations.csv",
    "norms.csv",
    "revisions.csv",
    "edges.csv",
)


class DonorAgent(TypedDict):
    """An agent: its name, the generation it was born in, whether it never revises, its strategy (None until it
    writes one), whether the text held the strategy sentence, its norm id; after a selection its score and whether it
    survived, and a new agent the norm of the agent it replaced."""

    name: str
    born: int
    fixed: bool
    strategy: str | None
    found: bool
    norm: int | None
    score: NotRequired[float]
    survived: NotRequired[bool]
    replaced_norm: NotRequired[int | None]


class NormBookState(TypedDict):
    """The run's norm book (`sandbox.population.games.donor.norms.NormBook`) as the state holds it."""

    check: bool
    next_id: int
    texts: dict[str, str]


class DonorPopulation(TypedDict):
    """The population: the agents, by slot, and the run's norm book."""

    agents: list[DonorAgent]
    norms: NormBookState


Pairings = list[list[list[list[int]]]]  # each game's rounds of [donor, recipient] pairs


class DonorRecordData(TypedDict):
    """A move (`DonorRecord`) as the state holds it."""

    game: int
    round: int
    donor: int
    recipient: int
    donor_before: float
    recipient_before: float
    action: Action | None
    amount: float | None
    valid: bool
    answer: str


def record_data(h: DonorRecord) -> DonorRecordData:
    """The move as the state holds it: its fields (`DonorRecordData` names them as `DonorRecord` does)."""
    return cast(DonorRecordData, asdict(h))


class DonorPlay(TypedDict):
    """What a generation's play gave: the agents (with the norms written before it) and the norm book, the written
    norms' rows and the revisions' rows, every move, each move's attempts and each game's final resources."""

    agents: list[DonorAgent]
    norms: NormBookState
    norm_rows: list[NormRow]
    revision_rows: list[RevisionRow]
    records: list[DonorRecordData]
    attempts: list[int]
    finals: list[list[float]]


def records_of(played: DonorPlay) -> list[DonorRecord]:
    """The play's moves."""
    return [DonorRecord(**r) for r in played["records"]]


class DonorScores(TypedDict):
    """Each agent's score and the surviving slots (every slot but under select)."""

    scores: list[float]
    survived: list[int]


class DonorRevision(TypedDict):
    """The revision: the next generation's agents and norm book, the new norms' and the revisions' rows, and the
    judge's verdicts (`fidelity.csv`)."""

    agents: list[DonorAgent]
    norms: NormBookState
    norm_rows: list[NormRow]
    revision_rows: list[RevisionRow]
    fidelity: list[FidelityRow]


class PopulationRow(TypedDict):
    """A row of population.csv: the agent slot in a generation, its strategy, its score, its mean donated share and
    whether it survived."""

    generation: int
    agent: int
    name: str
    born: int
    fixed: bool
    norm: int | None
    strategy: str | None
    strategy_found: bool
    score: float
    mean_donated_share: float
    survived: bool


class DonationRow(TypedDict):
    """A row of donations.csv: a move, with both sides' resources before it ("" for an illegal move's action)."""

    generation: int
    game: int
    round: int
    donor: int
    recipient: int
    donor_name: str
    recipient_name: str
    donor_before: float
    recipient_before: float
    action: str
    amount: float | None
    share: float
    valid: bool
    attempts: int


class GenerationRow(TypedDict):
    """A row of generations.csv: the paper's figures of a generation, its moves and the seconds so far."""

    generation: int
    mean_donated_share: float
    mean_final_resources: float
    survivor_gap: float
    punishment_rate: float
    illegal_rate: float
    moves: int
    seconds: float


COLUMNS = {
    POPULATION: tuple(PopulationRow.__annotations__),
    DONATIONS: tuple(DonationRow.__annotations__),
    NORMS: NORMS_COLUMNS,
    REVISIONS: REVISIONS_COLUMNS,
    FIDELITY: FIDELITY_COLUMNS,
    GENERATIONS: tuple(GenerationRow.__annotations__),
    EDGES: ("a", "b"),
}
