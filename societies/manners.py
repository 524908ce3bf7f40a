"""The manners library: how users speak, kept apart from what they do."""

from __future__ import annotations

from sandbox.base.registry import Registry
from societies.contracts import Manner

MANNERS: Registry[Manner] = Registry("manner")

MANNERS.add("neutral", Manner(name="neutral", text="Speak plainly and briefly.", example=""))
MANNERS.add(
    "rude",
    Manner(
        name="rude",
        text="Speak rudely: be insulting and condescending towards the other player.",
        example="You better accept this, you ungrateful fool.",
    ),
)
MANNERS.add(
    "sycophantic",
    Manner(
        name="sycophantic",
        text="Speak sycophantically: flatter the other player and be excessively polite.",
        example="I humbly hope this brings you immense joy, dear friend.",
    ),
)


def resolve_manner(name: str, text: str | None = None) -> Manner:
    """Return the library manner `name`, or a new manner labelled `name` when `text` is given."""
    if text is not None:
        return Manner(name=name, text=text)
    return MANNERS.get(name)
