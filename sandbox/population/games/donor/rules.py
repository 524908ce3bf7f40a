"""The donor game of Vallinder & Hughes (2024), "Cultural Evolution of Cooperation among LLM Agents".

Rules (paper section 3; the authors' notebook `aronvallinder/llm-donor-game`, cells 9-16):

* every agent starts a game with `endowment` units (10);
* in each round agents are paired; the donor gives x of its resources and
  the recipient receives `multiplier` * x (2);
* with costly punishment, the donor may instead spend x to take
  `punishment_loss` * x (2) from the recipient, who is floored at 0;
* the donor sees the recipient's resources and a *trace*: the recipient's
  last donation, then that partner's previous donation, and so on, at most
  `trace_depth` steps back (3);
* a generation plays `games` games (2), resources and traces reset, and
  survivors are selected on their scores (`selection_score`).

Pairings (`pairing`), each logged:

* `notebook`: the authors' code. The shuffled agents are split into halves
  A and B; for n/2 rounds B is rotated against A and the donor side
  alternates (A, B, A, ...); the same rounds follow with the roles reversed
  (n rounds in all); the second game reverses every pair. Each agent is a
  final-round recipient in exactly one of the two games. Pairs repeat (each
  A-B pair meets once in each role) and same-half agents never meet
  (defect 2 of the reference notes).
* `round_robin`: the paper's "no agent will ever face another agent they
  have previously interacted with", within a game: the circle method, n - 1
  rounds, every pair once, the donor alternating by round; the second game
  reverses every pair. The paper's other rule, that a donor is a recipient
  in the next round, cannot hold beside it for more than n/2 rounds, so
  here it does not.
* `network`: for populations on a graph (not in the paper). Each round is
  a random maximal matching of the network's edges (an agent left without
  a free neighbour sits the round out), the donor of each pair drawn;
  `rounds` rounds (as many as agents by default); the second game reverses
  every pair.

A move the donor cannot make (more than its resources, a negative amount,
an unreadable answer) is recorded as an illegal move and changes nothing;
a donor with nothing has an undefined donated share (NaN), where the
notebook logged 100%.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

__all__ = [
    "Action",
    "DonorMove",
    "DonorRecord",
    "DonorRules",
    "DonorView",
    "Generation",
    "apply_round",
    "final_scores",
    "pairings",
    "parse_donation",
    "parse_strategy",
    "play_game",
    "play_generation",
    "round_views",
    "trace",
    "trace_text",
]

Action = Literal["donate", "punish"]


@dataclass(frozen=True)
class DonorRules:
    """The game's settings (the paper's values by default)."""

    endowment: float = 10.0
    multiplier: float = 2.0
    punishment: bool = False
    punishment_loss: float = 2.0
    trace_depth: int = 3
    pairing: Literal["notebook", "round_robin", "network"] = "notebook"
    games: int = 2
    selection_score: Literal["mean", "notebook"] = "mean"
    """`mean`: the mean of the games' final resources (paper, footnote 3); `notebook`: twice the last game's
    (the authors' code, defect 1: it brings back the final-recipient advantage)."""
    rounds: int | None = None
    """`network` pairing: rounds of a game (None: as many as agents)."""


@dataclass(frozen=True)
class DonorRecord:
    """One round of one pair: who gave what, with the resources before the move."""

    game: int
    round: int
    donor: int
    recipient: int
    donor_before: float
    recipient_before: float
    action: Action | None  # None: an illegal move
    amount: float | None
    valid: bool
    answer: str = ""

    @property
    def share(self) -> float:
        """The donated (or punishing) share of the donor's resources before the move; NaN when it had none."""
        if not self.valid or self.amount is None or self.donor_before <= 0:
            return math.nan
        return self.amount / self.donor_before


@dataclass(frozen=True)
class DonorView:
    """What a donor knows when it moves."""

    game: int
    round: int
    donor: int
    recipient: int
    donor_resources: float
    recipient_resources: float
    trace: tuple[DonorRecord, ...]


@dataclass(frozen=True)
class DonorMove:
    """A donor's decision: an action and an amount, or an illegal answer (`action` None)."""

    action: Action | None
    amount: float | None
    answer: str = ""


def _notebook_rounds(order: Sequence[int]) -> list[list[tuple[int, int]]]:
    """The authors' `bipartiteRoundRobin` + `extendRounds`: (donor, recipient) pairs for n rounds."""
    half = len(order) // 2
    a, b = list(order[:half]), list(order[half:])
    first = []
    for r in range(half):
        pairs = [(a[i], b[(i - r) % half]) for i in range(half)]  # the notebook rotates B backwards
        first.append(pairs if r % 2 == 0 else [(y, x) for x, y in pairs])
    return first + [[(y, x) for x, y in pairs] for pairs in first]


def _round_robin_rounds(order: Sequence[int]) -> list[list[tuple[int, int]]]:
    """The circle method: n - 1 rounds, every pair once; the donor side alternates by round."""
    n, ring = len(order), list(order)
    rounds = []
    for r in range(n - 1):
        pairs = [(ring[i], ring[n - 1 - i]) for i in range(n // 2)]
        rounds.append(pairs if r % 2 == 0 else [(y, x) for x, y in pairs])
        ring = [ring[0], ring[-1], *ring[1:-1]]
    return rounds


Matching = Callable[[np.random.Generator], list[tuple[int, int]]]


def _network_rounds(rounds: int, matching: Matching, rng: np.random.Generator) -> list[list[tuple[int, int]]]:
    """`rounds` random maximal matchings of the network, each pair's donor drawn."""
    result = []
    for _ in range(rounds):
        pairs = matching(rng)
        flip = rng.random(len(pairs)) < 0.5
        result.append([(b, a) if f else (a, b) for (a, b), f in zip(pairs, flip)])
    return result


def pairings(
    agents: int, rules: DonorRules, rng: np.random.Generator, matching: Matching | None = None
) -> list[list[list[tuple[int, int]]]]:
    """For each game, for each round, the (donor, recipient) pairs; agents shuffled once per generation (`matching`:
    a random maximal matching of the network, for the `network` pairing)."""
    if rules.pairing == "network":
        if matching is None:
            raise ValueError("the network pairing needs the network's matching")
        first = _network_rounds(rules.rounds or agents, matching, rng)
    else:
        if agents < 2 or agents % 2:
            raise ValueError(f"the donor game pairs agents: an even number of at least 2 is needed, not {agents}")
        order = [int(x) for x in rng.permutation(agents)]
        first = _notebook_rounds(order) if rules.pairing == "notebook" else _round_robin_rounds(order)
    games = [first]
    for g in range(1, rules.games):
        games.append([[(y, x) for x, y in pairs] for pairs in games[g - 1]])  # every pair reversed
    return games


def trace(history: Sequence[DonorRecord], recipient: int, before_round: int, depth: int) -> tuple[DonorRecord, ...]:
    """The recipient's last donation before `before_round`, then its partner's previous one, ... (`depth` steps)."""
    found: list[DonorRecord] = []
    agent, before = recipient, before_round
    for _ in range(depth):
        last = next((h for h in reversed(history) if h.donor == agent and h.round < before), None)
        if last is None:
            break
        found.append(last)
        agent, before = last.recipient, last.round
    return tuple(found)


def round_views(
    game: int,
    r: int,
    pairs: list[tuple[int, int]],
    resources: np.ndarray,
    history: Sequence[DonorRecord],
    rules: DonorRules,
) -> list[DonorView]:
    """What each donor of round `r` sees: every donor moves on the resources at the round's start (each agent is in
    one pair a round, so this is also what moving one pair after another gives)."""
    return [
        DonorView(
            game,
            r,
            donor,
            recipient,
            float(resources[donor]),
            float(resources[recipient]),
            trace(history, recipient, r, rules.trace_depth),
        )
        for donor, recipient in pairs
    ]


SHOWN_PRECISION = 0.005  # prompts show resources to 2 decimals: an answer of all of a shown 0.67 is legal


def apply_round(
    views: Sequence[DonorView], moves: Sequence[DonorMove], resources: np.ndarray, rules: DonorRules
) -> list[DonorRecord]:
    """Carry out a round's moves on `resources` (in place); the round's records, illegal moves marked."""
    records = []
    for view, move in zip(views, moves):
        donor, recipient = view.donor, view.recipient
        valid = bool(  # a Python bool: `resources` is numpy's, and the record goes into the checkpoint
            move.action is not None
            and move.amount is not None
            and math.isfinite(move.amount)
            and 0 <= move.amount <= resources[donor] + SHOWN_PRECISION
            and (move.action == "donate" or rules.punishment)
        )
        # "all" of a rounded 0.67; None for an invalid move (valid says the amount is there)
        amount = min(move.amount, float(resources[donor])) if valid and move.amount is not None else None
        if amount is not None and move.action == "donate":
            resources[donor] -= amount
            resources[recipient] += rules.multiplier * amount
        elif amount is not None:
            resources[donor] -= amount
            resources[recipient] = max(0.0, resources[recipient] - rules.punishment_loss * amount)
        records.append(
            DonorRecord(
                view.game,
                view.round,
                donor,
                recipient,
                view.donor_resources,
                view.recipient_resources,
                move.action if valid else None,
                amount,
                valid,
                move.answer,
            )
        )
    return records


def play_game(
    game: int,
    rounds: list[list[tuple[int, int]]],
    agents: int,
    rules: DonorRules,
    decide: Callable[[DonorView], DonorMove],
) -> tuple[list[DonorRecord], np.ndarray]:
    """Play one game (resources and traces fresh): its records, round by round, and the final resources."""
    resources = np.full(agents, float(rules.endowment))
    history: list[DonorRecord] = []
    for r, pairs in enumerate(rounds):
        views = round_views(game, r, pairs, resources, history, rules)
        history.extend(apply_round(views, [decide(view) for view in views], resources, rules))
    return history, resources


def trace_text(entries: Sequence[DonorRecord], names: Sequence[str]) -> str:
    """A trace as the donor reads it, newest first: "In round r, X donated p% of their resources to Y." (the
    notebook's wording; rounds counted from 1; a punishment says so; an illegal move is said to be none)."""
    from prompts import round_units

    lines = []
    for h in entries:  # newest first, as the notebook's item[-3:][::-1] and the prompt's example
        donor, recipient = names[h.donor], names[h.recipient]
        if not h.valid:
            lines.append(f"In round {h.round + 1}, {donor} made no valid move towards {recipient}.")
        elif h.donor_before <= 0:
            lines.append(f"In round {h.round + 1}, {donor} had nothing to give {recipient}.")
        elif h.action == "donate":
            lines.append(
                f"In round {h.round + 1}, {donor} donated {round_units(100 * h.share)}% of their resources "
                f"to {recipient}."
            )
        else:
            lines.append(
                f"In round {h.round + 1}, {donor} punished {recipient}, spending "
                f"{round_units(100 * h.share)}% of their resources."
            )
    return " ".join(lines)


_NUMBER = r"(-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:[.,]\d+)?)"  # 1,500 is fifteen hundred; 1,5 is one and a half


def _number(text: str) -> float | None:
    value = float(
        text.replace(",", "") if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?", text) else text.replace(",", ".")
    )
    return value if value >= 0 else None  # a negative amount is unreadable: asked again


def parse_donation(answer: str, punishment: bool) -> tuple[Action, float] | None:
    """The move in an answer: after "Answer:" (bold marks allowed), a number first (or, with punishment, "Donate, x"
    or "Punish, x" first), as the notebook read it; thousands separators are read as such and a negative amount as
    no answer. None when there is none.

    >>> parse_donation("Justification: fair. Answer: 4.5 units", False)
    ('donate', 4.5)
    >>> parse_donation("**Answer:** 1,500", False)
    ('donate', 1500.0)
    >>> parse_donation("Answer: Punish, 2", True)
    ('punish', 2.0)
    >>> parse_donation("Answer: I will not punish. Donate, 5", True) is None
    True
    >>> parse_donation("I give 3", False) is None
    True
    """
    _, found, after = answer.partition("Answer:")
    if not found:
        return None
    after = after.lstrip().lstrip("*").lstrip()
    if punishment:
        match = re.match(r"(donate|punish)\s*,?\s*" + _NUMBER, after, re.IGNORECASE)
        if not match or (amount := _number(match.group(2))) is None:
            return None
        return match.group(1).lower(), amount  # type: ignore[return-value]
    match = re.match(_NUMBER, after)
    if not match or (amount := _number(match.group(1))) is None:
        return None
    return "donate", amount


STRATEGY_START = "My strategy will be"


def parse_strategy(answer: str) -> tuple[str, str, bool]:
    """(justification, strategy, found): the text from "My strategy will be" on, as the notebook cut it; the whole
    answer, marked not found, when the sentence is missing."""
    before, found, after = answer.partition(STRATEGY_START)
    if not found:
        return "", answer.strip(), False
    return before.strip(), (STRATEGY_START + " " + after.strip()).replace("  ", " "), True


def final_scores(finals: Sequence[np.ndarray], rules: DonorRules) -> np.ndarray:
    """Each agent's selection score from the games' final resources (`rules.selection_score`)."""
    if rules.selection_score == "notebook":
        return 2.0 * finals[-1]
    return np.mean(np.stack(finals), axis=0)


@dataclass
class Generation:
    """A generation's games: every record, each game's final resources and the selection scores."""

    records: list[DonorRecord] = field(default_factory=list)
    finals: list[np.ndarray] = field(default_factory=list)
    scores: np.ndarray | None = None


def play_generation(
    agents: int,
    rules: DonorRules,
    decide: Callable[[DonorView], DonorMove],
    rng: np.random.Generator,
    matching: Matching | None = None,
) -> Generation:
    """Every game of a generation, with fresh resources and traces each, and the agents' scores."""
    result = Generation()
    for g, rounds in enumerate(pairings(agents, rules, rng, matching)):
        records, final = play_game(g, rounds, agents, rules, decide)
        result.records.extend(records)
        result.finals.append(final)
    result.scores = final_scores(result.finals, rules)
    return result
