"""The LLM matrix game's records (`sandbox.population.games.matrix.llm`): its population (as columns), turns, scores
and revision between the engine's steps, each a plain `TypedDict` the checkpoint holds, and its tables' rows, from
which the tables take their headers (`COLUMNS`)."""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict

from sandbox.population.llm_session import MemberRow
from sandbox.population.revision.texts import NORMS_COLUMNS, REVISIONS_COLUMNS, NormRow, RevisionRow

__all__ = [
    "COLUMNS",
    "EDGES",
    "GENERATIONS",
    "MOVES",
    "NORMS_TABLE",
    "POPULATION",
    "REVISIONS",
    "GenerationRow",
    "MatchKey",
    "MatrixAgents",
    "MatrixRevision",
    "MemberPlay",
    "MoveRow",
    "Scores",
    "Turn",
]

POPULATION, GENERATIONS, MOVES, NORMS_TABLE, REVISIONS, EDGES = (
    "population.csv",
    "generations.csv",
    "moves.csv",
    "norms.csv",
    "revisions.csv",
    "edges.csv",
)


class MatrixAgents(TypedDict):
    """The LLM members, as columns: agent i (named `agent{i}`) is of kind `kind[i]`, never revises where `fixed[i]`,
    and follows norm `norm[i]`, whose text is `texts[str(norm[i])]` (the texts of the norms the agents hold, by id:
    the checkpoint's maps have string keys); `next_id` is the id the run's next norm takes. A million agents are
    three lists of shared objects (24 MB), not a million records (252 MB)."""

    kind: list[Literal["member", "fixed"]]
    fixed: list[bool]
    norm: list[int]
    texts: dict[str, str]
    next_id: int


class MatrixRevision(TypedDict):
    """A generation's revision: the next agents, the new norms' rows (norms.csv) and the revisions' (revisions.csv)."""

    agents: MatrixAgents
    norms: list[NormRow]
    revisions: list[RevisionRow]


class Turn(TypedDict):
    """A turn of a match: both moves (C, D, or "" for an illegal answer), both answers, both payoffs."""

    move_a: str
    move_b: str
    answer_a: str
    answer_b: str
    payoff_a: float
    payoff_b: float


class MatchKey(TypedDict):
    generation: int
    match: int
    turn: int
    a: int
    b: int


class MoveRow(MatchKey, Turn):
    """A row of moves.csv: the generation, the match (its edge), the turn, both agents, then the turn."""


class MemberPlay(MemberRow):
    """A row of population.csv: the member, its payoff and its share of C moves ("" without a legal move)."""

    payoff: float
    cooperation: float | str


class GenerationRow(TypedDict):
    """A row of generations.csv: the share of C moves among legal ones ("" without one), the members' mean payoff
    (each a total: summed over its matches' turns, as the scripted game's), the share of illegal moves, the moves,
    the seconds so far."""

    generation: int
    cooperation: float | str
    mean_payoff: float
    illegal_rate: float | str
    moves: int
    seconds: float


class Scores(TypedDict):
    """Each agent's payoff (summed, or the mean per neighbour met), legal moves and C moves."""

    payoff: list[float]
    moves: list[float]
    cooperated: list[float]


COLUMNS = {
    MOVES: tuple(MoveRow.__annotations__),
    POPULATION: tuple(MemberPlay.__annotations__),
    NORMS_TABLE: NORMS_COLUMNS,
    REVISIONS: REVISIONS_COLUMNS,
    GENERATIONS: tuple(GenerationRow.__annotations__),
    EDGES: ("a", "b"),
}
