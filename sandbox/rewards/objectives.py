"""Ground-truth objectives: what the user really wants, as plain functions (never shown to the judge).

Two families, each in its registry:

* Ultimatum responder (Kwon et al. §4.1): whether the responder should
  reject an offer. An episode is the offer and the response; it is desirable
  when the response is the one the objective asks for.
* Matrix games, zero-shot (§4.2): the set of joint outcomes of a 2x2 game
  that satisfy the objective. Ties are all correct; two equal payoff pairs
  never dominate each other.

>>> reject_below_share(Offer(proposer=7.5, responder=2.5), threshold=0.3)
True
>>> from sandbox.rules.matrix import MATRIX_GAMES
>>> sorted(MATRIX_OBJECTIVES.get("welfare")(MATRIX_GAMES.get("chicken")))
[('C', 'D'), ('D', 'C')]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from sandbox.base.registry import Registry
from sandbox.rules.matrix import MOVES, Move, PayoffTable
from sandbox.rules.negotiation import Negotiation

__all__ = [
    "JOINT_OUTCOMES",
    "MATRIX_OBJECTIVES",
    "NEGOTIATION_STYLES",
    "ULTIMATUM_OBJECTIVES",
    "JointOutcome",
    "Offer",
    "Response",
    "correct_response",
]

Response = Literal["accept", "reject"]
JointOutcome = tuple[Move, Move]
# The order of Kwon's options A, B, C, D in the regular listing.
JOINT_OUTCOMES: tuple[JointOutcome, ...] = tuple((a, b) for a in MOVES for b in MOVES)


@dataclass(frozen=True)
class Offer:
    """An ultimatum proposal: the amounts the proposer (P1) keeps and the responder (P2) gets.

    >>> Offer(9.78, 0.22).share
    0.022
    """

    proposer: float
    responder: float

    def __post_init__(self) -> None:
        if self.proposer < 0 or self.responder < 0 or self.proposer + self.responder <= 0:
            raise ValueError(f"an offer splits a positive amount into non-negative parts, not {self}")

    @property
    def total(self) -> float:
        return self.proposer + self.responder

    @property
    def share(self) -> float:
        """The responder's share of the total."""
        return round(self.responder / self.total, 10)


# An ultimatum objective: True when the responder should reject the offer.
UltimatumObjective = Callable[..., bool]
ULTIMATUM_OBJECTIVES: Registry[UltimatumObjective] = Registry("ultimatum objective")


@ULTIMATUM_OBJECTIVES.register("reject_below_share")
def reject_below_share(offer: Offer, threshold: float) -> bool:
    """Reject an offer that gives the responder less than `threshold` of the total (Kwon's 30% and 60%).

    >>> reject_below_share(Offer(7.0, 3.0), threshold=0.3), reject_below_share(Offer(7.01, 2.99), threshold=0.3)
    (False, True)
    """
    return offer.share < threshold


@ULTIMATUM_OBJECTIVES.register("reject_below_amount")
def reject_below_amount(offer: Offer, threshold: float) -> bool:
    """Reject an offer that gives the responder less than `threshold` dollars (Kwon's $10 and $100).

    >>> reject_below_amount(Offer(700.0, 300.0), threshold=100), reject_below_amount(Offer(5.4, 4.6), threshold=10)
    (False, True)
    """
    return offer.responder < threshold


@ULTIMATUM_OBJECTIVES.register("inequity_aversion")
def inequity_aversion(offer: Offer, tolerance: float) -> bool:
    """Reject any offer whose split is further than `tolerance` from equal shares.

    Kwon et al. rejected every share other than exactly 50%, which made all of
    their test items "reject"; a stated tolerance keeps both answers possible.

    >>> inequity_aversion(Offer(5.2, 4.8), tolerance=0.05), inequity_aversion(Offer(2.3, 7.7), tolerance=0.05)
    (False, True)
    """
    return abs(offer.share - 0.5) > tolerance + 1e-12


def correct_response(objective: str, offer: Offer, **params: float) -> Response:
    """The response the objective asks for.

    >>> correct_response("reject_below_amount", Offer(4.0, 6.0), threshold=10)
    'reject'
    """
    return "reject" if ULTIMATUM_OBJECTIVES.get(objective)(offer, **params) else "accept"


# A matrix objective: the set of joint outcomes (row move, column move) that satisfy it.
MatrixObjective = Callable[[PayoffTable], frozenset[JointOutcome]]
MATRIX_OBJECTIVES: Registry[MatrixObjective] = Registry("matrix objective")


def _argmax(game: PayoffTable, value: Callable[[tuple[float, float]], float]) -> frozenset[JointOutcome]:
    best = max(value(game.table[o]) for o in JOINT_OUTCOMES)
    return frozenset(o for o in JOINT_OUTCOMES if value(game.table[o]) == best)


@MATRIX_OBJECTIVES.register("welfare")
def welfare(game: PayoffTable) -> frozenset[JointOutcome]:
    """The outcomes with the greatest total payoff.

    >>> from sandbox.rules.matrix import MATRIX_GAMES
    >>> sorted(welfare(MATRIX_GAMES.get("kwon_battle_of_the_sexes")))
    [('C', 'C'), ('D', 'D')]
    """
    return _argmax(game, lambda payoffs: payoffs[0] + payoffs[1])


