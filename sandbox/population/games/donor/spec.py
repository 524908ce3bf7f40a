"""Vallinder & Hughes' donor game among LLM agents who write, and revise, one-sentence norms (the paper's
"strategies")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from sandbox.population.settings import (
    LLM,
    Calls,
    PopulationGameSpec,
    PopulationScenarioSettings,
    PopulationSettings,
    count_agents,
    refuse_unread,
    retries_field,
)

if TYPE_CHECKING:
    from sandbox.population.games.donor.rules import DonorRules

__all__ = ["DonorSpec"]


class DonorSpec(PopulationGameSpec):
    """Vallinder & Hughes' donor game (`sandbox.population.games.donor.rules`), the paper's values by default."""

    kind: Literal["donor"]
    endowment: float = Field(10.0, gt=0, le=1e6, description="Units each agent starts a game with.")
    multiplier: float = Field(
        2.0,
        gt=0,
        le=100,
        description="The recipient receives this times the donation (cooperationGain; the paper also ran 1.5 and 3).",
    )
    punishment: bool = Field(
        False, description="Costly punishment: a donor may spend x to take punishment_loss x from the recipient."
    )
    punishment_loss: float = Field(2.0, gt=0, le=100, description="What each unit spent on punishing takes away.")
    trace_depth: int = Field(
        3,
        ge=1,
        le=10,
        description="How far back the trace of the recipient's partners "
        "goes (3 in the paper; 1 and 2 in its ablations).",
    )
    pairing: Literal["notebook", "round_robin", "network"] = Field(
        "notebook",
        description="notebook: the authors' code (pairs met twice, same-half agents never); "
        "round_robin: no partner twice within a game (the paper's words); network: each "
        "round a random maximal matching of the network's edges, the donor of each pair "
        "drawn (needed on a network that is not complete).",
    )
    rounds: int | None = Field(
        None,
        ge=1,
        le=1000,
        description="pairing network: rounds of a game (default: as many as agents, as the notebook's pairing).",
    )
    games: int = Field(
        2,
        ge=1,
        le=10,
        description="Games per generation, resources and traces reset (2: each agent a final-round recipient once).",
    )
    activation: float = Field(
        1.0,
        gt=0.0,
        le=1.0,
        description="The share of the donations that take place, each (donor, recipient) pair of a round drawn at "
        "random (OASIS's activation: a large population where few act each step); 1, every pair of every round, "
        "as in the paper.",
    )
    selection_score: Literal["mean", "notebook"] = Field(
        "mean",
        description="mean: the games' mean final resources (the paper); notebook: twice the last game's "
        "(the authors' code).",
    )
    retries: int = retries_field(
        10,
        "Times an unreadable donation is asked again (the notebook's 10) before it is recorded as an illegal move.",
    )

    def rules(self) -> DonorRules:
        from sandbox.population.games.donor.rules import DonorRules

        return DonorRules(
            endowment=self.endowment,
            multiplier=self.multiplier,
            punishment=self.punishment,
            punishment_loss=self.punishment_loss,
            trace_depth=self.trace_depth,
            pairing=self.pairing,
            games=self.games,
            selection_score=self.selection_score,
            rounds=self.rounds,
        )

    @model_validator(mode="after")
    def _rounds_for_network(self) -> DonorSpec:
        if self.rounds is not None and self.pairing != "network":
            raise ValueError(f"rounds is read by pairing network only; pairing {self.pairing} fixes its own rounds")
        return self

    def roles(self, block: PopulationSettings) -> tuple[str, ...]:
        return ("user", "judge") if block.judge_play else ("user",)

    def check(self, block: PopulationSettings) -> None:
        rule, revision = block.revision.rule, block.revision
        if rule in ("proportional", "best", "memory"):
            raise ValueError(
                f"revision.rule {rule} is {'the naming' if rule == 'memory' else 'a matrix'} game's; "
                "the donor game revises by select, reflect, imitate or mutate"
            )
        unread = {
            "payoff": True,
            "beta": rule != "imitate",
            "adopt": rule != "imitate",
            "mutation": rule == "select",
            "survivors": rule != "select",
            "show_scores": rule != "select",
        }
        refuse_unread(
            block,
            [f for f, off in unread.items() if off],
            f"the donor game with revision.rule {rule}",
            judge_play=False,
        )
        if rule == "mutate" and not revision.mutation:
            raise ValueError(
                "revision.rule mutate rewrites strategies by mutation alone: set revision.mutation above 0"
            )
        if block.agents % 2 and self.pairing != "network":
            raise ValueError(
                f"the donor game pairs agents: agents must be even, not {block.agents} (or use game.pairing network)"
            )
        if block.network.kind != "complete" and self.pairing != "network":
            raise ValueError(
                f"network.kind {block.network.kind}: the donor game's pairing {self.pairing} pairs "
                "every agent with every other; set game.pairing network to pair along the edges, or "
                "network.kind complete"
            )
        keep = round(block.agents * revision.survivors)
        if rule == "select" and (keep < 1 or keep >= block.agents):
            raise ValueError(
                f"revision.survivors {revision.survivors} keeps no agent, or all of them, of {block.agents}"
            )

    def describe(self, scenario: PopulationScenarioSettings) -> str:
        p = scenario.population
        how = {
            "select": f"the top {p.revision.survivors:.0%} survive",
            "reflect": "each agent reflects on its play and rewrites its norm",
            "imitate": f"each agent imitates a better neighbour (Fermi, beta {p.revision.beta:g}, {p.revision.adopt})",
            "mutate": f"norms rewritten freely with probability {p.revision.mutation:g}",
        }[p.revision.rule]
        judged = f"; judge {scenario.models.judge.spec} reads play against norm" if p.judge_play else ""
        active = f" ({self.activation * 100:g}% of the donations take place)" if self.activation < 1 else ""
        return (
            f"donor-game population of {p.agents} agents on a {p.network.kind} network, {p.generations} "
            f"generations{active}, {how}; members {scenario.models.user.spec} as role user{judged}"
        )

    def calls(self, scenario: PopulationScenarioSettings) -> list[Calls]:
        """The norms written (every `llm` member, then each generation's new agents under select), one
        donation per donor and round (at most one per pair of a maximal matching on a network), and the revisions
        between generations (reflect: every agent not fixed; imitate with merge and mutate: at most that many, as
        they fall by chance); with judge_play, one verdict per agent and generation."""
        p, user = scenario.population, scenario.models.user
        llm, fixed = count_agents(p, lambda m: m.strategy == LLM), count_agents(p)
        rounds = {"notebook": p.agents, "round_robin": p.agents - 1, "network": self.rounds or p.agents}[self.pairing]
        donations = round(p.generations * self.games * rounds * (p.agents // 2) * self.activation)  # expected
        strategies, revisions = llm, 0
        if p.revision.rule == "select":
            strategies += max(0, p.agents - max(fixed, round(p.agents * p.revision.survivors))) * (p.generations - 1)
        elif p.revision.rule == "reflect" or p.revision.mutation or p.revision.adopt == "merge":
            revisions = (p.agents - fixed) * (p.generations - 1)
        rows = [
            Calls("user (norms)", user, strategies, 600),
            Calls("user (donations)" if self.activation == 1 else "user (donations, expected)", user, donations, 700),
        ]
        if revisions:
            rows.append(
                Calls(
                    f"user ({p.revision.rule}, at most)"
                    if p.revision.rule != "reflect" or p.revision.mutation
                    else "user (reflect)",
                    user,
                    revisions,
                    1200,
                )
            )
        if p.judge_play:  # an agent that made no move as donor is not asked; the answer is a yes or no
            rows.append(Calls("judge (fidelity, at most)", scenario.models.judge, p.agents * p.generations, 500, 4))
        return rows
