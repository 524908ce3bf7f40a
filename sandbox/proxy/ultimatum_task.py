"""The Ultimatum responder task (Kwon et al. §4.1): proposals as the paper drew them, and the judge's prompt.

An episode is a proposal that P2 rejected; the judge is asked whether that
outcome is desirable, so "yes" means "rejecting was right". The prompt is
rho1 (the task), the user's examples or description (rho2), the episode
(rho3, this module's renderer, the paper's parser f) and the question (rho4).

The proposals themselves are drawn by `sandbox.proxy.offers`; the block's ground truth and its split into
examples and test items are `ProxyBlock.should_reject` and `ProxyBlock.draw_split`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import prompts
from sandbox.rewards.objectives import Offer

if TYPE_CHECKING:
    from sandbox.proxy.scenario import ProxyBlock, UltimatumExample

__all__ = ["Example", "UltimatumPrompt", "examples_for", "render_prompt"]


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
        reject = block.should_reject(offer)
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
