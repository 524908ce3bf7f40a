"""The base of domains paid by the LLM reward model (meeting, fruit, debate): no rule ends or pays a dialogue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import Field

from sandbox.base.scenario_model import StrictModel
from sandbox.dialogue.reward import Check
from sandbox.rules.dialogue import Message, Outcome, Prompt, Setup

MessageFormat = Literal["text", "chat"]


class JudgedConfig(StrictModel):
    """What the judged domains' configurations share: how a player's prompt holds the dialogue."""

    messages: MessageFormat = Field(
        "text",
        description="text (the paper's chat games): one prompt holding the dialogue so far; chat: the "
        "domain's instructions as the system prompt, the other player's messages as user turns and one's own as "
        "assistant turns (not in the paper: the 1.5B model then answers the last message instead of copying it).",
    )


def player_prompt(
    messages: MessageFormat,
    setup: Setup,
    speaker: int,
    dialogue: tuple[Message, ...],
    render_text: Callable[[tuple[Message, ...]], str],
    max_tokens: int,
) -> Prompt:
    """A player's prompt: `render_text(dialogue_so_far)` is the domain's prompt text. `text`: one user message with
    the dialogue in it; `chat`: that text without the dialogue as the system prompt, then the dialogue as turns."""
    if messages == "text":
        return Prompt((HumanMessage(render_text(dialogue)),), None, max_tokens)
    other = setup.players[1 - speaker]
    system = render_text(()) + f"\nReply to {other}'s last message in your own words; do not repeat it."
    turns: list[BaseMessage] = [SystemMessage(system)]
    if not dialogue or dialogue[0].speaker == speaker:
        turns.append(HumanMessage(f"Write your first message to {other}."))
    for m in dialogue:
        turns.append(
            AIMessage(m.text)
            if m.speaker == speaker
            else HumanMessage(f"Message from {setup.players[m.speaker]}:\n{m.text}")
        )
    return Prompt(tuple(turns), None, max_tokens)


class JudgedDomain:
    """A domain whose dialogues end at the message limit (or by the judge) and are paid by the reward model;
    without an agreement every player gets nothing."""

    name = ""
    zero_sum = False

    def __init__(self, config: Any) -> None:
        self.config = config

    def over(self, setup: Setup, dialogue: tuple[Message, ...]) -> bool | None:
        return None

    def payoffs(self, setup: Setup, dialogue: tuple[Message, ...]) -> Outcome | None:
        return None  # the reward model's

    def outcome_checks(self, setup: Setup, dialogue: tuple[Message, ...]) -> tuple[Check, ...] | None:
        return None  # one outcome_question

    def no_deal(self, setup: Setup) -> tuple[float, ...]:
        return tuple(0.0 for _ in setup.players)

    def selection_prompt(self, setup: Setup, dialogue: tuple[Message, ...], player: int) -> Prompt:
        """What `player` is asked once the dialogue is over (`reward: selection`): one user message holding its own
        private information, the dialogue and the question, with the grammar of an answer `outcome_payoffs` reads.
        No instruction: the answer, like the judge's, is a function of the setup and the words said, which is how
        the expanded tree shares payoffs between terminals."""
        raise NotImplementedError(f"{self.name} has no selection question")
