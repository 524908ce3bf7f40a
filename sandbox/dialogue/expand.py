"""Expanding a dialogue game's tree once, a level at a time, every level's LLM calls in flight together.

The tree alternates decision nodes (a player picks an instruction), chance
nodes (one outcome per LLM seed) and, after each message, either the next
decision or a terminal. Pyspiel calls back one node at a time, so a game that
generated its messages on demand would make one call at a time; here every
message of a depth is generated concurrently (under the backend's concurrency
limit), identical prompts once, before the binding (`sandbox.dialogue.spiel`)
ever sees the tree. Every call goes through the run's model stack and cache
with a fixed seed, so a second expansion makes no backend calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from sandbox.dialogue.game import DialogueGame
from sandbox.rules.dialogue import Message, Outcome, Prompt, Setup

NodeKind = Literal["chance", "decision", "terminal"]


class DialogueModels(Protocol):
    """The LLM calls an expansion makes (`sandbox.dialogue.llm_calls.StackModels` puts them on a model stack)."""

    async def speak(self, prompt: Prompt, seed: int, *, speaker: str) -> str:
        """A message for `prompt`, sampled with `seed`."""
        ...

    async def is_over(self, setup: Setup, dialogue: tuple[Message, ...]) -> bool:
        """The LLM's judgment that the dialogue has ended."""
        ...

    async def reward(self, setup: Setup, dialogue: tuple[Message, ...]) -> Outcome:
        """The LLM reward model's payoffs of a finished dialogue."""
        ...


@dataclass
class Node:
    """A node of the expanded tree; `children[action]` is a node id (an instruction's index, or a seed's)."""

    id: int
    kind: NodeKind
    setup: int
    dialogue: tuple[Message, ...]
    player: int = -1  # the decision's player; -1 at chance nodes and terminals
    instruction: str | None = None  # at a seed chance node: the instruction being followed
    children: list[int] = field(default_factory=list)
    outcome: Outcome | None = None


@dataclass
class Tree:
    """The expanded game: nodes by id (0 is the root chance node over setups) and what the expansion cost."""

    game: DialogueGame
    nodes: list[Node]
    calls: dict[str, int]

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def counts(self) -> dict[str, int]:
        """Nodes by kind, and the distinct information states per player."""
        kinds = {"decision": 0, "chance": 0, "terminal": 0}
        states: set[str] = set()
        for node in self.nodes:
            kinds[node.kind] += 1
            if node.kind == "decision":
                states.add(self.game.infostate(node.setup, node.dialogue, node.player))
        return {**{f"{k}_nodes": v for k, v in kinds.items()}, "nodes": len(self.nodes), "infostates": len(states)}

    def terminals(self) -> list[Node]:
        return [node for node in self.nodes if node.kind == "terminal"]


Hook = Callable[[str, int], None]


class _Batch:
    """Calls of one level: identical keys share one call; all run together."""

    def __init__(self) -> None:
        self.jobs: dict[Any, Callable[[], Awaitable[Any]]] = {}
        self.results: dict[Any, Any] = {}

    def add(self, key: Any, job: Callable[[], Awaitable[Any]]) -> Any:
        self.jobs.setdefault(key, job)
        return key

    async def run(self, *, concurrent: bool) -> int:
        keys = list(self.jobs)
        if concurrent:
            values = await asyncio.gather(*(self.jobs[k]() for k in keys))
        else:  # the one-call-at-a-time baseline of `sandbox bench dialogue`
            values = [await self.jobs[k]() for k in keys]
        self.results = dict(zip(keys, values))
        return len(keys)


def _dialogue_key(setup: int, dialogue: tuple[Message, ...]) -> tuple[Any, ...]:
    return (setup, tuple((m.speaker, m.text) for m in dialogue))


