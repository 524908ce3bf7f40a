"""The public goods game's members as its state holds them (`GoodsMember`, with what each saw of its group's
periods, `Seen`), and the LLM members' calls (`Players`): a contribution, and with punishment the points for each
groupmate, each asked again while its answer is unreadable (`game.retries`), then illegal (None)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from typing_extensions import TypedDict

from prompts import render, render_once
from sandbox.base.seeding import Branch, call_seed
from sandbox.llm.contracts import CallInfo
from sandbox.llm.moves import note_move
from sandbox.llm.wrapper import acall
from sandbox.population.games.public_goods.rules import parse_contribution, parse_points
from sandbox.population.games.public_goods.spec import PublicGoodsSpec
from sandbox.population.settings import PopulationScenarioSettings, spec_of

__all__ = ["GoodsMember", "Players", "Seen"]

T = TypeVar("T")  # a parsed answer: a contribution, or the points for each groupmate


class Seen(TypedDict):
    """What a member saw of a period: the period (from 1), its own contribution, its groupmates', its payoff and the
    points it received."""

    period: int
    own: int
    others: list[int]
    income: float
    received: int


class GoodsMember(TypedDict):
    """A member: its name, the scenario's member it started as (its index), its kind (a scripted type, or `llm`),
    its norm's id and text (None and "" for a scripted type), what it saw of its group's last periods, and a
    scripted type's belief about its groupmates' mean contribution (None for an LLM member)."""

    name: str
    member: int
    kind: str
    norm: int | None
    strategy: str
    history: list[Seen]
    belief: float | None


class Players:
    """The LLM members' calls: a contribution, and with punishment the points for each groupmate."""

    def __init__(self, scenario: PopulationScenarioSettings, model: BaseChatModel) -> None:
        self.scenario, self.model, self.game = scenario, model, spec_of(scenario, PublicGoodsSpec)

    def _system(self, agent: GoodsMember) -> str:
        game = self.game
        return render_once(
            "population/public_goods/system.j2",
            norm=agent["strategy"],
            member=agent["name"],
            size=game.group_size,
            periods=self.scenario.population.generations,
            endowment=game.endowment,
            mpcr=game.mpcr,
            punishment=game.punishment,
            max_points=game.max_points,
            point_cost=game.point_cost,
            point_effect=game.point_effect,
            matching=game.matching,
        )

    async def _ask(
        self, agent: GoodsMember, prompt: str, g: int, i: int, step: str, parse: Callable[[str], T | None]
    ) -> tuple[T | None, int]:
        """The parsed answer (None: illegal after the retries) and the attempts made."""
        system = self._system(agent)
        for attempt in range(self.game.retries + 1):
            call = CallInfo(
                role="user", agent=agent["name"], run=0, epoch=g, episode=f"period{g}", step=step, attempt=attempt
            )
            seed = call_seed(self.scenario.seed, Branch.EPISODE, g, i, 0 if step == "contribute" else 1, attempt)
            answer = await acall(self.model, [SystemMessage(system), HumanMessage(prompt)], seed=seed, call=call)
            parsed = parse(str(answer.content))
            note_move(call, parsed)
            if parsed is not None:
                return parsed, attempt + 1
        return None, self.game.retries + 1

    async def contribution(self, agent: GoodsMember, g: int, i: int) -> tuple[int | None, int]:
        game = self.game
        prompt = render(
            "population/public_goods/contribute.j2",
            history=agent["history"][-game.shown :] if game.shown else [],
            punishment=game.punishment,
            period=g + 1,
            periods=self.scenario.population.generations,
            endowment=game.endowment,
        )
        return await self._ask(agent, prompt, g, i, "contribute", lambda text: parse_contribution(text, game.endowment))

    async def points(
        self, agent: GoodsMember, own: int, others: Sequence[tuple[str, int]], income: float, g: int, i: int
    ) -> tuple[list[int] | None, int]:
        game = self.game
        prompt = render(
            "population/public_goods/punish.j2",
            period=g + 1,
            own=own,
            others=list(others),
            income=income,
            max_points=game.max_points,
            point_cost=game.point_cost,
            point_effect=game.point_effect,
        )
        names = [name for name, _ in others]
        return await self._ask(agent, prompt, g, i, "punish", lambda text: parse_points(text, names, game.max_points))
