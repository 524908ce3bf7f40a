"""GovSim's fishers' calls (Piatti et al. 2024, the authors' prompts in `prompts/population/commons/`): each fisher's
system prompt and memories, the harvest ask (asked again while unreadable, then an illegal move), an utterance at
the restaurant, the chat's summary and agreed limit, and the two notes after a chat. The month's steps are in
`sandbox.population.games.commons.game`."""

from __future__ import annotations

import asyncio

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from prompts import render
from sandbox.base.seeding import Branch, call_seed
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.llm.moves import note_move
from sandbox.llm.wrapper import acall
from sandbox.population.games.commons.chat import comma_and, parse_limit, parse_utterance
from sandbox.population.games.commons.memory import date_of, sentence
from sandbox.population.games.commons.records import Ask, Memory
from sandbox.population.games.commons.rules import parse_harvest
from sandbox.population.games.commons.spec import CommonsSpec
from sandbox.population.settings import PopulationScenarioSettings, spec_of

HARVEST, UTTER, SUMMARY, LIMIT, PLANNING, INTERESTING = range(6)  # the seed tree's node for each kind of call

__all__ = ["Fishers"]


class Fishers:
    """The LLM calls of a month, each with its own node of the seed tree."""

    def __init__(self, scenario: PopulationScenarioSettings, model: BaseChatModel, names: list[str]) -> None:
        game = spec_of(scenario, CommonsSpec)
        if not isinstance(game, CommonsSpec):
            raise TypeError(f"GovSim's fishers play the commons game, not the {game.kind} game")
        self.scenario, self.model, self.game, self.names = scenario, model, game, names
        self.constrained = self.game.answer == "constrained"

    def system(self, agent: int) -> str:
        return render(
            "population/commons/system.j2",
            fisher=self.names[agent],
            capacity=self.game.capacity,
            others=[n for i, n in enumerate(self.names) if i != agent],
            talk=self.game.talk,
        )

    def call(self, agent: int, g: int, kind: int, index: int, step: str, attempt: int) -> CallInfo:
        """Who makes the call and where it falls (recorded with it)."""
        return CallInfo(
            role="user",
            agent=self.names[agent] if agent >= 0 else "framework",
            run=0,
            epoch=g,
            episode=f"month{g}" + (f"/step{index}" if kind == UTTER else ""),
            step=step,
            attempt=attempt,
        )

    async def ask(
        self,
        agent: int,
        prompt: str | list[BaseMessage],
        g: int,
        kind: int,
        index: int,
        step: str,
        attempt: int = 0,
        constraint: Constraint | None = None,
    ) -> str:
        """One call; `prompt` is the user turn, or the turns after the system prompt (a re-ask)."""
        call = self.call(agent, g, kind, index, step, attempt)
        turns = [HumanMessage(prompt)] if isinstance(prompt, str) else prompt
        messages = [SystemMessage(self.system(agent)), *turns] if agent >= 0 else turns
        extra = {"constraint": constraint} if constraint is not None else {}
        answer = await acall(
            self.model,
            messages,
            call=call,
            seed=call_seed(self.scenario.seed, Branch.EPISODE, g, kind, index, attempt),
            **extra,
        )
        return str(answer.content)

    async def harvest(self, agent: int, memories: list[Memory], stock: int, g: int) -> Ask:
        """The ask; an unreadable answer is asked again with the answer and the format restated (a new prompt, so a
        cached temperature-0 answer is not simply repeated)."""
        prompt = render(
            "population/commons/harvest.j2",
            date=date_of(g),
            fisher=self.names[agent],
            memories=memories,
            stock=stock,
            reason=not self.constrained,
        )
        constraint = (
            Constraint(prefix="Answer: ", grammar="root ::= [0-9] [0-9]? [0-9]?", regex=r"Answer: \d{1,3}")
            if self.constrained
            else None
        )
        turns: list[BaseMessage] = [HumanMessage(prompt)]
        for attempt in range(self.game.retries + 1):
            answer = await self.ask(agent, turns, g, HARVEST, agent, "harvest", attempt, constraint)
            ask = parse_harvest(answer)
            note_move(self.call(agent, g, HARVEST, agent, "harvest", attempt), ask)
            if ask is not None:
                return Ask(tons=ask, attempts=attempt + 1)
            turns += [
                AIMessage(answer),
                HumanMessage(
                    'Your answer had no number of tons after "Answer:". Put the '
                    'final answer after "Answer:", example Answer: N tons.'
                ),
            ]
        return Ask(tons=None, attempts=self.game.retries + 1)

    async def utter(
        self, agent: int, memories: list[Memory], conversation: list[tuple[str, str]], speakers: list[str], g: int
    ) -> tuple[str, bool | None, str | None]:
        prompt = render(
            "population/commons/converse.j2",
            date=date_of(g, chat=True),
            fisher=self.names[agent],
            memories=memories,
            members=comma_and(speakers),
            conversation=conversation,
        )
        grammar = None
        if self.constrained:  # the code's options: every fisher in the chat, the speaker included
            who = " | ".join(f'"{s}"' for s in speakers)
            grammar = (
                r'root ::= [^\n]+ "\nConversation conclusion by me: " ("yes" | "no") "\nNext speaker: " ('
                f"{who})"
            )
        answer = await self.ask(
            agent,
            prompt,
            g,
            UTTER,
            len(conversation),
            "talk",
            constraint=Constraint(prefix="Response: ", grammar=grammar),
        )  # the code's prefill
        return parse_utterance(answer, speakers)

    async def summarize(self, conversation: list[tuple[str, str]], g: int) -> str:
        prompt = (
            "Conversation:\n"
            + "".join(f"-{s}: {u}\n" for s, u in conversation)
            + "\nSummarize the conversation above in one sentence."
        )
        return sentence(await self.ask(-1, prompt, g, SUMMARY, 0, "summary"))

    async def limit(self, conversation: list[tuple[str, str]], g: int) -> tuple[int | None, str]:
        prompt = render("population/commons/limit.j2", conversation=conversation, reason=not self.constrained)
        constraint = (
            Constraint(
                prefix="Answer: ", grammar='root ::= [0-9] [0-9]? [0-9]? | "N/A"', regex=r"Answer: (\d{1,3}|N/A)"
            )
            if self.constrained
            else None
        )
        answer = await self.ask(-1, prompt, g, LIMIT, 0, "limit", constraint=constraint)
        return parse_limit(answer), answer

    async def notes(self, agent: int, conversation: list[tuple[str, str]], g: int) -> tuple[str, str]:
        planning = render("population/commons/plan.j2", conversation=conversation)
        interesting = planning.replace("you need to remember for your planning", "you might have found interesting")
        answers = await asyncio.gather(
            self.ask(agent, planning, g, PLANNING, agent, "planning"),
            self.ask(agent, interesting, g, INTERESTING, agent, "interesting"),
        )
        return sentence(answers[0]), sentence(answers[1])
