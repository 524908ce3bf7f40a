"""The naming game's records (the LLM plug-in, `sandbox.population.games.naming.llm`): its population between the
engine's steps (the agents and their memories, the run of successes) and a generation's play, each a plain
`TypedDict` the checkpoint holds, and its tables' rows, from which the tables take their headers (`COLUMNS`)."""

from __future__ import annotations

from typing_extensions import TypedDict

__all__ = [
    "COLUMNS",
    "EDGES",
    "GENERATIONS",
    "INTERACTIONS",
    "POPULATION",
    "AgentRow",
    "GenerationRow",
    "InteractionRow",
    "NamingAgent",
    "NamingPopulation",
    "Played",
    "Remembered",
]

POPULATION, GENERATIONS, INTERACTIONS, EDGES = "population.csv", "generations.csv", "interactions.csv", "edges.csv"


class Remembered(TypedDict):
    """An interaction in an agent's memory: its pick, its partner's (None: illegal) and the payoff."""

    own: str | None
    other: str | None
    payoff: float


class NamingAgent(TypedDict):
    """An agent: its committed word ("" for an LLM member), its memory (the last `game.memory` interactions) and
    its last pick ("" for none or an illegal one)."""

    committed: str
    memory: list[Remembered]
    last: str


class NamingPopulation(TypedDict):
    """The population: its agents, the run of successes so far, the interaction (1-based, over the run) at which
    it converged, and the interactions played."""

    agents: list[NamingAgent]
    run: int
    consensus_at: int | None
    interactions: int


class InteractionRow(TypedDict):
    """A row of interactions.csv: the pair, both picks ("" for an illegal one), their validity and attempts, the
    success and the payoff both got."""

    generation: int
    interaction: int
    a: int
    b: int
    name_a: str
    name_b: str
    valid_a: bool
    valid_b: bool
    attempts_a: int
    attempts_b: int
    success: bool
    payoff: float


class Played(NamingPopulation):
    """A generation's play: the population after it, and its interactions' rows."""

    rows: list[InteractionRow]


class AgentRow(TypedDict):
    """A row of population.csv: the agent's committed word, last pick, the name it holds and its memory's score."""

    generation: int
    agent: int
    committed: str
    last_name: str
    held: str
    score: float


class GenerationRow(TypedDict):
    """A row of generations.csv: the interactions, their success rate, the dominant name and its share of the
    agents, the committed word's share, the illegal rate, the interaction at which consensus came ("" if not)."""

    generation: int
    interactions: int
    success_rate: float
    dominant: str
    dominant_share: float
    committed_share: float
    illegal_rate: float
    consensus_at: int | str
    seconds: float


COLUMNS = {
    INTERACTIONS: tuple(InteractionRow.__annotations__),
    POPULATION: tuple(AgentRow.__annotations__),
    GENERATIONS: tuple(GenerationRow.__annotations__),
    EDGES: ("a", "b"),
}
