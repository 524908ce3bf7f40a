"""The ultimatum game among members who follow and revise principles, with SCAI's users and assistant as members."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sandbox.population.settings import (
    ASSISTANT,
    Calls,
    PopulationGameSpec,
    PopulationScenarioSettings,
    PopulationSettings,
    count_agents,
    network_edges,
    principle_checks,
)
from sandbox.society.scenario import UltimatumSettings

__all__ = ["UltimatumSpec"]


class UltimatumSpec(UltimatumSettings, PopulationGameSpec):
    """The ultimatum game among a population's members (SCAI's game, `sandbox.rules.ultimatum_episode`): each
    generation every agent proposes to each neighbour `rounds` times. Members follow a principle as SCAI's assistant
    does; fixed members are SCAI's users; a member `assistant` is SCAI's assistant, whose MetaLM reads the
    generation's interactions."""

    kind: Literal["ultimatum"]
    rounds: int = Field(
        1,
        ge=1,
        le=100,
        description="Times each agent proposes to each neighbour a generation (the neighbour proposes back as often).",
    )
    reading: Literal["scored", "lead_in", "none"] = Field(
        "scored",
        description="How a member's proposal follows its principle (SCAI's assistant.reading): scored, "
        "lead_in, or none (the proposal asked directly).",
    )
    responder: Literal["paper", "guided", "rule"] = Field(
        "paper", description="How a member decides on a proposal (SCAI's assistant.responder)."
    )
    assistant_policy: str | None = Field(
        None,
        min_length=1,
        description="The assistant member's first principle; "
        "default: drawn from SCAI's first policies "
        "(prompts/scai/initial_policies.j2).",
    )
    assistant_interactions: int = Field(
        40,
        ge=1,
        le=1000,
        description="Most interactions of a generation the "
        "assistant's MetaLM reads (a seeded sample; "
        "SCAI's max_interactions).",
    )
    meta_reasks: int = Field(1, ge=0, le=5, description="Times an unusable principle from a MetaLM is asked again.")

    def roles(self, block: PopulationSettings) -> tuple[str, ...]:
        """The members (`user`); the assistant member (`assistant`); the MetaLMs (`meta`), where one revises."""
        has_assistant = any(m.strategy == ASSISTANT for m in block.members)
        meta = has_assistant or block.revision.rule == "reflect"
        return ("user",) + (("assistant",) if has_assistant else ()) + (("meta",) if meta else ())

    def check(self, block: PopulationSettings) -> None:
        principle_checks(block, "the ultimatum population", assistant=True)
        fields = UltimatumSpec.model_fields
        has_assistant = ASSISTANT in [m.strategy for m in block.members]
        unread = [
            f"game.{f}"
            for f in ("assistant_policy", "assistant_interactions")
            if not has_assistant and getattr(self, f) != fields[f].default
        ]
        if not has_assistant and block.revision.rule == "imitate" and self.meta_reasks != fields["meta_reasks"].default:
            unread.append("game.meta_reasks")  # no MetaLM is asked
        if unread:
            raise ValueError(
                f"{', '.join(unread)}: no member is the assistant"
                + (", and imitation asks no MetaLM" if "game.meta_reasks" in unread else "")
            )

    def describe(self, scenario: PopulationScenarioSettings) -> str:
        p = scenario.population
        members = ", ".join(
            f"{m.strategy if len(m.strategy) < 20 else m.strategy[:17] + '...'} {m.share:.0%}"
            + (" (fixed)" if m.fixed else "")
            for m in p.members
        )
        how = (
            "each member's MetaLM rewrites its principle"
            if p.revision.rule == "reflect"
            else f"each member imitates a better neighbour (Fermi, beta {p.revision.beta:g})"
        )
        return (
            f"ultimatum-game population of {p.agents} agents on a {p.network.kind} network, {p.generations} "
            f"generations, {how}; {members}; members {scenario.models.user.spec} as role user, MetaLM "
            f"{scenario.models.meta.spec}"
        )

    def calls(self, scenario: PopulationScenarioSettings) -> list[Calls]:
        """First asks: the moves; a scored reading (and a guided or rule responder) reads the principle with five
        calls per member's move (cache hits after the first, as the reading's seed is the principle's); the
        revisions between generations."""
        p, user = scenario.population, scenario.models.user
        fixed, assistant = count_agents(p), count_agents(p, lambda m: m.strategy == ASSISTANT)
        episodes = 2 * network_edges(scenario) * self.rounds * p.generations
        revisions = (assistant if p.revision.rule == "imitate" else p.agents - fixed) * (p.generations - 1)
        learners = (p.agents - fixed) / p.agents  # members' share of the proposals and the decisions
        readings = 5 * episodes * learners * ((self.reading == "scored") + (self.responder != "paper"))
        return [
            Calls("user and assistant (moves, first asks)", user, 2 * episodes, 400),
            Calls("user and assistant (principle readings, at most)", user, round(readings), 500),
            Calls("meta (revisions, first asks)", scenario.models.meta, revisions, 1500),
        ]
