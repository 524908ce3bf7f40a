"""The LLM matrix game's players (`sandbox.population.games.matrix.llm`): the members' moves and reflections through
the run's model stack (`Members`), and one match between two of them (`play_match`), which Ray actors play too."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from agents.meta import POLICY_CONSTRAINT, PolicyError, parse_policy
from prompts import render, render_once
from sandbox.base.seeding import Branch, call_seed, generator
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.llm.moves import note_move
from sandbox.llm.wrapper import acall
from sandbox.population.games.matrix.llm_records import Turn
from sandbox.population.games.matrix.spec import MatrixSpec
from sandbox.population.games.matrix.strategies import payoff_table
from sandbox.population.revision.texts import PrincipledAgent
from sandbox.population.settings import PopulationScenarioSettings, spec_of
from sandbox.rules.matrix import Move
from sandbox.rules.matrix_prompt import ActionTokens, matrix_prompt, parse_action

__all__ = ["Members", "play_match"]


class _Revision:
    """A reflection's result, as `revise_principles` reads it."""

    def __init__(self, policy: str | None, answer: str) -> None:
        self.policy, self.answer = policy, answer


class Members:
    """The members' moves and reflections, through the run's model stack."""

    def __init__(self, scenario: PopulationScenarioSettings, model: BaseChatModel) -> None:
        self.scenario, self.model, self.game = scenario, model, spec_of(scenario, MatrixSpec)
        self.table = payoff_table(self.game.name, self.game.temptation)
        self.tokens = ActionTokens.of(self.game.tokens)
        self.constraint = (
            {"constraint": Constraint(choices=self.game.tokens)} if self.game.answer == "constrained" else {}
        )

    async def move(
        self, agent: PrincipledAgent, history: list[tuple[Move, Move]], g: int, match: int, turn: int, side: int
    ) -> tuple[Move | None, str]:
        """The agent's move (C, D, or None: illegal) and its answer."""
        shown = history[-self.game.history :] if self.game.history else []
        order = generator(self.scenario.seed, Branch.EPISODE, g, match, turn, side)
        prompt = matrix_prompt(self.table, shown, self.tokens, order)
        system = render_once("population/matrix/system.j2", principle=agent["strategy"])
        call = CallInfo(
            role="user", agent=agent["name"], run=0, epoch=g, episode=f"match{match}/turn{turn}", step="move"
        )
        answer = await acall(
            self.model,
            [SystemMessage(system), HumanMessage(prompt)],
            seed=call_seed(self.scenario.seed, Branch.EPISODE, g, match, turn, side),
            call=call,
            **self.constraint,
        )
        text = str(answer.content)
        move = parse_action(text, self.tokens)
        note_move(call, move)
        return move, text

    async def reflect(self, agent: PrincipledAgent, matches: str, payoff: float, g: int, i: int) -> _Revision:
        """The member's next principle; an answer cut off at the token limit, or not a usable principle, is illegal
        (None), as SCAI's MetaLM treats it."""
        prompt = render(
            "population/matrix/reflect.j2",
            principle=agent["strategy"],
            matches=matches,
            payoff=round(payoff, 3),
            mean=self.scenario.population.revision.payoff == "mean",
        )
        call = CallInfo(role="user", agent=agent["name"], run=0, epoch=g, step="reflect")
        answer = await acall(
            self.model,
            [HumanMessage(prompt)],
            seed=call_seed(self.scenario.seed, Branch.META, g, i),
            call=call,
            constraint=POLICY_CONSTRAINT,
        )
        text = str(answer.content).strip()
        if answer.response_metadata.get("finish_reason") == "length":
            return _Revision(None, text)
        try:
            return _Revision(parse_policy(text), text)
        except PolicyError:
            return _Revision(None, text)


async def play_match(
    members: Members, agents: Mapping[int, PrincipledAgent] | Sequence[PrincipledAgent], g: int, k: int, a: int, b: int
) -> list[Turn]:
    """One match's turns (`agents`: the population, or those of its agents the match involves, by index)."""
    table, turns = members.table, []
    history: list[tuple[Move, Move]] = []
    for t in range(members.game.turns):
        (move_a, said_a), (move_b, said_b) = await asyncio.gather(
            members.move(agents[a], history, g, k, t, 0),
            members.move(agents[b], [(y, x) for x, y in history], g, k, t, 1),
        )
        # an illegal move earns nothing and counts as a defection for the other player's payoff
        pay_a = table.payoffs(move_a, move_b or "D")[0] if move_a else 0.0
        pay_b = table.payoffs(move_b, move_a or "D")[0] if move_b else 0.0
        turns.append(
            Turn(
                move_a=move_a or "",
                move_b=move_b or "",
                answer_a=said_a,
                answer_b=said_b,
                payoff_a=pay_a,
                payoff_b=pay_b,
            )
        )
        history.append((move_a or "D", move_b or "D"))
    return turns
