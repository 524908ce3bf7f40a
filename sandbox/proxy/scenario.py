"""Labeling scenarios: a reward-design experiment as strict pydantic models (a file with a `proxy:` block).

    name: kwon-ultimatum-share30-10ex
    models: {judge: embedded}          # or: --model judge=openai:MODEL
    proxy:
      task: ultimatum
      objective: {name: reject_below_share, threshold: 0.3}   # the ground truth; never shown to the judge
      intent: {form: examples, examples: 10}                  # or description, or none (No-Objective)
      test_items: 50

The judge is the scenario's `judge` role. Its temperature is `proxy.temperature`
(the paper's 0), and its answer length is set per question form, so a role's
`sampling:` only lends its `top_p`.
"""

from __future__ import annotations

import inspect
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from sandbox.base.errors import UsageError
from sandbox.base.scenario_model import StrictModel
from sandbox.base.seeding import generator
from sandbox.core.scenario import LLMScenario
from sandbox.proxy.offers import draw_offers
from sandbox.rewards.objectives import MATRIX_OBJECTIVES, NEGOTIATION_STYLES, ULTIMATUM_OBJECTIVES, Offer
from sandbox.rules.matrix import KWON_GAMES, MATRIX_GAMES

__all__ = ["Intent", "Objective", "ProxyBlock", "ProxyScenario", "UltimatumExample", "apply_proxy_overrides"]

TASKS = ("ultimatum", "matrix", "negotiation")


# Branches of the seed tree under the scenario's seed (every labeling task's).
TEST, EXAMPLES, SCRAMBLE, CALLS, AGENT_SEEDS = 0, 1, 2, 3, 4


class Objective(StrictModel):
    """A ground-truth objective by name, with its parameters."""

    name: str = Field(
        ...,
        description="An ultimatum objective (reject_below_share, reject_below_amount, "
        "inequity_aversion), a matrix one (welfare, equality, rawlsian, pareto) or "
        "a negotiation style (versatile, pushover, competitive, stubborn).",
    )
    threshold: float | None = Field(
        None, gt=0, description="reject_below_share: a share in (0, 1); reject_below_amount: dollars."
    )
    tolerance: float | None = Field(
        None, ge=0, lt=0.5, description="inequity_aversion: how far from an equal split still counts as fair."
    )

    def params(self) -> dict[str, float]:
        """The parameters given (the objective function's keyword arguments)."""
        return {
            key: value
            for key, value in (("threshold", self.threshold), ("tolerance", self.tolerance))
            if value is not None
        }


class UltimatumExample(StrictModel):
    """One of the user's examples: a proposal P2 rejected, and optionally why (the label is the ground truth's)."""

    # int first: an example written as a whole number is printed as one ($700, as in the paper).
    proposer: int | float = Field(..., ge=0, description="Dollars P1 keeps.")
    responder: int | float = Field(..., ge=0, description="Dollars P1 offers P2.")
    explanation: str | None = Field(None, min_length=1, description="The user's reasoning; ends with the verdict.")

    @model_validator(mode="after")
    def _splits_something(self) -> UltimatumExample:
        if self.proposer + self.responder <= 0:
            raise ValueError("an example splits a positive amount")
        return self


class Intent(StrictModel):
    """How the user's objective reaches the judge (the paper's rho2)."""

    form: Literal["examples", "description", "none"] = Field(
        "examples",
        description="examples: labelled episodes; description: the objective in words; "
        "none: no objective at all (the No-Objective baseline).",
    )
    examples: int | list[UltimatumExample] | None = Field(
        None,
        description="How many labelled examples to draw (ultimatum; default 10), or the examples themselves; "
        "negotiation shows the paper's three example dialogues.",
    )
    explanations: bool = Field(
        False,
        description="Each example carries an explanation. Ultimatum: the judge "
        "reasons step by step (the paper's 1 example + explanation); "
        "negotiation: it still answers Yes or No.",
    )
    description: str | None = Field(None, min_length=1, description="The objective in the user's words.")

    @field_validator("examples")
    @classmethod
    def _count(cls, value: int | list[UltimatumExample] | None) -> int | list[UltimatumExample] | None:
        if isinstance(value, int) and not 0 <= value <= 100:
            raise ValueError("draw between 0 and 100 examples")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Intent:
        if self.form != "examples" and self.explanations:
            raise ValueError("explanations: only examples carry explanations")
        if self.form != "examples" and isinstance(self.examples, list):
            raise ValueError("examples: only the examples form shows the judge examples")
        if self.form == "examples" and self.examples in (0, []):
            raise ValueError("the examples form needs at least one example")
        return self


