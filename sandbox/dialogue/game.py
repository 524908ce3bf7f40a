"""A dialogue game: a domain, its setups, the instructions each player may be given, and its limits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sandbox.rules.dialogue import Domain, Message, Setup, said

Termination = Literal["rules", "judge"]
Decisions = Literal["every_message", "first_message"]


@dataclass(frozen=True)
class DialogueGame:
    """Everything that fixes a dialogue game's tree, given a deterministic `(prompt, seed) -> text` map.

    Attributes:
        domain: The domain's prompts, termination rules and payoffs.
        setups: The initial states the root chance node draws uniformly (private information per player).
        instructions: Per player, the instructions it may be given (its actions).
        max_messages: The dialogue ends after this many messages.
        seeds: The LLM seed of each chance outcome after a decision (the paper's "num_llm_seeds").
        termination: `rules`: the domain's rules and the message limit end the dialogue; `judge`: an LLM is also
            asked after every message whether the dialogue is over.
        decisions: `every_message` (the paper's): a player picks an instruction before each of its messages;
            `first_message`: before its first only, and that instruction holds for the rest of the dialogue (its
            later turns are decisions with that one action), so the tree branches (instructions)^players times
            whatever the dialogue's length.
    """

    domain: Domain
    setups: tuple[Setup, ...]
    instructions: tuple[tuple[str, ...], ...]
    max_messages: int
    seeds: tuple[int, ...]
    termination: Termination = "rules"
    decisions: Decisions = "every_message"

    def __post_init__(self) -> None:
        if not self.setups:
            raise ValueError("a dialogue game needs at least one setup")
        players = len(self.setups[0].players)
        if len(self.instructions) != players:
            raise ValueError(f"{len(self.instructions)} instruction sets for {players} players")
        if any(not own for own in self.instructions):
            raise ValueError("every player needs at least one instruction")
        if any(len(set(own)) != len(own) for own in self.instructions):
            raise ValueError("a player's instructions must be distinct")
        if self.max_messages < 1 or not self.seeds:
            raise ValueError("a dialogue game needs at least one message and one seed")

    @property
    def num_players(self) -> int:
        return len(self.setups[0].players)

    def speaker(self, dialogue: tuple[Message, ...]) -> int:
        """Who speaks next: the players take turns, player 0 first."""
        return len(dialogue) % self.num_players

    def choices(self, dialogue: tuple[Message, ...], player: int) -> tuple[str, ...]:
        """The instructions `player` may be given before its next message of `dialogue` (its actions there)."""
        if self.decisions == "first_message":
            held = next((m.instruction for m in dialogue if m.speaker == player), None)
            if held is not None:
                return (held,)
        return self.instructions[player]

    def ended(self, setup: Setup, dialogue: tuple[Message, ...]) -> bool | None:
        """Whether the dialogue has ended by the domain's rules or the message limit; None when only the LLM
        judge can tell (`termination: judge`)."""
        rule = self.domain.over(setup, dialogue)
        if rule or len(dialogue) >= self.max_messages:
            return True
        if rule is False or self.termination == "rules":
            return False
        return None

    def infostate(self, setup: int, dialogue: tuple[Message, ...], player: int) -> str:
        """`player`'s information state: its private information, its own instruction history and the dialogue.

        The own instructions keep perfect recall when a model ignores them (two histories with the same words
        but different instructions stay apart), which OpenSpiel's chat games lose.
        """
        game_setup = self.setups[setup]
        own = [m.instruction for m in dialogue if m.speaker == player]
        lines = [
            f"player {player} ({game_setup.players[player]})",
            game_setup.info_text(player),
            f"own instructions: {own}",
            "dialogue:",
        ]
        lines += [said(game_setup, m) for m in dialogue]
        return "\n".join(lines)
