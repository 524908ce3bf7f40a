"""Contracts of dialogue games: a game's setup, its messages, its outcome, and what a domain supplies.

A dialogue game is split along the paper's axes (Gemp et al., "Steering
language models with game-theoretic solvers"): players and their private
information (a `Setup`, drawn by the root chance node), the instructions
each player may be given (its actions; "any" is the baseline), the message
prompt, termination, and payoffs. A `Domain` supplies the parts that differ
between games; the expansion (`sandbox.dialogue.expand`) and the OpenSpiel
binding (`sandbox.dialogue.spiel`) are the same for all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from langchain_core.messages import BaseMessage

from sandbox.llm.contracts import Constraint

ANY = "any"  # the baseline instruction: the model speaks without a steer


@dataclass(frozen=True)
class Setup:
    """One initial state: each player's private information and what is public.

    Attributes:
        players: The players' names, in turn order (player 0 speaks first).
        private: Per player, its private information as `{label: text}` (the
            label is what the prompt calls it, e.g. "Fruit endowment").
        public: What every player knows (a topic, a stake), as `{key: value}`.
        data: The same information in machine form, for the payoff rules
            (e.g. valuations as numbers); never shown to a model.
    """

    players: tuple[str, ...]
    private: tuple[dict[str, str], ...]
    public: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)

    def info_text(self, player: int) -> str:
        """`player`'s private information as lines `label: text`."""
        return "\n".join(f"{label}: {text}" for label, text in self.private[player].items())


@dataclass(frozen=True)
class Message:
    """A message of the public dialogue, with the instruction its speaker was given (private to the speaker)."""

    speaker: int
    instruction: str
    text: str
    seed_index: int = 0


def said(setup: Setup, message: Message) -> str:
    """A message as `Name: text`."""
    return f"{setup.players[message.speaker]}: {message.text}"


def dialogue_text(setup: Setup, dialogue: tuple[Message, ...], *, sep: str = "\n\n") -> str:
    """The public dialogue, one `Name: text` line per message, joined by `sep`."""
    return sep.join(said(setup, m) for m in dialogue)


@dataclass(frozen=True)
class Outcome:
    """How a finished dialogue pays: one payoff per player; `illegal` says why a move could not be read."""

    payoffs: tuple[float, ...]
    illegal: str | None = None


@dataclass(frozen=True)
class Prompt:
    """A message to generate: the chat messages and the structured output the backend should enforce."""

    messages: tuple[BaseMessage, ...]
    constraint: Constraint | None = None
    max_tokens: int = 128

    def key(self) -> tuple[Any, ...]:
        """What makes two prompts the same call (for de-duplication within a level)."""
        constraint = None if self.constraint is None else repr(self.constraint.key())
        return (tuple((m.type, str(m.content)) for m in self.messages), constraint, self.max_tokens)


@runtime_checkable
class Domain(Protocol):
    """What a dialogue game supplies: setups, prompts, termination and payoffs.

    `over` and `payoffs` are deterministic functions of the setup and the
    dialogue. `over` returns None when the domain has no rule (the message
    limit, or the LLM judge, decides). `payoffs` returns None when the
    domain's payoff comes from the LLM reward model.
    """

    name: str
    zero_sum: bool

    def message(self, setup: Setup, speaker: int, instruction: str, dialogue: tuple[Message, ...]) -> Prompt:
        """The prompt for `speaker`'s next message under `instruction`."""
        ...

    def over(self, setup: Setup, dialogue: tuple[Message, ...]) -> bool | None:
        """Whether the dialogue has ended by the game's own rules (None: no rule)."""
        ...

    def payoffs(self, setup: Setup, dialogue: tuple[Message, ...]) -> Outcome | None:
        """The payoffs of a finished dialogue (None: ask the reward model)."""
        ...

    def payoff_range(self) -> tuple[float, float]:
        """The least and most a player can get (the reward model's scale, the game's utility bounds)."""
        ...