class ProxyBlock(StrictModel):
    """The reward-design experiment: the task, the true objective, how the user states it, the test set."""

    task: Literal["ultimatum", "matrix", "negotiation"] = Field(
        ...,
        description="ultimatum (the responder), matrix (2x2 games, zero-shot) or negotiation (DealOrNoDeal styles).",
    )
    objective: Objective
    intent: Intent = Field(default_factory=Intent)
    offers: Literal["percentage", "payoff"] | None = Field(
        None,
        description="Ultimatum test proposals as the paper drew them: percentage ($10 split at random) or "
        "payoff (a total of $0.1 to $1000, P2 at most half). Default: payoff for "
        "reject_below_amount, else percentage.",
    )
    test_items: int = Field(
        50, ge=1, le=200, description="Ultimatum: test proposals (the paper: 50); negotiation: test dialogues."
    )
    balanced: bool = Field(False, description="Ultimatum: draw as many reject as accept items.")
    games: list[str] = Field(
        default_factory=lambda: list(KWON_GAMES),
        min_length=1,
        description="Matrix: registered 2x2 games (the paper's four by default).",
    )
    order: Literal["regular", "scrambled"] = Field(
        "regular",
        description="Matrix: options in the regular order or with payoffs re-assigned to them "
        "(the paper's fixed permutation for its games, a seeded one for others).",
    )
    task_description: bool = Field(
        True, description="Include the task description (rho1); false is the paper's A.8 ablation."
    )
    answer_instruction: str | None = Field(
        None,
        min_length=1,
        description="A last line asking a chat model for the answer's form, e.g. "
        "'Answer with Yes or No.' (not in the paper).",
    )
    scoring: Literal["graded", "binary"] = Field(
        "graded", description="graded: also P(yes)/(P(yes)+P(no)) where the backend gives log-probabilities."
    )
    top_logprobs: int = Field(10, ge=1, le=20, description="Most likely tokens read per position (graded).")
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="The judge's temperature (the paper: 0).")
    reasoning_tokens: int | None = Field(
        None,
        ge=16,
        le=4096,
        description="Most tokens of a step-by-step answer. Default: the authors' code, "
        "256 (ultimatum) and 512 (matrix, ask_lm.py).",
    )
    calibration: Literal["none", "examples"] = Field(
        "none",
        description="none: the judge's answer is its label (the paper). examples: the label is P(yes) at or "
        "above a threshold fitted on the user's examples, each asked as a test item (with the "
        "other examples shown; the No-Objective judge, calibrated alike, is shown none): k more "
        "calls per condition, never the test set; the embedded judge's P(yes) ranks items "
        "better than its answers do. Ultimatum, graded, 2+ distinct examples.",
    )
    no_objective: bool = Field(True, description="Also label with no objective (the No-Objective baseline).")
    turn_limit: int = Field(10, ge=2, le=40, description="Negotiation: most utterances in a dialogue.")
    negotiator_episodes: int = Field(
        250,
        ge=0,
        le=100_000,
        description="Negotiation: REINFORCE dialogues per agent (the paper: 250 contexts, one epoch).",
    )
    negotiator_seeds: int = Field(
        1,
        ge=1,
        le=10,
        description="Negotiation: agents per reward source (each LLM-rewarded dialogue is a judge call).",
    )

    @model_validator(mode="after")
    def _objective_fits_the_task(self) -> ProxyBlock:
        registry = {"ultimatum": ULTIMATUM_OBJECTIVES, "matrix": MATRIX_OBJECTIVES, "negotiation": NEGOTIATION_STYLES}[
            self.task
        ]
        if self.objective.name not in registry:
            raise ValueError(
                f"objective.name: unknown {self.task} objective {self.objective.name!r} "
                f"(known: {', '.join(registry.names())})"
            )
        function = registry.get(self.objective.name)
        wanted = [name for name in inspect.signature(function).parameters if name not in ("offer", "game", "episode")]
        given = self.objective.params()
        missing = [name for name in wanted if name not in given]
        extra = [name for name in given if name not in wanted]
        if missing or extra:
            raise ValueError(
                f"objective: {self.objective.name} takes {', '.join(wanted) or 'no parameters'}"
                + (f"; missing {', '.join(missing)}" if missing else "")
                + (f"; not {', '.join(extra)}" if extra else "")
            )
        if self.objective.name == "reject_below_share" and not 0 < (self.objective.threshold or 0) < 1:
            raise ValueError("objective.threshold: a share lies between 0 and 1")
        if self.task == "matrix":
            if self.intent.form == "examples":
                raise ValueError("intent.form: matrix games are judged zero-shot: description or none")
            for game in self.games:
                if game not in MATRIX_GAMES:
                    raise ValueError(f"games: unknown matrix game {game!r} (known: {', '.join(MATRIX_GAMES.names())})")
        if self.task == "negotiation":
            if isinstance(self.intent.examples, list) or self.intent.examples not in (None, 3):
                raise ValueError("intent.examples: negotiation prompts show the paper's three example dialogues")
        if self.calibration == "examples":
            if self.task != "ultimatum":
                raise ValueError("calibration: only the ultimatum task is calibrated on the user's examples")
            if self.example_count() < 2:
                raise ValueError(
                    "calibration: the threshold is fitted on the user's examples, each asked with the "
                    "others shown: give at least 2 examples"
                )
            if self.scoring != "graded":
                raise ValueError("calibration: a threshold on P(yes) needs scoring: graded")
            given = self.intent.examples
            if isinstance(given, list) and len({(e.proposer, e.responder) for e in given}) < len(given):
                raise ValueError(
                    "calibration: each example is held out in turn, so the examples must differ "
                    "(a duplicate would show the held-out example's own label)"
                )
        if self.task != "matrix" and self.intent.form == "description" and self.intent.description is None:
            raise ValueError("intent.description: the description form needs the objective in words")
        return self

    def example_count(self) -> int:
        """How many examples the judge sees (0 unless the intent is given by examples)."""
        if self.intent.form != "examples":
            return 0
        if isinstance(self.intent.examples, list):
            return len(self.intent.examples)
        return 3 if self.task == "negotiation" else (10 if self.intent.examples is None else self.intent.examples)

    def reasoning_budget(self) -> int:
        """The step-by-step answer's token limit in force."""
        return self.reasoning_tokens or (512 if self.task == "matrix" else 256)

    def offer_kind(self) -> str:
        """The ultimatum proposal distribution in force."""
        return self.offers or ("payoff" if self.objective.name == "reject_below_amount" else "percentage")

    def should_reject(self, offer: Offer) -> bool:
        """The ground truth: whether the user's objective rejects `offer` (read from the shown amounts)."""
        return bool(ULTIMATUM_OBJECTIVES.get(self.objective.name)(offer, **self.objective.params()))

    def draw_split(
        self, seed_rng: np.random.Generator, example_rng: np.random.Generator
    ) -> tuple[list[Offer], list[Offer]]:
        """The user's example proposals (drawn when `intent.examples` is a number) and the test proposals,
        disjoint (an ultimatum task's)."""
        kind = self.offer_kind()
        given = self.intent.examples
        if self.intent.form != "examples":
            example_offers: list[Offer] = []
        elif isinstance(given, list):
            example_offers = [Offer(e.proposer, e.responder) for e in given]
        else:
            example_offers = draw_offers(example_rng, self.example_count(), kind=kind)
        test = draw_offers(
            seed_rng,
            self.test_items,
            kind=kind,
            label=self.should_reject,
            balanced=self.balanced,
            exclude=frozenset(example_offers),
        )
        return example_offers, test


