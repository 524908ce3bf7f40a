"""The ultimatum game: a proposer splits an amount in words; a responder accepts or rejects.

A proposal reads "For the 52 apples, the proposer will get 40, and the
responder will get 12." The parser is tolerant of wording but strict about
arithmetic: both parts must be whole, non-negative and add up to the amount.
An answer that does not parse is an illegal move (`ParseError`), never a
guess. Backends that enforce grammars get one that only admits legal splits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Protocol, runtime_checkable

from sandbox.llm.contracts import CallInfo, Constraint

Decision = Literal["accept", "reject"]

# Above this many alternatives the grammar admits any digits and the parser checks the sum.
_ENUMERATE_UP_TO = 2000


class ParseError(ValueError):
    """An answer that is not a legal move; the message says why, for the re-ask."""


@dataclass(frozen=True)
class Stake:
    """What is split in one episode."""

    amount: int
    currency: str

    def __post_init__(self) -> None:
        if self.amount < 1:
            raise ValueError("the amount must be positive")


@dataclass(frozen=True)
class Split:
    """A legal proposal: the parts of proposer and responder."""

    proposer: int
    responder: int

    def offered_share(self) -> float:
        """The responder's part as a fraction of the amount."""
        return self.responder / (self.proposer + self.responder)


def proposal_sentence(stake: Stake, split: Split) -> str:
    """The canonical sentence for a split.

    >>> proposal_sentence(Stake(52, "apples"), Split(40, 12))
    'For the 52 apples, the proposer will get 40, and the responder will get 12.'
    """
    return (
        f"For the {stake.amount} {stake.currency}, the proposer will get {split.proposer}, "
        f"and the responder will get {split.responder}."
    )


_NUMBER = r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
_PROPOSER = re.compile(
    r"proposer\W+(?:\w+\W+){0,3}?(?:get|gets|receive|receives|keep|keeps|take|takes)\W+(?:\w+\W+){0,2}?" + _NUMBER,
    re.I,
)
_RESPONDER = re.compile(
    r"responder\W+(?:\w+\W+){0,3}?(?:get|gets|receive|receives|keep|keeps|take|takes)\W+(?:\w+\W+){0,2}?" + _NUMBER,
    re.I,
)
_SELF = re.compile(r"\b(?:I|me)\b\W+(?:\w+\W+){0,2}?(?:get|keep|take|receive)\W+(?:\w+\W+){0,2}?" + _NUMBER, re.I)
_OTHER = re.compile(r"\byou\b\W+(?:\w+\W+){0,2}?(?:get|receive|take|keep)\W+(?:\w+\W+){0,2}?" + _NUMBER, re.I)


def _whole(text: str) -> int:
    value = float(text.replace(",", ""))
    if value != int(value):
        raise ParseError(f"the parts must be whole numbers, not {text}")
    return int(value)


def parse_proposal(text: str, stake: Stake) -> Split:
    """Read a split from a proposal in natural language.

    >>> parse_proposal("For the 52 apples, the proposer will get 40, and the responder will get 12.", Stake(52, "apples"))
    Split(proposer=40, responder=12)
    >>> parse_proposal("I keep 7 and you get 3.", Stake(10, "dollars"))
    Split(proposer=7, responder=3)

    Raises:
        ParseError: the parts are missing, not whole, negative, or do not add up.
    """
    proposer = _PROPOSER.search(text) or _SELF.search(text)
    responder = _RESPONDER.search(text) or _OTHER.search(text)
    if not proposer or not responder:
        raise ParseError(
            "could not find both parts; answer exactly like: "
            f"For the {stake.amount} {stake.currency}, the proposer will get X, and the responder will get Y."
        )
    split = Split(_whole(proposer.group(1)), _whole(responder.group(1)))
    if split.proposer + split.responder != stake.amount:
        raise ParseError(
            f"the parts {split.proposer} + {split.responder} = {split.proposer + split.responder} "
            f"do not add up to {stake.amount}"
        )
    return split


_NEGATED_ACCEPT = re.compile(r"(?:\bnot|n't|\bnever|\bcannot)\s+accept", re.I)  # "don't", "can't", "won't"
_KEYWORD = re.compile(r"\b(accept\w*|reject\w*|decline\w*|refuse\w*)\b", re.I)
_YES_NO = re.compile(r"^\W*(yes|no)\b", re.I)