async def expand(
    game: DialogueGame, models: DialogueModels, *, concurrent: bool = True, on_level: Hook | None = None
) -> Tree:
    """Expand `game` into a `Tree`, a depth at a time.

    Args:
        game: The dialogue game.
        models: The LLM calls (messages, the termination judge, the reward model).
        concurrent: Generate each depth's messages together (the default); False makes one call at a time.
        on_level: Called with (what, calls) after each batch of calls (`messages`, `judgments`, `rewards`).
    """
    nodes: list[Node] = [Node(0, "chance", -1, ())]
    calls = {"messages": 0, "judgments": 0, "rewards": 0}

    def new(kind: NodeKind, setup: int, dialogue: tuple[Message, ...], **kw: Any) -> Node:
        node = Node(len(nodes), kind, setup, dialogue, **kw)
        nodes.append(node)
        return node

    frontier = []
    for index in range(len(game.setups)):
        first = new("decision", index, (), player=0)
        nodes[0].children.append(first.id)
        frontier.append(first)
    while frontier:
        # 1. every message of this depth: (decision, instruction, seed) -> text
        messages = _Batch()
        pending: list[tuple[Node, int, int, Any]] = []  # (seed chance node, seed index, speaker, key)
        for node in frontier:
            setup = game.setups[node.setup]
            for instruction in game.choices(node.dialogue, node.player):
                chance = new("chance", node.setup, node.dialogue, instruction=instruction)
                node.children.append(chance.id)
                prompt = game.domain.message(setup, node.player, instruction, node.dialogue)
                for k, seed in enumerate(game.seeds):
                    name = setup.players[node.player]
                    key = messages.add(
                        (prompt.key(), seed), lambda p=prompt, s=seed, n=name: models.speak(p, s, speaker=n)
                    )
                    pending.append((chance, k, node.player, key))
        calls["messages"] += await messages.run(concurrent=concurrent)
        if on_level:
            on_level("messages", len(messages.jobs))
        # 2. the dialogues they make, and which have ended
        after: list[tuple[Node, tuple[Message, ...]]] = []
        for chance, k, speaker, key in pending:
            text = messages.results[key]
            after.append((chance, (*chance.dialogue, Message(speaker, chance.instruction or "", text, k))))
        ended: dict[int, bool] = {}
        judge = _Batch()
        for i, (chance, dialogue) in enumerate(after):
            by_rules = game.ended(game.setups[chance.setup], dialogue)
            if by_rules is None:
                judge.add(
                    _dialogue_key(chance.setup, dialogue),
                    lambda s=game.setups[chance.setup], d=dialogue: models.is_over(s, d),
                )
            else:
                ended[i] = by_rules
        if judge.jobs:
            calls["judgments"] += await judge.run(concurrent=concurrent)
            if on_level:
                on_level("judgments", len(judge.jobs))
        for i, (chance, dialogue) in enumerate(after):
            if i not in ended:
                ended[i] = bool(judge.results[_dialogue_key(chance.setup, dialogue)])
        # 3. payoffs of the finished ones (the domain's rules, else the reward model)
        rewards = _Batch()
        outcomes: dict[int, Outcome | Any] = {}
        for i, (chance, dialogue) in enumerate(after):
            if ended[i]:
                outcome = game.domain.payoffs(game.setups[chance.setup], dialogue)
                if outcome is None:
                    outcome = rewards.add(
                        ("reward", *_dialogue_key(chance.setup, dialogue)),
                        lambda s=game.setups[chance.setup], d=dialogue: models.reward(s, d),
                    )
                outcomes[i] = outcome
        if rewards.jobs:
            calls["rewards"] += await rewards.run(concurrent=concurrent)
            if on_level:
                on_level("rewards", len(rewards.jobs))
        frontier = []
        for i, (chance, dialogue) in enumerate(after):
            if ended[i]:
                outcome = outcomes[i]
                outcome = outcome if isinstance(outcome, Outcome) else rewards.results[outcome]
                child = new("terminal", chance.setup, dialogue, outcome=outcome)
            else:
                child = new("decision", chance.setup, dialogue, player=game.speaker(dialogue))
                frontier.append(child)
            chance.children.append(child.id)
    return Tree(game, nodes, calls)
