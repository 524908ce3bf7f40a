"""The naming game's LLM players (`sandbox.population.games.naming.llm`): one agent's pick of a name through the
run's model stack, asked again while unreadable (`Players`), how an answer is read (`parse_name`), and the score an
agent's memory shows it (`memory_score`)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from prompts import render, render_once
from sandbox.base.seeding import Branch, call_seed, seed_node
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.llm.moves import note_move
from sandbox.llm.wrapper import acall
from sandbox.population.games.naming.records import NamingAgent, Remembered
from sandbox.population.games.naming.spec import NamingSpec
from sandbox.population.settings import PopulationScenarioSettings, spec_of

__all__ = ["VALUE_PREFIX", "Players", "memory_score", "parse_name", "pick_of", "play_pair"]

VALUE_PREFIX = "{'value': '"
_BRACED = re.compile(r"""\{\s*['"]?value['"]?\s*[:=]\s*['"<\[]?\s*([A-Za-z0-9]+)""", re.IGNORECASE)
_VALUE = re.compile(r"""['"]?value['"]?\s*[:=]\s*['"<\[]?\s*([A-Za-z0-9]+)""", re.IGNORECASE)


def parse_name(answer: str, words: Sequence[str]) -> str | None:
    """The name in the answer's last `{'value': X` (the code's answer format; failing that, its last `value: X`),
    or the answer itself when it is a bare name, if it is one of `words`; else None. Only that one value counts: a
    word mentioned elsewhere in the answer never stands in for a value that is not a word.

    >>> parse_name("{'value': 'M'; 'reason': 'M paid before'}", ["Q", "M"])
    'M'
    >>> parse_name("Player 2's value: M before. {'value': 'Q'; 'reason': 'Q paid'}", ["Q", "M"])
    'Q'
    >>> parse_name("{'value': 'Z'; 'reason': 'value: Q failed'}", ["Q", "M"]) is None
    True
    >>> parse_name("I pick Q.", ["Q", "M"]) is None
    True
    >>> parse_name("M", ["Q", "M"])  # a bare name: a server that held the answer to the words without the prefix
    'M'
    """
    found = list(_BRACED.finditer(answer)) or list(_VALUE.finditer(answer))
    bare = answer.strip().strip("'\"{}")
    value = found[-1].group(1) if found else bare if re.fullmatch(r"[A-Za-z0-9]+", bare) else None
    return next((w for w in words if value is not None and value.lower() == w.lower()), None)


class Players:
    """The LLM calls: one agent's pick, asked again while unreadable."""

    def __init__(self, scenario: PopulationScenarioSettings, model: BaseChatModel) -> None:
        self.scenario, self.model, self.game = scenario, model, spec_of(scenario, NamingSpec)
        constrained = Constraint(prefix=VALUE_PREFIX, choices=tuple(self.game.words))  # the code's format, held
        self.constraint = {"constraint": constrained} if self.game.answer == "constrained" else {}

    async def pick(self, agent: int, memory: Sequence[Remembered], g: int, i: int, side: int) -> tuple[str | None, int]:
        game = self.game
        order = np.random.default_rng(seed_node(self.scenario.seed, Branch.EPISODE, g, i, side)).permutation(
            len(game.words)
        )
        words = tuple(game.words[k] for k in order)
        system = render_once("population/naming/system.j2", words=words, reward=game.reward, penalty=game.penalty)
        history = [
            {"round": k + 1, "own": m["own"] or "none", "other": m["other"] or "none", "payoff": m["payoff"]}
            for k, m in enumerate(memory)
        ]
        prompt = (
            render("population/naming/choose.j2", history=history, round=len(memory) + 1, score=memory_score(memory))
            if memory
            else render_once("population/naming/choose.j2", history=(), round=1, score=0)  # a first interaction's
        )
        for attempt in range(game.retries + 1):
            seed = call_seed(self.scenario.seed, Branch.EPISODE, g, i, side, attempt)
            call = CallInfo(
                role="user",
                agent=f"agent{agent}",
                run=0,
                epoch=g,
                episode=f"interaction{i}",
                step="pick",
                attempt=attempt,
            )
            answer = await acall(
                self.model, [SystemMessage(system), HumanMessage(prompt)], seed=seed, call=call, **self.constraint
            )
            name = parse_name(str(answer.content), game.words)
            note_move(call, name)
            if name is not None:
                return name, attempt + 1
        return None, game.retries + 1


def memory_score(memory: Sequence[Remembered]) -> float:
    """The score an agent's memory shows it: the sum of its payoffs."""
    return sum(m["payoff"] for m in memory)


async def pick_of(
    players: Players, agent: NamingAgent, x: int, g: int, index: int, side: int
) -> tuple[str | None, int]:
    """Agent `x`'s pick in interaction `index` (0-based, over the run) and its attempts: a committed agent's word,
    without a call; else the LLM's."""
    if agent["committed"]:
        return agent["committed"], 0
    return await players.pick(x, agent["memory"], g, index, side)


async def play_pair(
    players: Players, agents: Mapping[int, NamingAgent] | list[NamingAgent], g: int, k: int, a: int, b: int
) -> list[tuple[str | None, int]]:
    """Interaction `k`'s two picks, asked at once (`agents`: the population, or those of its agents the round's
    pairs involve, by index): what a Ray actor plays (`sandbox.population.actors.llm`)."""
    return list(await asyncio.gather(pick_of(players, agents[a], a, g, k, 0), pick_of(players, agents[b], b, g, k, 1)))
