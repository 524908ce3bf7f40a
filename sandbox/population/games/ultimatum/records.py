"""The ultimatum game's records: its agents and population between the engine's steps, a generation's episodes and
its revision, each a plain `TypedDict` the checkpoint holds, and its tables' rows, from which the tables take their
headers (`COLUMNS`)."""

from __future__ import annotations

from typing_extensions import TypedDict

from sandbox.population.llm_session import MemberRow
from sandbox.population.revision.texts import (
    NORMS_COLUMNS,
    REVISIONS_COLUMNS,
    PrincipledAgent,
    PrincipledPopulation,
    PrincipledRevision,
)

__all__ = [
    "COLUMNS",
    "EDGES",
    "EPISODES",
    "GENERATIONS",
    "NORMS_TABLE",
    "POPULATION",
    "REVISIONS",
    "Episode",
    "EpisodeRow",
    "GenerationRow",
    "MemberPlay",
    "UltimatumAgent",
    "UltimatumPopulation",
    "UltimatumRevision",
]

POPULATION, GENERATIONS, EPISODES, NORMS_TABLE, REVISIONS, EDGES = (
    "population.csv",
    "generations.csv",
    "episodes.csv",
    "norms.csv",
    "revisions.csv",
    "edges.csv",
)


class UltimatumAgent(PrincipledAgent):
    """A member who follows a principle, and the strategy its scenario member names (a library norm's name, a
    principle's text, or the assistant): a fixed member plays that norm as SCAI's user."""

    label: str


UltimatumPopulation = PrincipledPopulation[UltimatumAgent]  # the agents and the next norm id
UltimatumRevision = PrincipledRevision[UltimatumAgent]  # the next agents, the new norms, the revisions, the next id


class Episode(TypedDict):
    """An episode as SCAI's `play_ultimatum` records it (its ids, the players' names, the stake, both moves and
    their illegal answers, the parts and payoffs, an instructed player's style), and the players' indices: `a`
    proposed to `b`."""

    run: int
    epoch: int
    episode: str
    index: int
    proposer: str
    responder: str
    amount: int
    currency: str
    proposal: str
    proposal_legal: bool
    proposal_illegal_answers: int
    proposer_part: int | None
    responder_part: int | None
    offered_share: float | None
    response: str | None
    decision: str | None
    decision_legal: bool | None
    response_illegal_answers: int
    proposer_payoff: int | None
    responder_payoff: int | None
    proposer_instruction: str | None
    responder_instruction: str | None
    a: int
    b: int


class EpisodeRow(TypedDict):
    """A row of episodes.csv: the generation, the episode, the proposer's and the responder's indices, the stake,
    the proposal and whether it was legal, the offered share, the response and the decision ("" for none), and the
    shares of the stake each got."""

    generation: int
    index: int
    proposer: int
    responder: int
    amount: int
    currency: str
    proposal: str
    proposal_legal: bool
    offered_share: float | str
    response: str
    decision: str
    proposer_share: float | str
    responder_share: float | str


class MemberPlay(MemberRow):
    """A row of population.csv: the member, its mean share of the stake, its mean offered share as proposer and its
    acceptance rate as responder ("" for none)."""

    score: float | str
    offered_share: float | str
    acceptance: float | str


class GenerationRow(TypedDict):
    """A row of generations.csv: the episodes, the mean offered share, the acceptance rate, the mean score, the
    offered shares of the assistant, the fixed members and the members ("" for none), the share of illegal moves, the
    seconds so far."""

    generation: int
    episodes: int
    mean_offered_share: float | str
    acceptance_rate: float | str
    mean_score: float | str
    assistant_offered_share: float | str
    fixed_offered_share: float | str
    members_offered_share: float | str
    illegal_rate: float | str
    seconds: float


COLUMNS = {
    EPISODES: tuple(EpisodeRow.__annotations__),
    POPULATION: tuple(MemberPlay.__annotations__),
    NORMS_TABLE: NORMS_COLUMNS,
    REVISIONS: REVISIONS_COLUMNS,
    GENERATIONS: tuple(GenerationRow.__annotations__),
    EDGES: ("a", "b"),
}
