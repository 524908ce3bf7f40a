"""The rules of the games several methods play (rules, prompts, parsers): the ultimatum game (`ultimatum`, and how
one episode is played: `ultimatum_episode`), the 2x2 matrix games (`matrix`, `matrix_prompt`), negotiation
(`negotiation`) and dialogue (`dialogue`). A game only populations play keeps its rules in its folder,
`sandbox.population.games.<game>.rules`."""

from sandbox.rules.ultimatum import (
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
