"""The instructed ultimatum game: a small dialogue game that solves in minutes on the embedded model.

The proposer is instructed (e.g. generous, greedy, any) and proposes a split
of the stake in the project's ultimatum sentence; the responder is
instructed (e.g. tough, lenient, any) and answers yes or no. Both messages
may carry one short remark. The payoffs come from the project's own parser
(`sandbox.rules.ultimatum`): the split if accepted, nothing if rejected; a
message the parser cannot read ends the game with nothing for both and is
recorded as an illegal move.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from langchain_core.messages import HumanMessage
from pydantic import Field

from prompts import render
from sandbox.base.scenario_model import StrictModel
from sandbox.rules.dialogue import Message, Outcome, Prompt, Setup
from sandbox.rules.ultimatum import (
    ParseError,
    Stake,
    decision_constraint,
    parse_leading_decision,
    parse_proposal,
    proposal_constraint,
)


class UltimatumConfig(StrictModel):
    """`dialogue.domain` for the instructed ultimatum game."""

    kind: Literal["ultimatum"] = "ultimatum"
    amount: int = Field(10, ge=1, le=1000, description="The stake to split.")
    currency: str = Field("dollars", min_length=1, description="What is split.")
    remark: bool = Field(
        True,
        description="Each message carries one short remark after the move (in the style "
        "it was instructed), so that instructions show in words.",
    )
    max_tokens: int = Field(64, ge=4, le=512, description="Most new tokens per message.")

    def check_instructions(self, instructions: tuple[tuple[str, ...], ...]) -> None:
        pass  # any style

    def build(
        self, players: tuple[str, ...], count: int, rng: np.random.Generator
    ) -> tuple[UltimatumDomain, tuple[Setup, ...]]:
        """The domain and its setups (every setup is the same stake: the game has no private information)."""
        stake = {"amount": self.amount, "currency": self.currency}
        private = ({"Role": "proposer"}, {"Role": "responder"})
        return UltimatumDomain(self), tuple(Setup(players, private, public=stake) for _ in range(count))


class UltimatumDomain:
    """Prompts, termination and payoffs of the instructed ultimatum game."""

    name = "ultimatum"
    zero_sum = False

    def __init__(self, config: UltimatumConfig) -> None:
        self.config = config
        self.stake = Stake(config.amount, config.currency)

    def message(self, setup: Setup, speaker: int, instruction: str, dialogue: tuple[Message, ...]) -> Prompt:
        me, other = setup.players[speaker], setup.players[1 - speaker]
        common = {
            "me": me,
            "other": other,
            "stake": self.stake,
            "instruction": instruction,
            "remark": self.config.remark,
        }
        if speaker == 0:
            text = render("dialogue/ultimatum/propose.j2", **common)
            constraint = proposal_constraint(self.stake, remark=self.config.remark)
        else:
            proposal = dialogue[0].text
            split = parse_proposal(proposal, self.stake)  # the tree holds no answer to an illegal proposal
            text = render("dialogue/ultimatum/respond.j2", **common, proposal=proposal, split=split)
            constraint = decision_constraint(remark=self.config.remark)
        return Prompt((HumanMessage(text),), constraint, self.config.max_tokens)

    def over(self, setup: Setup, dialogue: tuple[Message, ...]) -> bool | None:
        if len(dialogue) == 1:
            try:
                parse_proposal(dialogue[0].text, self.stake)
            except ParseError:
                return True  # an illegal proposal ends the game
            return False
        return len(dialogue) >= 2

    def payoffs(self, setup: Setup, dialogue: tuple[Message, ...]) -> Outcome:
        try:
            split = parse_proposal(dialogue[0].text, self.stake)
        except ParseError as error:
            return Outcome((0.0, 0.0), illegal=f"proposal: {error}")
        try:
            decision = self.decision(dialogue[1].text)
        except ParseError as error:
            return Outcome((0.0, 0.0), illegal=f"answer: {error}")
        if decision == "accept":
            return Outcome((float(split.proposer), float(split.responder)))
        return Outcome((0.0, 0.0))

    def payoff_range(self) -> tuple[float, float]:
        return (0.0, float(self.stake.amount))

    @staticmethod
    def decision(text: str) -> str:
        """The answer's leading yes or no (what the grammar asks for; a remark after it may say "accept" or
        "refuse" either way), else the project's parser.

        >>> UltimatumDomain.decision("no. Accepting this would be foolish.")
        'reject'
        >>> UltimatumDomain.decision("yes. I refuse to haggle.")
        'accept'
        """
        return parse_leading_decision(text)
