"""The speaking agents of dialogue games: an agent speaks under an instruction; which instruction, is its policy.

* `InstructedSpeaker` writes a message for a prompt under a seed (the
  expansion of a dialogue game speaks through it).
* `BaselineSpeaker` always takes the baseline instruction "any".
* `GuidedSpeaker` samples its instruction from a solved policy (a `policy.csv`
  of `sandbox solve`) at its information state. A state the solver never saw
  (a message the tree does not hold, as when play draws fresh seeds) gets
  the solver's mean policy over the player's states at the same depth, and
  the choice is marked as a fallback (its rate is per guided decision).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel

from sandbox.llm.contracts import CallInfo
from sandbox.llm.wrapper import acall
from sandbox.rules.dialogue import ANY, Prompt

__all__ = ["BaselineSpeaker", "Choice", "GuidedSpeaker", "InstructedSpeaker"]


@dataclass(frozen=True)
class InstructedSpeaker:
    """Writes messages with `model`: the prompt already carries the instruction."""

    model: BaseChatModel

    async def speak(self, prompt: Prompt, seed: int, *, speaker: str, episode: str) -> str:
        kwargs: dict[str, Any] = {
            "seed": seed,
            "max_tokens": prompt.max_tokens,
            "call": CallInfo(role="players", agent=speaker, episode=episode, step="message"),
        }
        if prompt.constraint is not None:
            kwargs["constraint"] = prompt.constraint
        answer = await acall(self.model, list(prompt.messages), **kwargs)
        return str(answer.content).strip()


@dataclass(frozen=True)
class Choice:
    """An instruction chosen, and whether the solver's policy covered the state."""

    instruction: str
    fallback: bool = False


class BaselineSpeaker:
    """Always "any" (the paper's baseline LLM)."""

    name = "any"

    def choose(self, infostate: str, depth: int, instructions: tuple[str, ...], rng: np.random.Generator) -> Choice:
        return Choice(ANY if ANY in instructions else instructions[0])


@dataclass
class GuidedSpeaker:
    """Samples its instruction from a solved policy: `table[infostate] = {instruction: probability}`."""

    table: dict[str, dict[str, float]]
    depths: dict[str, int]
    name: str = "solver"
    _by_depth: dict[int, dict[str, float]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        sums: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        counts: dict[int, int] = defaultdict(int)
        for key, probs in self.table.items():
            depth = self.depths[key]
            counts[depth] += 1
            for instruction, p in probs.items():
                sums[depth][instruction] += p
        self._by_depth = {d: {i: p / counts[d] for i, p in probs.items()} for d, probs in sums.items()}

    @classmethod
    def from_policy(cls, policy: Any, player: int) -> GuidedSpeaker:
        """From a `policy.csv` frame (`sandbox.dialogue.run.policy_frame`), for one player."""
        mine = policy[policy["player"] == player]
        table: dict[str, dict[str, float]] = defaultdict(dict)
        depths: dict[str, int] = {}
        for row in mine.itertuples():
            table[row.infostate_text][row.instruction] = float(row.probability)
            depths[row.infostate_text] = int(row.depth)
        return cls(dict(table), depths)

    def choose(self, infostate: str, depth: int, instructions: tuple[str, ...], rng: np.random.Generator) -> Choice:
        probs, fallback = self.table.get(infostate), False
        if probs is None:
            probs, fallback = self._by_depth.get(depth), True
        if not probs:
            return Choice(ANY if ANY in instructions else instructions[0], fallback=True)
        weights = np.array([probs.get(i, 0.0) for i in instructions])
        weights = weights / weights.sum() if weights.sum() > 0 else np.full(len(instructions), 1 / len(instructions))
        return Choice(instructions[int(rng.choice(len(instructions), p=weights))], fallback)
