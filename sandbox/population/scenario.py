"""The population scenario (`population:` block): who the agents are, whom they meet, what they play, how they revise.

The block's fields shared by every game are here; each game's own settings,
and what the game cannot use of the rest, are in its module of
`sandbox.population.specs` (matrix, donor, naming, commons, ultimatum). The
dynamics of scripted members (the `axelrod` library's strategies, payoff
imitation by the Fermi rule of Szabo & Toke 1998, Nowak & May's 1992
best-neighbour rule, an optional mutation) run on a networkx graph
(`societies.society_block.Network`, shared with the societies).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Discriminator, Field, Tag, model_validator

from sandbox.base.scenario_model import StrictModel
from sandbox.core.scenario import LLMScenario, ModelConfig, Models, Sampling
from sandbox.population.specs.common import ASSISTANT, LLM, Member, Revision, member_counts
from sandbox.population.specs.commons import CommonsGameSpec
from sandbox.population.specs.donor import DonorGameSpec
from sandbox.population.specs.matrix import MatrixGameSpec
from sandbox.population.specs.naming import NamingGameSpec
from sandbox.population.specs.ultimatum import UltimatumPopulationGame
from societies.society_block import Network

__all__ = [
    "ASSISTANT",
    "LLM",
    "CommonsGameSpec",
    "DonorGameSpec",
    "GameSpec",
    "MatrixGameSpec",
    "Member",
    "NamingGameSpec",
    "PopulationBlock",
    "PopulationScenario",
    "Revision",
    "UltimatumPopulationGame",
    "empty_members",
    "member_counts",
    "over_budget",
    "place_members",
]


def place_members(scenario: PopulationScenario) -> Any:
    """Which member each agent slot starts as (an int array): each member's share of the agents (`member_counts`),
    placed by a permutation seeded from the run's seed tree (`Branch.POPULATION`)."""
    import numpy as np

    from sandbox.base.seeding import Branch, generator

    block = scenario.population
    labels = np.repeat(np.arange(len(block.members)), member_counts([m.share for m in block.members], block.agents))
    return generator(scenario.seed, Branch.POPULATION).permutation(labels).astype(np.int64)


def empty_members(block: PopulationBlock) -> list[tuple[str, str]]:
    """The members whose share rounds to no agent (`member_counts`), as (field, problem): a new run refuses them
    (`run_population`), where they would silently play no part; a run made before that check still loads.

    >>> block = PopulationBlock(agents=9, generations=1, members=[Member(strategy="Cooperator", share=0.95),
    ...                                                           Member(strategy="Defector", share=0.05)])
    >>> empty_members(block)
    [('population.members[1].share', '0.05 of 9 agents rounds to no agent; raise the share or the agents')]
    """
    counts = member_counts([m.share for m in block.members], block.agents)
    return [
        (
            f"population.members[{i}].share",
            f"{m.share:g} of {block.agents} agents rounds to no agent; raise the share or the agents",
        )
        for i, (m, n) in enumerate(zip(block.members, counts))
        if n == 0
    ]


def over_budget(scenario: PopulationScenario) -> list[tuple[str, str]]:
    """Where one generation of the population would need more LLM calls or tokens than `budget` allows (the dry
    run's first asks: `PopulationGameSpec.calls`), as (field, problem): such a run could not finish a generation, so
    a new run refuses it before anything is written. A budget that runs out in a later generation stops the run
    there, resumable, as every budget does.

    >>> from sandbox.core.scenario_files import parse_kind
    >>> scenario = parse_kind("population", {"name": "x", "budget": {"calls": 1000}, "population": {
    ...     "agents": 1000, "generations": 1, "members": [{"strategy": "llm", "share": 1.0}], "game": {"kind": "naming"},
    ...     "revision": {"rule": "memory"}}})
    >>> field, problem = over_budget(scenario)[0]
    >>> field
    'budget.calls'
    """
    budget, block = scenario.budget, scenario.population
    rows = block.game.calls(scenario)
    calls = sum(c.calls for c in rows) / block.generations
    tokens = sum(c.calls * c.prompt_tokens for c in rows) / block.generations  # answers' length unknown: left out
    found = []
    if budget.calls is not None and calls > budget.calls:
        found.append(
            (
                "budget.calls",
                f"one generation of {block.agents} agents makes up to {calls:,.0f} calls (sandbox run --dry-run), "
                f"more than the budget's {budget.calls:,}: raise budget.calls or lower population.agents",
            )
        )
    if budget.tokens is not None and tokens > budget.tokens:
        found.append(
            (
                "budget.tokens",
                f"the prompts alone of one generation of {block.agents} agents take about {tokens:,.0f} tokens "
                f"(sandbox run --dry-run), more than the budget's {budget.tokens:,}: raise budget.tokens or lower "
                "population.agents",
            )
        )
    return found


