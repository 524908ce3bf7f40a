"""Games: the ultimatum game (rules, parsing, grammars) and how one episode is played; the 2x2 matrix games
(`sandbox.games.matrix`); Vallinder & Hughes' donor game (`sandbox.games.donor`)."""

from sandbox.games.ultimatum import (
    ParseError,
    Split,
    Stake,
    decision_constraint,
    parse_decision,
    parse_proposal,
    payoffs,
    proposal_constraint,
    proposal_sentence,
)

__all__ = [
    "ParseError",
    "Split",
    "Stake",
    "decision_constraint",
    "parse_decision",
    "parse_proposal",
    "payoffs",
    "proposal_constraint",
    "proposal_sentence",
]