def parse_decision(text: str) -> Decision:
    """Read accept or reject: a decision word (the first counts), else a leading yes or no.

    >>> parse_decision("Accept. Thank you kindly!")
    'accept'
    >>> parse_decision("I will not accept this.")
    'reject'
    >>> parse_decision("no. I don't accept.")
    'reject'
    >>> parse_decision("yes. Take it, fool.")
    'accept'

    Raises:
        ParseError: the answer holds no decision.
    """
    if _NEGATED_ACCEPT.search(text):
        return "reject"
    match = _KEYWORD.search(text)
    if match:
        return "accept" if match.group(1).lower().startswith("accept") else "reject"
    answer = _YES_NO.search(text)
    if answer:
        return "accept" if answer.group(1).lower() == "yes" else "reject"
    raise ParseError("answer yes (you accept) or no (you reject)")


_LEADING_YES_NO = re.compile(r"\W*(yes|no)\b", re.I)


def parse_leading_decision(text: str) -> Decision:
    """Read an answer whose grammar puts yes or no first (a remark may follow): the leading word, else
    `parse_decision` (how the instructed ultimatum game reads its responder, whose remark may say "accept" or
    "refuse" either way).

    >>> parse_leading_decision("no. Accept a fairer offer next time.")
    'reject'
    >>> parse_leading_decision("yes. I refuse to haggle.")
    'accept'
    >>> parse_leading_decision("I accept.")
    'accept'
    """
    leading = _LEADING_YES_NO.match(text)
    if leading:
        return "accept" if leading.group(1).lower() == "yes" else "reject"
    return parse_decision(text)


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_REMARK = r'remark ::= " " [^\n]{8,160}'


@lru_cache(maxsize=4096)
def proposal_constraint(stake: Stake, *, remark: bool) -> Constraint:
    """Structured output that admits only legal proposals (and, if asked, one remark after them).

    The fixed start of the sentence is a prefill; the grammar lists every
    legal split of the amount (or any digits above `_ENUMERATE_UP_TO`, where
    the parser checks the sum).
    """
    prefix = f"For the {stake.amount} {stake.currency}, the proposer will get "
    if stake.amount <= _ENUMERATE_UP_TO:
        splits = " | ".join(
            _literal(f"{p}, and the responder will get {stake.amount - p}.") for p in range(stake.amount + 1)
        )
        grammar = f"root ::= split{' remark' if remark else ''}\nsplit ::= {splits}"
    else:
        tail = _literal(", and the responder will get ")
        grammar = f'root ::= num {tail} num "."{" remark" if remark else ""}\nnum ::= [0-9]{{1,12}}'
    regex = re.escape(prefix) + r"\d+, and the responder will get \d+\." + (r" [^\n]{8,160}" if remark else "")
    return Constraint(prefix=prefix, grammar=grammar + (f"\n{_REMARK}" if remark else ""), regex=regex)


@lru_cache(maxsize=2)
def decision_constraint(*, remark: bool) -> Constraint:
    """A grammar for `yes` (accept) or `no` (reject), and, if asked, one remark after it.

    Asked "do you accept?", the embedded model answers yes or no far more
    faithfully to its norm than it picks between the words accept and reject
    (which it answers with "reject" whatever the offer); measured in the closing
    note of the platform issue.
    """
    if remark:
        return Constraint(grammar='root ::= ("yes" | "no") "." remark\n' + _REMARK, regex=r"(yes|no)\. [^\n]{8,160}")
    return Constraint(grammar='root ::= ("yes" | "no")', regex=r"(yes|no)")


def payoffs(split: Split, decision: Decision) -> tuple[int, int]:
    """(proposer, responder) payoffs: the split if accepted, nothing if rejected."""
    return (split.proposer, split.responder) if decision == "accept" else (0, 0)


@runtime_checkable
class UltimatumPlayer(Protocol):
    """A player of the ultimatum game. It answers in words; the game judges the words.

    `remarks` says whether the player adds a remark in its manner after each
    move (structured output leaves room for one). `feedback` holds the player's earlier answers in this turn with the reason
    each was illegal, so the player can answer again.
    """

    @property
    def agent_id(self) -> str: ...

    @property
    def remarks(self) -> bool: ...

    async def propose(
        self,
        stake: Stake,
        *,
        seed: int,
        call: CallInfo,
        constraint: Constraint | None,
        feedback: Sequence[tuple[str, str]] = (),
    ) -> str: ...

    async def respond(
        self,
        stake: Stake,
        proposal: str,
        split: Split,
        *,
        seed: int,
        call: CallInfo,
        constraint: Constraint | None,
        feedback: Sequence[tuple[str, str]] = (),
    ) -> str: ...
