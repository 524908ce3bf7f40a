"""A symmetric 2x2 game between neighbours: scripted axelrod strategies under payoff imitation, or LLM members who
follow principle texts (`play: llm`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from sandbox.population.settings import (
    Calls,
    PopulationGameSpec,
    PopulationScenarioSettings,
    PopulationSettings,
    Revision,
    count_agents,
    network_edges,
    principle_checks,
)

__all__ = ["COMPLETE_STOCHASTIC_LIMIT", "MatrixSpec"]

COMPLETE_STOCHASTIC_LIMIT = 2000  # a stochastic strategy on a complete graph plays n(n-1)/2 matches a generation


class MatrixSpec(PopulationGameSpec):
    """A symmetric 2x2 game, played as an iterated match of `turns` turns between neighbours."""

    kind: Literal["matrix"] = "matrix"
    name: str = Field(
        "prisoners_dilemma",
        description="A game of `sandbox.rules.matrix.MATRIX_GAMES`, or `weak_"
        "prisoners_dilemma` (R=1, T=temptation, S=P=0: Nowak & May "
        "1992, Santos & Pacheco 2005).",
    )
    temptation: float | None = Field(
        None, ge=1.0, le=10.0, description="weak_prisoners_dilemma: T, the temptation b (1 < b <= 2 in the papers)."
    )
    turns: int = Field(1, ge=1, le=1000, description="Turns of each match (1: a one-shot game).")
    play: Literal["scripted", "llm"] = Field(
        "scripted",
        description="scripted: the members are axelrod strategies; llm: the members are norms (principle texts) "
        "an LLM follows (role user), asked each move with the moral package's implicit game "
        "prompt (Tennant et al.'s: neutral action tokens, the payoff table, the last moves).",
    )
    history: int = Field(
        1, ge=0, le=20, description="play llm: the last moves of the match shown (the moral package's default, 1)."
    )
    tokens: tuple[str, str] = Field(
        ("action1", "action2"), description="play llm: the tokens that stand for cooperate and defect."
    )
    activation: float = Field(
        1.0,
        gt=0.0,
        le=1.0,
        description="play llm: the share of the matches that take place each generation, each drawn at "
        "random (OASIS's activation, which lets about 1% of a million agents act per step); 1, "
        "every pair of neighbours meets, as in the papers.",
    )
    answer: Literal["free", "constrained"] = Field(
        "free",
        description="play llm: free, the prompt's own format (one token; anything else is an illegal move); "
        "constrained: the answer is held to the two tokens (a grammar where the backend takes "
        "one).",
    )

    @model_validator(mode="after")
    def _temptation(self) -> MatrixSpec:
        if (self.name == "weak_prisoners_dilemma") != (self.temptation is not None):
            raise ValueError("`temptation` is set for name weak_prisoners_dilemma, and only for it")
        from sandbox.base.registry import UnknownNameError
        from sandbox.population.games.matrix.strategies import payoff_table, symmetric

        try:
            table = payoff_table(self.name, self.temptation)
        except UnknownNameError as error:
            raise ValueError(str(error).strip("'\"")) from None
        if not symmetric(table):
            raise ValueError(f"game {self.name!r} is not symmetric; a population plays symmetric games")
        if self.play == "scripted":
            changed = [
                f
                for f in ("history", "tokens", "answer", "activation")
                if getattr(self, f) != MatrixSpec.model_fields[f].default
            ]
            if changed:
                raise ValueError(f"{', '.join(changed)}: read with play llm only")
        else:
            from sandbox.rules.matrix_prompt import ActionTokens

            ActionTokens.of(self.tokens)
        return self

    def plugin(self) -> str:
        return self.play

    def extras(self, block: PopulationSettings) -> list[str]:
        return ["population"] if self.play == "scripted" else []  # axelrod's strategies

    def roles(self, block: PopulationSettings) -> tuple[str, ...]:
        return ("user",) if self.play == "llm" else ()  # scripted strategies call no model

    def check(self, block: PopulationSettings) -> None:
        if self.play == "llm":
            principle_checks(block, "a matrix game with play llm", assistant=False, actors=True)
            return
        if block.judge_play:
            raise ValueError(
                "judge_play: a scripted matrix game's strategies are the axelrod library's, which their play "
                "follows by construction; the judge reads the donor game's written norms"
            )
        rule = block.revision.rule
        if rule == "memory":
            raise ValueError(
                "revision.rule memory is the naming game's; a matrix game revises by imitate, "
                "proportional, best or mutate"
            )
        if rule in ("select", "reflect"):
            raise ValueError(
                f"revision.rule {rule} rewrites norm texts, the donor game's; a matrix "
                "game revises by imitate, proportional, best or mutate"
            )
        text_only = [
            f"revision.{f}"
            for f in ("adopt", "check")
            if getattr(block.revision, f) != Revision.model_fields[f].default
        ]
        if text_only:
            raise ValueError(f"{', '.join(text_only)}: read for LLM norms (the donor game) only")
        if rule == "mutate" and not block.revision.mutation:
            raise ValueError("revision.rule mutate changes strategies by mutation alone: set revision.mutation above 0")
        from sandbox.base.extras import install_line, missing

        if missing("population"):
            raise ValueError(
                f"members[0].strategy: scripted members are the axelrod library's strategies, the "
                f"population extra: {install_line(['population'])}"
            )
        from sandbox.population.games.matrix.strategies import is_stochastic, strategy

        for i, member in enumerate(block.members):
            try:
                strategy(member.strategy)
            except ValueError as error:
                raise ValueError(f"members[{i}].strategy: {error}") from None
        if block.network.kind == "complete" and block.agents > COMPLETE_STOCHASTIC_LIMIT:
            random = [m.strategy for m in block.members if is_stochastic(m.strategy)]
            if random:
                raise ValueError(
                    f"a complete network of {block.agents} agents with the stochastic strateg"
                    f"{'ies' if len(random) > 1 else 'y'} {', '.join(random)} plays every pair's own "
                    f"match each generation; use at most {COMPLETE_STOCHASTIC_LIMIT} agents or a "
                    "sparser network"
                )

    def describe(self, scenario: PopulationScenarioSettings) -> str:
        p = scenario.population
        if self.play == "llm":
            how = (
                "each member rewrites its principle from its matches"
                if p.revision.rule == "reflect"
                else f"each member imitates a better neighbour (Fermi, beta {p.revision.beta:g})"
            )
            active = f" ({self.activation * 100:g}% of them each generation)" if self.activation < 1 else ""
            return (
                f"{self.name} population of {p.agents} LLM members on a {p.network.kind} network, {p.generations} "
                f"generations of {self.turns}-turn matches{active}, {how}; members {scenario.models.user.spec} as role "
                "user"
            )
        members = ", ".join(f"{m.strategy} {m.share:.0%}" + (" (fixed)" if m.fixed else "") for m in p.members)
        graph = "an edge-list" if p.network.kind == "edges" else f"a {p.network.kind}"
        actors = f", played on {p.actors} Ray actors" if p.actors > 1 else ""
        return (
            f"population of {p.agents} agents on {graph} network, {p.generations} generations of "
            f"{self.name}, revision {p.revision.rule}; {members}{actors}"
        )

    def calls(self, scenario: PopulationScenarioSettings) -> list[Calls]:
        """play llm: two moves a turn, every edge a match (its `activation` share, expected), each generation; a reflection per member not fixed
        between generations."""
        if self.play != "llm":
            return []
        p, user = scenario.population, scenario.models.user
        reflections = (p.agents - count_agents(p)) * (p.generations - 1) if p.revision.rule == "reflect" else 0
        return [
            Calls(
                "user (moves)",
                user,
                round(2 * network_edges(scenario) * self.activation) * self.turns * p.generations,
                300,
            ),
            Calls("user (reflections)", user, reflections, 600),
        ]
