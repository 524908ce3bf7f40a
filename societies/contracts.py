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
    """

    name: str
    text: str
    offer_hint: str = ""
    decision_hint: str = ""
    example_shares: tuple[float, ...] = ()
    example_decisions: tuple[tuple[float, bool], ...] = ()

    def __post_init__(self) -> None:
        if not self.name or not self.text:
            raise ValueError("a norm needs a name and a text")
        shares = [*self.example_shares, *(share for share, _ in self.example_decisions)]
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
