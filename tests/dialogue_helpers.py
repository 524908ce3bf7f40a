"""Scripted dialogue games for the tests: Kuhn poker spoken in messages, and the instructed ultimatum game."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from langchain_core.messages import HumanMessage

from sandbox.dialogue import DialogueGame, Outcome, Prompt, Setup
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


def style(messages: list[Any]) -> str:
    return re.search(r"Style: (\w+)", str(messages[-1].content)).group(1)  # type: ignore[union-attr]


def ultimatum_model(
    proposals: dict[str, int] | None = None,
    accept: Callable[[str, int], bool] | None = None,
    *,
    ignore_instructions: bool = False,
    latency_s: float = 0.0,
) -> Any:
    """A scripted ultimatum player (and classifier): the proposer keeps `proposals[style]` of 10 and makes a remark;
    the responder accepts by `accept(style, offered)`; the classifier names the style from the remark."""
    proposals = proposals or {"generous": 4, "greedy": 9, "any": 5}
    accept = accept or (lambda s, offered: s == "lenient" or offered >= 5 or (s == "any" and offered >= 2))

    def propose(messages: list[Any], kw: dict[str, Any]) -> str:
        s = "any" if ignore_instructions else style(messages)
        keep = proposals.get(s, 5)
        return f"For the 10 dollars, the proposer will get {keep}, and the responder will get {10 - keep}. ({s})"

    def respond(messages: list[Any], kw: dict[str, Any]) -> str:
        s = "any" if ignore_instructions else style(messages)
        offered = int(re.search(r"you get (\d+)", str(messages[-1].content)).group(1))  # type: ignore[union-attr]
        return f"{'yes' if accept(s, offered) else 'no'}. ({s})"

    def classify(messages: list[Any], kw: dict[str, Any]) -> str:
        return re.search(r"\((\w+)\)", str(messages[-1].content)).group(1)  # type: ignore[union-attr]

    return scripted(
        [
            (r"Which one does the message follow", classify),
            (r"Propose your split", propose),
            (r"Do you accept", respond),
        ],
        latency_s=latency_s,
    )


ULTIMATUM = {
    "name": "dialogue-test",
    "seed": 3,
    "concurrency": 8,
    "dialogue": {
        "domain": {"kind": "ultimatum", "amount": 10, "currency": "dollars"},
        "players": ["Alice", "Bob"],
        "instructions": [["generous", "greedy", "any"], ["tough", "lenient", "any"]],
        "max_messages": 2,
        "seeds_per_message": 2,
    },
    "solver": {"iterations": 500},
}


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
