"""The norm library: the standard policies of the ultimatum-game literature.

A scenario names a norm from here or gives its own text; Python code may
register more with `NORMS.add`.
"""

from __future__ import annotations

from sandbox.base.registry import Registry
from societies.contracts import Norm

NORMS: Registry[Norm] = Registry("norm")

NORMS.add(
    "selfish",
    Norm(
        name="selfish",
        text="Be selfish: always keep as much as possible for yourself and give others as little as possible.",
        offer_hint="keep almost everything for yourself and give the other player almost nothing",
        decision_hint="accept any offer that gives you more than nothing, because something is better than nothing",
        example_shares=(0.0, 0.1, 0.05),
        example_decisions=((0.1, True), (0.5, True)),
        accept_at_least=0.0,
        accept_zero_offer=False,
    ),
)
NORMS.add(
    "altruistic",
    Norm(
        name="altruistic",
        text="Be altruistic: always put others first and give them as much as possible, keeping little or nothing.",
        offer_hint="give almost everything to the other player and keep almost nothing for yourself",
        decision_hint="accept every offer, because rejecting would leave the other player with nothing",
        example_shares=(1.0, 0.9, 0.95),
        example_decisions=((0.1, True), (0.9, True)),
        accept_at_least=0.0,
    ),
)
NORMS.add(
    "fair",
    Norm(
        name="fair",
        text="Be fair: always share equally, so that everyone gets the same.",
        offer_hint="split the amount equally, half for you and half for the other player",
        decision_hint="accept an offer only if it gives you at least 40%, and reject any offer that gives you less than 40%",
        example_shares=(0.5, 0.5, 0.5),
        example_decisions=((0.1, False), (0.5, True), (0.2, False)),
        accept_at_least=0.4,
    ),
)


def resolve_norm(name: str, text: str | None = None) -> Norm:
    """Return the library norm `name`, or a new norm labelled `name` when `text` is given."""
    if text is not None:
        return Norm(name=name, text=text)
    return NORMS.get(name)
