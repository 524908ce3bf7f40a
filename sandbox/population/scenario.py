"""The population scenario (`population:` block): who the agents are, whom they meet, what they play, how they revise.

This first part of the kind holds members with *scripted* strategies (the
`axelrod` library's), so that the dynamics are checked against evolutionary
game theory without an LLM: payoff imitation by the Fermi rule (Szabo & Toke
1998) and Nowak & May's (1992) best-neighbour rule, with an optional mutation,
on a networkx graph (`sandbox.scenario.Network`, shared with the societies).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from sandbox.scenario import Network
from sandbox.schema import StrictModel

__all__ = ["MatrixGameSpec", "Member", "PopulationBlock", "PopulationScenario", "Revision"]

COMPLETE_STOCHASTIC_LIMIT = 2000  # a stochastic strategy on a complete graph plays n(n-1)/2 matches a generation


class MatrixGameSpec(StrictModel):
    """A symmetric 2x2 game, played as an iterated match of `turns` turns between neighbours."""

    name: str = Field("prisoners_dilemma", description="A game of `sandbox.games.matrix.MATRIX_GAMES`, or `weak_"
                                                       "prisoners_dilemma` (R=1, T=temptation, S=P=0: Nowak & May "
                                                       "1992, Santos & Pacheco 2005).")  # fmt: skip
    temptation: float | None = Field(None, ge=1.0, le=10.0, description="weak_prisoners_dilemma: T, the "
                                                                         "temptation b (1 < b <= 2 in the papers).")
    turns: int = Field(1, ge=1, le=1000, description="Turns of each match (1: a one-shot game).")

    @model_validator(mode="after")
    def _temptation(self) -> MatrixGameSpec:
        if (self.name == "weak_prisoners_dilemma") != (self.temptation is not None):
            raise ValueError("`temptation` is set for name weak_prisoners_dilemma, and only for it")
        from sandbox.population.strategies import payoff_table, symmetric
        from sandbox.registry import UnknownNameError

        try:
            table = payoff_table(self.name, self.temptation)
        except UnknownNameError as error:
            raise ValueError(str(error).strip("'\"")) from None
        if not symmetric(table):
            raise ValueError(f"game {self.name!r} is not symmetric; a population plays symmetric games")
        return self


class Member(StrictModel):
    """A share of the population that starts with one strategy."""

    strategy: str = Field(..., description="An axelrod strategy's name (axelrod.strategies: Cooperator, Defector, "
                                           "Tit For Tat, Grudger, ...), as `axl.Cooperator.name`.")  # fmt: skip
    share: float = Field(..., gt=0.0, le=1.0, description="Its share of the agents (the shares sum to 1).")
    fixed: bool = Field(False, description="Zealots: these agents never revise their strategy.")

    @field_validator("strategy")
    @classmethod
    def _known(cls, name: str) -> str:
        from sandbox.population.strategies import strategy_class

        strategy_class(name)  # raises ValueError naming the close matches
        return name


class Revision(StrictModel):
    """How each agent revises its strategy after a generation's play."""

    rule: Literal["imitate", "proportional", "best"] = Field(
        "imitate",
        description="imitate: each agent picks a random neighbour and adopts its strategy with the Fermi "
        "probability 1/(1+exp(-beta (P_neighbour - P_own))) (Szabo & Toke 1998); proportional: it adopts a "
        "random neighbour's strategy, when that neighbour scored more, with probability (P_neighbour - P_own) / "
        "(max(k_own, k_neighbour) D), D the game's payoff range (Santos & Pacheco 2005); best: each agent adopts "
        "the strategy of the best-scoring agent in its neighbourhood, itself included (Nowak & May 1992).",
    )
    beta: float = Field(10.0, gt=0.0, le=1e6, description="imitate: the selection strength, 1/K in Szabo & Toke's "
                                                          "notation (K = 0.1 there).")  # fmt: skip
    mutation: float = Field(0.0, ge=0.0, le=1.0, description="After the rule: the probability that an agent "
                                                             "instead takes a strategy drawn uniformly from the "
                                                             "members' strategies.")  # fmt: skip
    payoff: Literal["total", "mean"] = Field(
        "total", description="What agents compare: the payoff summed over their neighbours (the papers' "
                             "accumulated payoff) or averaged per neighbour.")  # fmt: skip


class PopulationBlock(StrictModel):
    """A population whose strategies spread over generations."""

    agents: int = Field(..., ge=2, le=1_000_000, description="Number of agents.")
    generations: int = Field(..., ge=1, le=100_000, description="Generations: play with every neighbour, then "
                                                               "revise.")  # fmt: skip
    members: list[Member] = Field(..., min_length=1, description="The starting strategies and their shares.")
    game: MatrixGameSpec = Field(default_factory=MatrixGameSpec)
    network: Network = Field(default_factory=Network, description="Who meets whom (shared with societies).")
    self_play: bool = Field(False, description="Each agent also plays itself, as on Nowak & May's lattice.")
    revision: Revision = Field(default_factory=Revision)

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
            raise ValueError(f"network.edges cover {covered} agents, fewer than the {self.agents} agents: each agent "
                             "needs a neighbour")  # fmt: skip
        if self.network.kind == "complete" and self.agents > COMPLETE_STOCHASTIC_LIMIT:
            from sandbox.population.strategies import is_stochastic

            random = [m.strategy for m in self.members if is_stochastic(m.strategy)]
            if random:
                raise ValueError(f"a complete network of {self.agents} agents with the stochastic strateg"
                                 f"{'ies' if len(random) > 1 else 'y'} {', '.join(random)} plays every pair's own "
                                 f"match each generation; use at most {COMPLETE_STOCHASTIC_LIMIT} agents or a "
                                 "sparser network")  # fmt: skip
        return self


class PopulationScenario(StrictModel):
    """A population scenario file: a name, a seed and a `population:` block."""

    name: str = Field(..., pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    seed: int = Field(0, ge=0)
    description: str = ""
    population: PopulationBlock