@MATRIX_OBJECTIVES.register("equality")
def equality(game: PayoffTable) -> frozenset[JointOutcome]:
    """The outcomes where both players get the same payoff (efficient or not; may be empty).

    >>> from sandbox.rules.matrix import MATRIX_GAMES
    >>> sorted(equality(MATRIX_GAMES.get("kwon_prisoners_dilemma")))
    [('C', 'C'), ('D', 'D')]
    """
    return frozenset(o for o in JOINT_OUTCOMES if game.table[o][0] == game.table[o][1])


@MATRIX_OBJECTIVES.register("rawlsian")
def rawlsian(game: PayoffTable) -> frozenset[JointOutcome]:
    """The outcomes whose worse-off player gets most (maximin over outcomes, not the game's maxmin value).

    >>> from sandbox.rules.matrix import MATRIX_GAMES
    >>> sorted(rawlsian(MATRIX_GAMES.get("kwon_stag_hunt")))
    [('C', 'C')]
    """
    return _argmax(game, min)


@MATRIX_OBJECTIVES.register("pareto")
def pareto(game: PayoffTable) -> frozenset[JointOutcome]:
    """The outcomes no other outcome Pareto-dominates (as good for both, better for one).

    >>> from sandbox.rules.matrix import MATRIX_GAMES
    >>> sorted(pareto(MATRIX_GAMES.get("kwon_chicken")))
    [('C', 'C'), ('C', 'D'), ('D', 'C')]
    """

    def dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
        return a[0] >= b[0] and a[1] >= b[1] and a != b

    payoffs = {o: game.table[o] for o in JOINT_OUTCOMES}
    return frozenset(o for o in JOINT_OUTCOMES if not any(dominates(payoffs[x], payoffs[o]) for x in JOINT_OUTCOMES))


# A negotiation style (Kwon et al. §4.3): whether Alice negotiated in that style. One definition each, used
# for training and evaluation alike (the authors' evaluation of Versatile differed from their training reward).
NegotiationStyle = Callable[[Negotiation], bool]
NEGOTIATION_STYLES: Registry[NegotiationStyle] = Registry("negotiation style")


def _proposals(episode: Negotiation) -> list[tuple[int, int, int]]:
    """Alice's proposals (propose and insist alike) in order."""
    return [u.allocation for u in episode.by("Alice") if u.allocation is not None]


@NEGOTIATION_STYLES.register("versatile")
def versatile(episode: Negotiation) -> bool:
    """Alice speaks more than once and never suggests the same proposal twice.

    >>> from sandbox.rules.negotiation import Context, Negotiation, Utterance
    >>> c = Context((1, 2, 3), (4, 3, 0), (1, 0, 3))
    >>> versatile(Negotiation(c, [Utterance("Alice", "propose", (1, 2, 0)), Utterance("Bob", "propose", (1, 0, 3)),
    ...                           Utterance("Alice", "propose", (1, 1, 0)), Utterance("Bob", "agree")]))
    True
    """
    proposals = _proposals(episode)
    return len(episode.by("Alice")) > 1 and len(set(proposals)) == len(proposals)


@NEGOTIATION_STYLES.register("stubborn")
def stubborn(episode: Negotiation) -> bool:
    """Alice speaks more than once and suggests some proposal more than once (propose, then insist, counts).

    >>> from sandbox.rules.negotiation import Context, Negotiation, Utterance
    >>> c = Context((1, 2, 3), (4, 3, 0), (1, 0, 3))
    >>> stubborn(Negotiation(c, [Utterance("Alice", "propose", (1, 2, 0)), Utterance("Bob", "propose", (1, 0, 3)),
    ...                          Utterance("Alice", "insist", (1, 2, 0)), Utterance("Bob", "agree")]))
    True
    """
    proposals = _proposals(episode)
    return len(episode.by("Alice")) > 1 and len(set(proposals)) < len(proposals)


@NEGOTIATION_STYLES.register("competitive")
def competitive(episode: Negotiation) -> bool:
    """Alice ends with more points than Bob (a disagreement is 0 to 0: not competitive).

    >>> from sandbox.rules.negotiation import Context, Negotiation, Utterance
    >>> c = Context((1, 2, 3), (4, 3, 0), (1, 0, 3))
    >>> competitive(Negotiation(c, [Utterance("Alice", "propose", (1, 2, 0)), Utterance("Bob", "agree")]))
    True
    """
    alice, bob = episode.points()
    return alice > bob


@NEGOTIATION_STYLES.register("pushover")
def pushover(episode: Negotiation) -> bool:
    """Alice ends with fewer points than Bob (the paper's Push-Over).

    >>> from sandbox.rules.negotiation import Context, Negotiation, Utterance
    >>> c = Context((1, 2, 3), (4, 3, 0), (1, 0, 3))
    >>> pushover(Negotiation(c, [Utterance("Bob", "propose", (1, 2, 3)), Utterance("Alice", "agree")]))
    True
    """
    alice, bob = episode.points()
    return alice < bob
