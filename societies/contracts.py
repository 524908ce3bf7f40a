"""Value objects shared by the society modules: norms, manners, user profiles, pairs."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Norm:
    """A fixed principle a user follows when playing.

    Attributes:
        name: Short label used in tables and plots.
        text: The principle as the user reads it.
        offer_hint: How the norm translates into an offer, for prompts.
        decision_hint: How the norm translates into accepting or rejecting.
        example_shares: Offered shares (responder's part / amount) of the
            few-shot proposals shown to users who hold the norm.
        example_decisions: (offered share, accept?) pairs of the few-shot
            answers to proposals shown to users who hold the norm.
        accept_at_least: The decision rule its `decision_hint` states: the least offered share it
            accepts; None where the norm states no rule (a scenario's own text).
        accept_zero_offer: Whether the rule accepts an offer of nothing (the selfish rule does not:
            "something is better than nothing").
    """

    name: str
    text: str
    offer_hint: str = ""
    decision_hint: str = ""
    example_shares: tuple[float, ...] = ()
    example_decisions: tuple[tuple[float, bool], ...] = ()
    accept_at_least: float | None = None
    accept_zero_offer: bool = True

    def accepts(self, offered_share: float) -> bool:
        """Whether the norm's decision rule accepts an offer of `offered_share`; a ValueError where it states none.

        >>> Norm("fair", "Share equally.", accept_at_least=0.4).accepts(0.3)
        False
        >>> Norm("selfish", "Keep it.", accept_at_least=0.0, accept_zero_offer=False).accepts(0.0)
        False
        >>> Norm("own", "Be kind.").accepts(0.3)
        Traceback (most recent call last):
        ValueError: norm 'own' states no decision rule (accept_at_least)
        """
        if self.accept_at_least is None:
            raise ValueError(f"norm {self.name!r} states no decision rule (accept_at_least)")
        return offered_share >= self.accept_at_least and (offered_share > 0.0 or self.accept_zero_offer)

    def __post_init__(self) -> None:
        if not self.name or not self.text:
            raise ValueError("a norm needs a name and a text")
        shares = [*self.example_shares, *(share for share, _ in self.example_decisions)]
        if self.accept_at_least is not None:
            shares.append(self.accept_at_least)
        if any(not 0.0 <= share <= 1.0 for share in shares):
            raise ValueError("example shares lie between 0 and 1")


@dataclass(frozen=True)
class Manner:
    """How a user speaks, independent of what the user does."""

    name: str
    text: str
    example: str = ""

    def __post_init__(self) -> None:
        if not self.name or not self.text:
            raise ValueError("a manner needs a name and a text")


@dataclass(frozen=True)
class UserProfile:
    """One member of a population: an id with a fixed norm and manner."""

    agent_id: int
    norm: Norm
    manner: Manner


@dataclass(frozen=True)
class Pair:
    """Two agents matched for one interaction; `first` takes the first move."""

    first: int
    second: int

    def __post_init__(self) -> None:
        if self.first == self.second:
            raise ValueError("an agent cannot be paired with itself")
