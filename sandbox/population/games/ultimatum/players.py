"""The ultimatum game's players and MetaLMs through the run's model stack (`Players`): a generation's episodes, each
SCAI's `play_ultimatum` (`play_generation`), and the agents' revision of their principles (`revise_agents`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from agents.assistant import PolicyFollowingAssistant
from agents.meta import Interaction, MetaLM, Revision
from agents.user import NormFollowingUser
from sandbox.base.seeding import Branch, call_seed, generator, seed_node
from sandbox.llm.contracts import CallInfo
from sandbox.population.game import ModelOf
from sandbox.population.games.ultimatum.records import Episode, UltimatumAgent
from sandbox.population.games.ultimatum.spec import UltimatumSpec
from sandbox.population.network import Neighbours
from sandbox.population.revision.texts import NormRow, RevisionRow, revise_principles
from sandbox.population.settings import ASSISTANT, PopulationScenarioSettings, spec_of
from sandbox.rules.ultimatum import Stake
from sandbox.rules.ultimatum_episode import play_ultimatum
from sandbox.society.nodes import draw_stakes
from societies.contracts import UserProfile
from societies.manners import MANNERS
from societies.norms import NORMS, resolve_norm

__all__ = ["Players", "play_generation", "revise_agents"]


class Players:
    """The generation's players and MetaLMs, through the run's model stack."""

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf) -> None:
        self.scenario, self.game = scenario, spec_of(scenario, UltimatumSpec)
        self.model = model  # a role's model is built when first used: an unread role's backend never is

    # SCAI's user or assistant: an `UltimatumPlayer`, save that the protocol asks settable `agent_id` and `remarks`
    # where they give read-only ones (a property, a frozen field)
    def player(self, agent: UltimatumAgent, i: int) -> Any:
        game = self.game
        if agent["kind"] == "fixed":
            norm = (
                NORMS.get(agent["label"])
                if agent["label"] in NORMS.names()
                else resolve_norm(f"norm{agent['norm']}", agent["strategy"])
            )
            return NormFollowingUser(UserProfile(i, norm, MANNERS.get("neutral")), self.model("user"), rules=game.rules)
        model = self.model(ASSISTANT if agent["kind"] == ASSISTANT else "user")
        return PolicyFollowingAssistant(
            policy=agent["strategy"],
            model=model,
            agent_id=agent["name"],
            rules=game.rules,
            reading=game.reading,
            responder=game.responder,
        )

    async def revise(self, agent: UltimatumAgent, interactions: Sequence[Interaction], g: int, i: int) -> Revision:
        meta = MetaLM(self.model("meta"), max_reasks=self.game.meta_reasks)
        seeds = [call_seed(self.scenario.seed, Branch.META, g, i, a) for a in range(self.game.meta_reasks + 2)]
        call = CallInfo(role="meta", agent=agent["name"], run=0, epoch=g, step="revise")
        return await meta.revise(agent["strategy"], interactions, seeds=seeds, call=call)


def _interaction(record: Episode, flex: str) -> Interaction:
    """An episode as a MetaLM reads it, `flex` (an agent's name, or the assistant) the flex-policy agent."""
    return Interaction.from_episode(record, lambda name: name == flex)


async def play_generation(
    scenario: PopulationScenarioSettings,
    players: Players,
    agents: list[UltimatumAgent],
    g: int,
    pairs: list[tuple[int, int]],
) -> list[Episode]:
    """Generation `g`'s episodes, played at once: each pair proposes both ways `game.rounds` times, at stakes drawn
    as SCAI draws them."""
    game = spec_of(scenario, UltimatumSpec)
    episodes = [(a, b) for _ in range(game.rounds) for x, y in pairs for a, b in ((x, y), (y, x))]
    amounts, currencies = draw_stakes(
        SimpleNamespace(seed=scenario.seed, game=game), 0, g, generator(scenario.seed, Branch.EPOCH, g), len(episodes)
    )
    lineup = [players.player(a, i) for i, a in enumerate(agents)]

    async def one(k: int, a: int, b: int) -> Episode:
        stake = Stake(amounts[k], game.currencies[currencies[k]])
        record = await play_ultimatum(
            lineup[a],
            lineup[b],
            stake,
            seed=seed_node(scenario.seed, Branch.EPISODE, g, k),
            info={"run": 0, "epoch": g, "episode": f"g{g}-i{k:05d}", "index": k},
            max_reasks=game.max_reasks,
        )
        return Episode(
            run=record["run"],
            epoch=record["epoch"],
            episode=record["episode"],
            index=record["index"],
            proposer=record["proposer"],
            responder=record["responder"],
            amount=record["amount"],
            currency=record["currency"],
            proposal=record["proposal"],
            proposal_legal=record["proposal_legal"],
            proposal_illegal_answers=record["proposal_illegal_answers"],
            proposer_part=record["proposer_part"],
            responder_part=record["responder_part"],
            offered_share=record["offered_share"],
            response=record["response"],
            decision=record["decision"],
            decision_legal=record["decision_legal"],
            response_illegal_answers=record["response_illegal_answers"],
            proposer_payoff=record["proposer_payoff"],
            responder_payoff=record["responder_payoff"],
            proposer_instruction=record["proposer_instruction"],
            responder_instruction=record["responder_instruction"],
            a=a,
            b=b,
        )

    return list(await asyncio.gather(*(one(k, a, b) for k, (a, b) in enumerate(episodes))))


async def revise_agents(
    scenario: PopulationScenarioSettings,
    players: Players,
    agents: list[UltimatumAgent],
    g: int,
    records: Sequence[Episode],
    scores: np.ndarray,
    neighbours: Neighbours,
    next_id: int,
) -> tuple[list[UltimatumAgent], list[NormRow], list[RevisionRow], int]:
    """The agents after generation `g`'s revision (`revise_principles`): the assistant's MetaLM reads a sample of the
    generation's interactions; under reflect, each member's MetaLM reads its own."""
    revision, game = scenario.population.revision, spec_of(scenario, UltimatumSpec)

    def own(i: int) -> list[Episode]:
        return [r for r in records if i in (r["a"], r["b"])]

    def ask(i: int) -> Awaitable[Revision] | None:
        agent = agents[i]
        if agent["kind"] == ASSISTANT:
            order = generator(scenario.seed, Branch.META, g, i).permutation(len(records))[: game.assistant_interactions]
            return players.revise(agent, [_interaction(records[k], agent["name"]) for k in sorted(order)], g, i)
        if revision.rule == "reflect":
            return players.revise(agent, [_interaction(r, agent["name"]) for r in own(i)], g, i)
        return None

    def evidence(i: int) -> str:
        if agents[i]["kind"] == ASSISTANT:
            return f"{min(len(records), game.assistant_interactions)} interactions of the generation"
        return f"{len(own(i))} own interactions"

    return await revise_principles(
        agents,
        g,
        scores,
        neighbours,
        rule=revision.rule,
        beta=revision.beta,
        rng=generator(scenario.seed, Branch.META, g),
        ask=ask,
        evidence=evidence,
        next_id=next_id,
    )