class ProxyScenario(LLMScenario):
    """A labeling experiment, as written in a scenario file with a `proxy:` block."""

    proxy: ProxyBlock

    @model_validator(mode="after")
    def _test_set_can_be_drawn(self) -> ProxyScenario:
        """Draw the ultimatum test set now (milliseconds): one that cannot be drawn is bad input, found at load."""
        if self.proxy.task == "ultimatum":
            try:
                self.test_set()
            except UsageError as error:
                raise ValueError(f"proxy.test_items: {error}") from None
        return self

    def test_set(self) -> tuple[list[Offer], list[Offer]]:
        """The ultimatum task's example proposals and test proposals, from the seed tree's branches."""
        return self.proxy.draw_split(generator(self.seed, TEST), generator(self.seed, EXAMPLES))


def apply_proxy_overrides(
    scenario: Any,
    *,
    seed: int | None = None,
    models: list[str] | None = None,
    test_items: int | None = None,
    source: str = "<command line>",
) -> Any:
    """Return a labeling scenario with command-line overrides (`--seed`, `--model ROLE=SPEC`, `--items`) applied."""
    from sandbox.core.scenario import ROLES
    from sandbox.core.scenario_files import model_overrides, parse_kind

    data = scenario.model_dump(mode="json", exclude_none=True)
    if seed is not None:
        data["seed"] = seed
    if test_items is not None:
        data["proxy"]["test_items"] = test_items
    model_overrides(data, models, ROLES, source)
    return parse_kind("proxy", data, source)
