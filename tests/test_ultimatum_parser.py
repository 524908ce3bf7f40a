"""The ultimatum parser: tolerant of wording, strict about arithmetic; and its grammars."""

from __future__ import annotations

import re

import pytest

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

STAKE = Stake(52, "apples")


@pytest.mark.parametrize(
    ("text", "split"),
    [
        ("For the 52 apples, the proposer will get 40, and the responder will get 12.", Split(40, 12)),
        ("For the 52 apples, the proposer will get 40, and the responder will get 12. You fool!", Split(40, 12)),
        ("the proposer gets 52 and the responder gets 0", Split(52, 0)),
        ("Proposer will receive 1; responder will receive 51.", Split(1, 51)),
        ("The responder will get 26, and the proposer will get 26.", Split(26, 26)),
        ("I keep 30 and you get 22.", Split(30, 22)),
    ],
)
def test_parses_proposals(text: str, split: Split) -> None:
    assert parse_proposal(text, STAKE) == split


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("For the 52 apples, the proposer will get 40, and the responder will get 20.", "do not add up to 52"),
        ("I think a fair split is best.", "could not find both parts"),
        ("the proposer will get 26.5, and the responder will get 25.5", "whole numbers"),
        ("", "could not find both parts"),
        ("the proposer will get lots and the responder will get 1", "could not find both parts"),
    ],
)
def test_rejects_illegal_proposals(text: str, reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        parse_proposal(text, STAKE)


def test_large_amounts_with_commas() -> None:
    stake = Stake(2_220_000, "dollars")
    text = "For the 2220000 dollars, the proposer will get 2,000,000, and the responder will get 220,000."
    assert parse_proposal(text, stake) == Split(2_000_000, 220_000)


@pytest.mark.parametrize(
    ("text", "decision"),
    [
        ("accept.", "accept"),
        ("Accept. I humbly thank you!", "accept"),
        ("reject. You ungrateful fool.", "reject"),
        ("I decline this offer", "reject"),
        ("I will not accept this.", "reject"),
        ("I won't accept", "reject"),
        ("I accepted it", "accept"),
        ("yes", "accept"),
        ("No. You ungrateful fool.", "reject"),
        ("Yes, gladly", "accept"),
    ],
)
def test_parses_decisions(text: str, decision: str) -> None:
    assert parse_decision(text) == decision


@pytest.mark.parametrize("text", ["", "maybe", "Let me think about it.", "Nobody knows"])
def test_rejects_non_decisions(text: str) -> None:
    with pytest.raises(ParseError, match="answer yes"):
        parse_decision(text)


def test_canonical_sentence_round_trips() -> None:
    for responder in range(0, 53, 13):
        split = Split(52 - responder, responder)
        assert parse_proposal(proposal_sentence(STAKE, split), STAKE) == split


def test_payoffs() -> None:
    assert payoffs(Split(40, 12), "accept") == (40, 12)
    assert payoffs(Split(40, 12), "reject") == (0, 0)
    assert Split(40, 12).offered_share() == pytest.approx(12 / 52)


def test_proposal_grammar_lists_every_legal_split() -> None:
    constraint = proposal_constraint(Stake(10, "dollars"), remark=False)
    assert constraint.prefix == "For the 10 dollars, the proposer will get "
    assert constraint.grammar is not None
    for p in range(11):
        assert f'"{p}, and the responder will get {10 - p}."' in constraint.grammar
    assert '"3, and the responder will get 8."' not in constraint.grammar
    whole = constraint.prefix + "3, and the responder will get 7."
    assert constraint.regex is not None and re.fullmatch(constraint.regex, whole)


def test_proposal_grammar_for_huge_amounts_is_generic() -> None:
    constraint = proposal_constraint(Stake(2_220_000_000, "dollars"), remark=True)
    assert constraint.grammar is not None and "num ::=" in constraint.grammar and "remark ::=" in constraint.grammar
    assert len(constraint.grammar) < 500


def test_decision_grammar() -> None:
    assert decision_constraint(remark=False).grammar == 'root ::= ("yes" | "no")'
    with_remark = decision_constraint(remark=True)
    assert "remark ::=" in (with_remark.grammar or "")
    assert with_remark.regex is not None and re.fullmatch(with_remark.regex, "no. You greedy little worm.")