def _game_kind(value: Any) -> str:
    return value.get("kind", "matrix") if isinstance(value, dict) else getattr(value, "kind", "matrix")


GameSpec = Annotated[
    Annotated[MatrixGameSpec, Tag("matrix")]
    | Annotated[DonorGameSpec, Tag("donor")]
    | Annotated[NamingGameSpec, Tag("naming")]
    | Annotated[CommonsGameSpec, Tag("commons")]
    | Annotated[UltimatumPopulationGame, Tag("ultimatum")],
    Discriminator(_game_kind),
]


class PopulationBlock(StrictModel):
    """A population whose strategies spread over generations."""

    agents: int = Field(..., ge=2, le=1_000_000, description="Number of agents.")
    generations: int = Field(..., ge=1, le=100_000, description="Generations: play with every neighbour, then revise.")
    members: list[Member] = Field(..., min_length=1, description="The starting strategies and their shares.")
    game: GameSpec = Field(
        default_factory=MatrixGameSpec, description="kind matrix (default), donor, naming, commons or ultimatum."
    )
    network: Network = Field(default_factory=Network, description="Who meets whom (shared with societies).")
    self_play: bool = Field(False, description="Each agent also plays itself, as on Nowak & May's lattice.")
    revision: Revision = Field(default_factory=Revision)
    actors: int = Field(
        1,
        ge=1,
        le=1024,
        description="Scripted strategies, or the LLM members of a matrix game: the "
        "matches are cut into this many blocks and each block is played by "
        "a Ray actor of its own (as AgentSociety groups agents; local Ray "
        "unless Ray is already initialised), LLM members with the actor's "
        "share of the run's concurrency and of its openai: endpoints; 1 "
        "plays in this process. The tables are the same for any number.",
    )
    judge_play: bool = Field(
        False,
        description="The donor game: after each generation the proxy judge (role judge) "
        "reads each agent's moves as donor and its written strategy and "
        "answers whether the play follows the norm (fidelity.csv).",
    )

    @model_validator(mode="after")
    def _consistent(self) -> PopulationBlock:
        total = sum(m.share for m in self.members)
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"the members' shares sum to {total:g}, not 1")
        names = [m.strategy for m in self.members]
        if len(set(names)) != len(names):
            raise ValueError("a strategy is listed twice in members")
        problem = self.network.size_problem(self.agents)
        if problem:
            raise ValueError(problem)
        edges = self.network.edges
        if edges is not None and len({n for edge in edges for n in edge}) < self.agents:
            covered = len({n for edge in edges for n in edge})
            raise ValueError(
                f"network.edges cover {covered} agents, fewer than the {self.agents} agents: each agent "
                "needs a neighbour"
            )
        self.game.check(self)
        return self


class PopulationScenario(LLMScenario):
    """A population scenario file: a name, a seed, models for LLM members and a `population:` block."""

    models: Models = Field(
        default_factory=lambda: Models(user=ModelConfig(sampling=Sampling(temperature=0.8, max_tokens=400))),
        description="LLM members play as role `user` (--model user=SPEC); the paper sampled at temperature 0.8.",
    )
    population: PopulationBlock

    @model_validator(mode="after")
    def _actors_share(self) -> PopulationScenario:
        """LLM members on Ray actors (`population.actors`, the matrix game with play llm) each take a share of an
        `openai:` endpoint pool (`sandbox.population.llm_actors`): an embedded model would load once per actor, and
        a budget's ledger is kept by each process, so neither is taken there."""
        block = self.population
        if block.actors > 1 and block.game.roles(block):
            if not self.models.user.spec.startswith("openai:"):
                raise ValueError(
                    f"population.actors: LLM members on {block.actors} Ray actors call an openai: endpoint pool, each "
                    f"actor its share (models.user.spec {self.models.user.spec}; --model user=openai:MODEL@URL1,URL2)"
                )
            if self.concurrency < block.actors:
                raise ValueError(
                    f"population.actors: {block.actors} actors share the run's concurrency ({self.concurrency} calls "
                    "in flight): raise concurrency to at least the actors"
                )
            if self.budget.limits():
                raise ValueError(
                    "budget: each Ray actor keeps its own ledger, so a cap would not hold across them; drop the budget "
                    "or set population.actors 1"
                )
        return self
