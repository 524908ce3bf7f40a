"""Scripted dialogue games for the tests: Kuhn poker spoken in messages, and the instructed ultimatum game."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from sandbox.dialogue import DialogueGame, Outcome, Prompt, Setup
from sandbox.dialogue.conformance import ULTIMATUM as ULTIMATUM
from sandbox.dialogue.conformance import style as style
from sandbox.dialogue.conformance import ultimatum_model as ultimatum_model
from sandbox.llm import scripted

CARDS = "JQK"
KUHN_INSTRUCTIONS = ("check or fold", "bet or call")


class SpokenKuhn:
    """Kuhn poker whose moves are messages: the instruction says what to do, the text is read for pass or bet."""

    name = "kuhn"
    zero_sum = True

    def message(self, setup: Setup, speaker: int, instruction: str, dialogue: tuple[Any, ...]) -> Prompt:
        return Prompt((HumanMessage(f"You hold {setup.private[speaker]['Card']}. Instruction: {instruction}."),))

    @staticmethod
    def moves(dialogue: tuple[Any, ...]) -> str:
        return "".join("b" if "bet" in m.text.lower() else "p" for m in dialogue)

    def over(self, setup: Setup, dialogue: tuple[Any, ...]) -> bool:
        return self.moves(dialogue) in ("pp", "bb", "bp", "pbp", "pbb")

    def payoffs(self, setup: Setup, dialogue: tuple[Any, ...]) -> Outcome:
        moves = self.moves(dialogue)
        a, b = setup.data["cards"]
        win = 1.0 if a > b else -1.0
        value = {"bp": 1.0, "pbp": -1.0, "pp": win}.get(moves, 2 * win)
        return Outcome((value, -value))

    def payoff_range(self) -> tuple[float, float]:
        return (-2.0, 2.0)


def kuhn_game(seeds: tuple[int, ...] = (11,)) -> DialogueGame:
    setups = tuple(
        Setup(("A", "B"), ({"Card": CARDS[a]}, {"Card": CARDS[b]}), data={"cards": (a, b)})
        for a in range(3)
        for b in range(3)
        if a != b
    )
    return DialogueGame(SpokenKuhn(), setups, (KUHN_INSTRUCTIONS, KUHN_INSTRUCTIONS), 3, seeds)


def kuhn_model(**kw: Any) -> Any:
    """Writes the move its instruction names."""
    return scripted([(r"check or fold", "I check."), (r"bet or call", "I bet.")], **kw)


class Chat:
    """Free talk for three messages (player 0 speaks twice), paid nothing: a game to test the tree's shape."""

    name = "chat"
    zero_sum = False

    def message(self, setup: Setup, speaker: int, instruction: str, dialogue: tuple[Any, ...]) -> Prompt:
        return Prompt((HumanMessage(f"Say something. Style: {instruction}."),))

    def over(self, setup: Setup, dialogue: tuple[Any, ...]) -> None:
        return None

    def payoffs(self, setup: Setup, dialogue: tuple[Any, ...]) -> Outcome:
        return Outcome((0.0, 0.0))

    def payoff_range(self) -> tuple[float, float]:
        return (0.0, 0.0)


def chat_game() -> DialogueGame:
    setup = Setup(("A", "B"), ({"Mood": "fine"}, {"Mood": "fine"}))
    return DialogueGame(Chat(), (setup,), (("calm", "angry", "any"), ("calm", "any")), 3, (5,))
