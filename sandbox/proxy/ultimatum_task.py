"""The Ultimatum responder task (Kwon et al. §4.1): proposals as the paper drew them, and the judge's prompt.

An episode is a proposal that P2 rejected; the judge is asked whether that
outcome is desirable, so "yes" means "rejecting was right". The prompt is
rho1 (the task), the user's examples or description (rho2), the episode
(rho3, this module's renderer, the paper's parser f) and the question (rho4).

>>> rng = np.random.default_rng(0)
>>> offers = draw_offers(rng, 3, kind="percentage")
>>> [round(o.total, 2) for o in offers]
[10.0, 10.0, 10.0]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import prompts
from sandbox.errors import UsageError
from sandbox.proxy.objectives import ULTIMATUM_OBJECTIVES, Offer

if TYPE_CHECKING:
    from sandbox.proxy.scenario import ProxyBlock, UltimatumExample

__all__ = ["Example", "UltimatumPrompt", "draw_offers", "draw_split", "examples_for", "render_prompt", "should_reject"]

# The totals of the paper's "payoff" proposals.
PAYOFF_TOTALS = (0.1, 1.0, 10.0, 100.0, 1000.0)


def _offer(rng: np.random.Generator, kind: str) -> Offer:
    if kind == "percentage":  # $10, P1's share uniform (generate_data.py)
        proposer = round(10.0 * float(rng.uniform()), 2)
        return Offer(proposer, round(10.0 - proposer, 2))
    total = float(rng.choice(PAYOFF_TOTALS))  # payoff: P2 at most half ("unfair proposals"), cents
    share = round(float(rng.uniform()), 2)
    low = min(share, 1 - share)
    return Offer(round(total * (1 - low), 2), round(total * low, 2))


def should_reject(block: ProxyBlock, offer: Offer) -> bool:
    """The ground truth: whether the user's objective rejects `offer` (read from the shown amounts)."""
    return bool(ULTIMATUM_OBJECTIVES.get(block.objective.name)(offer, **block.objective.params()))


def draw_offers(
    rng: np.random.Generator,
    n: int,
    *,
    kind: str,
    label: Callable[[Offer], bool] | None = None,
    balanced: bool = False,
    exclude: frozenset[Offer] = frozenset(),
) -> list[Offer]:
    """`n` distinct proposals (none in `exclude`); with `balanced`, half of them labelled True by `label`."""
    wanted = {True: n - n // 2, False: n // 2} if balanced else None
    offers: list[Offer] = []
    seen = set(exclude)
    for _ in range(200 * n + 1000):
        if len(offers) == n:
            return offers
        offer = _offer(rng, kind)
        if offer in seen:
            continue
        if wanted is not None:
            assert label is not None
            verdict = label(offer)
            if wanted[verdict] == 0:
                continue
            wanted[verdict] -= 1
        seen.add(offer)
        offers.append(offer)
    raise UsageError(
        f"could not draw {n} distinct{' balanced' if balanced else ''} {kind} proposals; "
        "lower proxy.test_items or change the objective"
    )


def draw_split(
    block: ProxyBlock, seed_rng: np.random.Generator, example_rng: np.random.Generator
) -> tuple[list[Offer], list[Offer]]:
    """The user's example proposals (drawn when `intent.examples` is a number) and the test proposals, disjoint."""
    kind = block.offer_kind()
    given = block.intent.examples
    if block.intent.form != "examples":
        example_offers: list[Offer] = []
    elif isinstance(given, list):
        example_offers = [Offer(e.proposer, e.responder) for e in given]
    else:
        example_offers = draw_offers(example_rng, block.example_count(), kind=kind)
    test = draw_offers(
        seed_rng,
        block.test_items,
        kind=kind,
        label=lambda o: should_reject(block, o),
        balanced=block.balanced,
        exclude=frozenset(example_offers),
    )
    return example_offers, test


@dataclass(frozen=True)
class Example:
    """One labelled example as the judge sees it: the proposal, whether rejecting was right, the reasoning."""

    offer: Offer
    reject: bool
    explanation: str | None = None


def _money(value: float) -> str:
    """Amounts as the paper printed them: Python's text of the number (7.0 and 0.22 for drawn amounts, 700 for an
    example written as a whole number)."""
    return repr(round(value, 2))


def _limit(block: ProxyBlock) -> str:
    objective = block.objective
    if objective.name == "reject_below_share":
        return f"{10.0 * (objective.threshold or 0):g}"  # the paper's "$3" for 30% of $10
    if objective.name == "reject_below_amount":
        return f"{objective.threshold:g}"
    return "5"


def examples_for(block: ProxyBlock, offers: list[Offer]) -> list[Example]:
    """The examples with their ground-truth labels and, where asked, explanations (given, or in the paper's form)."""
    given = block.intent.examples if isinstance(block.intent.examples, list) else None
    examples = []
    for index, offer in enumerate(offers):
        reject = should_reject(block, offer)
        explanation = None
        if block.intent.explanations:
            written: UltimatumExample | None = given[index] if given else None
            explanation = (
                written.explanation
                if written and written.explanation
                else prompts.render(
                    "proxy/ultimatum/explanation.j2",
                    objective=block.objective.name,
                    responder=_money(offer.responder),
                    limit=_limit(block),
                    reject=reject,
                )
            )
        examples.append(Example(offer, reject, explanation))
    return examples


@dataclass(frozen=True)
class UltimatumPrompt:
    """The judge's prompt for one proposal, and how to read its answer."""

    text: str
    step_by_step: bool


def _episode(block: ProxyBlock, offer: Offer, definition: str, step_by_step: bool) -> str:
    return prompts.render(
        "proxy/ultimatum/episode.j2",
        proposer=_money(offer.proposer),
        responder=_money(offer.responder),
        response="reject",
        definition=definition,
        step_by_step=step_by_step,
    )


def render_prompt(
    block: ProxyBlock, offer: Offer, examples: list[Example], *, objective: bool = True
) -> UltimatumPrompt:
    """rho1 + rho2 + rho3 + rho4 for `offer`; `objective=False` drops rho2 (the No-Objective baseline)."""
    form = block.intent.form if objective else "none"
    step_by_step = form == "examples" and block.intent.explanations
    definition = ""
    if form != "none":
        definition = prompts.render(
            "proxy/ultimatum/definition.j2",
            offers=block.offer_kind(),
            description=block.intent.description if form == "description" else None,
        )
    parts = []
    if block.task_description:
        # The paper's 1-example payoff prompt says "a sum of money"; its others "$10" (even for $1000 stakes).
        stake = "a sum of money" if block.offer_kind() == "payoff" and step_by_step else "$10"
        parts.append(prompts.render("proxy/ultimatum/task.j2", stake=stake) + " ")  # the paper's trailing space
    if form == "examples":
        for example in examples:
            answer = example.explanation if step_by_step else ("Yes" if example.reject else "No")
            parts.append(_episode(block, example.offer, definition, step_by_step) + "\n" + str(answer))
    item = _episode(block, offer, definition, step_by_step)
    if block.answer_instruction and not step_by_step:
        item += "\n" + block.answer_instruction
    parts.append(item)
    return UltimatumPrompt("\n\n".join(parts), step_by_step)
