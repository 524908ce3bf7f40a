"""The donor-game population's LLM calls: strategies written, donations, and the revisions' rewrites.

Every call goes through one model stack (cache, transcript, budget) as role
`user`, with a seed from the run's seed tree: the strategies and rewrites
from `Branch.POLICY` (generation, slot, and which rewrite), the donations
from `Branch.EPISODE` (generation, game, round, donor, attempt). An
unreadable donation is asked again up to `game.retries` times, then
recorded as an illegal move (`DonorMove(None, None, answer)`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NotRequired

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from typing_extensions import TypedDict

from prompts import render
from sandbox.base.seeding import Branch, call_seed
from sandbox.llm.contracts import CallInfo
from sandbox.llm.moves import note_move
from sandbox.llm.wrapper import acall
from sandbox.population.games.donor.rules import DonorMove, DonorView, parse_donation, parse_strategy, trace_text
from sandbox.population.games.donor.spec import DonorSpec
from sandbox.population.settings import PopulationScenarioSettings, spec_of

__all__ = ["Players", "Survivor", "WrittenStrategy"]


class WrittenStrategy(TypedDict):
    """A strategy an agent wrote: the text (from "My strategy will be" on, or the whole answer), whether the sentence
    was found, the justification before it, and for a revision what the agent was shown."""

    strategy: str
    found: bool
    justification: str
    evidence: NotRequired[str]


class Survivor(TypedDict):
    """A survivor of the last selection, as a new agent's prompt shows it: its name, strategy, score and norm id."""

    name: str
    strategy: str
    score: float
    norm: int | None


class Players:
    """The population's LLM calls (strategies, donations, revisions), through one model stack."""

    def __init__(self, scenario: PopulationScenarioSettings, model: BaseChatModel) -> None:
        self.scenario, self.model = scenario, model
        game = spec_of(scenario, DonorSpec)
        self.game = game
        share = scenario.population.revision.survivors
        self.common = {
            "punishment": game.punishment,
            "punishment_loss": game.punishment_loss,
            "trace_depth": game.trace_depth,
            "network": game.pairing == "network",
        }
        self.system = render(
            "population/donor/system.j2",
            endowment=game.endowment,
            multiplier=game.multiplier,
            rule=scenario.population.revision.rule,
            survivors_text="half" if share == 0.5 else f"{round(100 * share)}%",
            **self.common,
        )

    async def _ask(self, prompt: str, *, seed: int, call: CallInfo) -> str:
        answer = await acall(self.model, [SystemMessage(self.system), HumanMessage(prompt)], seed=seed, call=call)
        return str(answer.content).strip()

    async def _write(self, prompt: str, name: str, epoch: int, step: str, seed: int) -> WrittenStrategy:
        call = CallInfo(role="user", agent=name, run=0, epoch=epoch, step=step)
        justification, strategy, found = parse_strategy(await self._ask(prompt, seed=seed, call=call))
        return {"strategy": strategy, "found": found, "justification": justification}

    async def strategy(self, name: str, generation: int, slot: int, survivors: Sequence[Survivor]) -> WrittenStrategy:
        """A strategy from the game's description (`survivors` empty) or from the survivors' (`select`)."""
        revision = self.scenario.population.revision
        if survivors:
            prompt = render(
                "population/donor/inherit.j2",
                agent=name,
                survivors=survivors,
                show_scores=revision.show_scores,
                survivors_percent=round(100 * revision.survivors),
                **self.common,
            )
        else:
            prompt = render("population/donor/strategy.j2", agent=name, **self.common)
        return await self._write(
            prompt, name, generation, "strategy", call_seed(self.scenario.seed, Branch.POLICY, generation, slot)
        )

    async def rewrite(self, name: str, generation: int, slot: int) -> WrittenStrategy:
        """`mutate`: a new strategy written freely, from the game's description, after generation `generation` (the
        prompt names the next generation, so it is not the first generation's prompt again)."""
        prompt = render("population/donor/strategy.j2", agent=name, rewrite_generation=generation + 2, **self.common)
        return await self._write(
            prompt, name, generation, "mutate", call_seed(self.scenario.seed, Branch.POLICY, generation, slot, 1)
        )

    async def reflect(self, name: str, strategy: str, generation: int, slot: int, evidence: str) -> WrittenStrategy:
        """`reflect`: the agent's MetaLM rewrites its strategy from what happened to it in generation `generation`."""
        prompt = render(
            "population/donor/reflect.j2", agent=name, strategy=strategy, generation=generation + 1, evidence=evidence
        )
        written = await self._write(
            prompt, name, generation, "reflect", call_seed(self.scenario.seed, Branch.POLICY, generation, slot, 2)
        )
        return {**written, "evidence": evidence}

    async def merge(
        self,
        name: str,
        own: str,
        own_score: float,
        other: str,
        theirs: str,
        their_score: float,
        generation: int,
        slot: int,
    ) -> WrittenStrategy:
        """`imitate` with `adopt: merge`: the LLM merges a neighbour's strategy into the agent's own."""
        prompt = render(
            "population/donor/merge.j2",
            agent=name,
            own=own,
            own_score=own_score,
            other=other,
            theirs=theirs,
            their_score=their_score,
        )
        written = await self._write(
            prompt, name, generation, "merge", call_seed(self.scenario.seed, Branch.POLICY, generation, slot, 3)
        )
        return {**written, "evidence": f"{other} (score {their_score:g}): {theirs}"}

    async def donate(
        self, view: DonorView, names: Sequence[str], strategies: Sequence[str], generation: int
    ) -> tuple[DonorMove, int]:
        game = self.game
        prompt = render(
            "population/donor/donate.j2",
            agent=names[view.donor],
            strategy=strategies[view.donor],
            generation=generation + 1,
            round=view.round + 1,
            recipient=names[view.recipient],
            recipient_resources=view.recipient_resources,
            resources=view.donor_resources,
            trace=trace_text(view.trace, names),
            punishment=game.punishment,
            multiplier=game.multiplier,
            punishment_loss=game.punishment_loss,
        )
        answer = ""
        for attempt in range(game.retries + 1):
            call = CallInfo(
                role="user",
                agent=names[view.donor],
                run=0,
                epoch=generation,
                episode=f"game{view.game}/round{view.round}",
                step="donate",
                attempt=attempt,
            )
            seed = call_seed(self.scenario.seed, Branch.EPISODE, generation, view.game, view.round, view.donor, attempt)
            answer = await self._ask(prompt, seed=seed, call=call)
            move = parse_donation(answer, game.punishment)
            note_move(call, None if move is None else {"action": move[0], "amount": move[1]})
            if move is not None:
                return DonorMove(move[0], move[1], answer), attempt + 1
        return DonorMove(None, None, answer), game.retries + 1
