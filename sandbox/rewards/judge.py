"""The judge: an LLM asked whether an episode satisfies the user's objective, its answer read as a reward.

The judge is any chat model (the scenario's `judge` role, through the LLM
layer's cache, retries and transcript). A yes/no question gets a binary label
from the answer text (parser g) and, where the backend returns
log-probabilities, a graded reward P(yes) / (P(yes) + P(no)) read at the
token that carries the decision. An answer that parses to neither is
unparsed: its reward is missing, never a silent 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage

import prompts
from sandbox.llm.contracts import TOKEN_LOGPROBS, CallInfo, Constraint
from sandbox.llm.wrapper import acall
from sandbox.rewards.parse import (
    THEREFORE_MARKER,
    decision_position,
    option_set,
    therefore_desirable,
    two_way_probability,
    yes_no,
)

__all__ = ["Judgement", "ProxyJudge", "SetJudgement"]

# Where a graded reward came from: the answer's log-probabilities, or (without them) its parsed text.
Source = Literal["logprob", "binary", "unparsed"]
_OPTIONS_GRAMMAR = 'root ::= "None" | letter (", " letter)*\nletter ::= [A-D]'


@dataclass(frozen=True)
class Judgement:
    """The judge's verdict on one episode.

    Attributes:
        label: The parsed answer (True = yes, the objective is met); None when it did not parse.
        p_yes: P(yes) / (P(yes) + P(no)) at the decision token, where the backend gave log-probabilities.
        mass: P(yes) + P(no) at that token: how much of the distribution the two answers hold.
        answer: The judge's text.
    """

    label: bool | None
    p_yes: float | None
    mass: float | None
    answer: str

    @property
    def source(self) -> Source:
        if self.label is None:
            return "unparsed"
        return "logprob" if self.p_yes is not None else "binary"

    @property
    def reward(self) -> float | None:
        """The graded reward in [0, 1]: P(yes) where known, else the binary label; None when unparsed."""
        if self.label is None:
            return None
        return self.p_yes if self.p_yes is not None else float(self.label)


@dataclass(frozen=True)
class SetJudgement:
    """The judge's answer to a multiple-choice question: the option letters it named (None: unparsed)."""

    options: frozenset[str] | None
    reasoning: str
    answer: str


@dataclass
class ProxyJudge:
    """Asks `model` the questions of a reward-design prompt.

    Attributes:
        model: The judge's chat model (a sandbox stack, or any LangChain chat model).
        temperature: Sampling temperature of every judge call (the paper: 0).
        graded: Ask for log-probabilities and return P(yes) where the backend gives them.
        top_logprobs: How many of the likeliest tokens to read at the decision position.
        reasoning_tokens: Most tokens of a step-by-step answer.
    """

    model: BaseChatModel
    temperature: float = 0.0
    graded: bool = True
    top_logprobs: int = 10
    reasoning_tokens: int = 256

    def _kwargs(self, call: CallInfo, seed: int | None, max_tokens: int, **more: Any) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"call": call, "seed": seed, "temperature": self.temperature, "max_tokens": max_tokens}
        if self.graded:
            kwargs["top_logprobs"] = self.top_logprobs
        return {**kwargs, **more}

    async def yes_no(self, prompt: str, *, step_by_step: bool, call: CallInfo, seed: int | None = None) -> Judgement:
        """Ask `prompt`; read "Yes"/"No" (or, step by step, "the outcome is (not) desirable")."""
        messages = [HumanMessage(prompt)]
        if step_by_step:
            message = await acall(self.model, messages, **self._kwargs(call, seed, self.reasoning_tokens))
            text = str(message.content)
            label = therefore_desirable(text)
            marker, positive, negative = THEREFORE_MARKER, ("desirable",), ("not", "undesirable")
        else:
            constraint = Constraint(choices=("Yes", "No"))
            message = await acall(self.model, messages, **self._kwargs(call, seed, 4, constraint=constraint))
            text = str(message.content)
            label = yes_no(text)
            marker, positive, negative = None, ("yes",), ("no",)
        p_yes = mass = None
        logprobs = message.response_metadata.get(TOKEN_LOGPROBS) if isinstance(message, AIMessage) else None
        if label is not None and logprobs:
            position = decision_position(logprobs, marker)
            graded = (
                two_way_probability(logprobs[position]["top"], positive, negative) if position is not None else None
            )
            if graded is not None:
                p_yes, mass = graded.p_positive, graded.mass
        return Judgement(label, p_yes, mass, text)

    async def options(self, prompt: str, *, call: CallInfo, seed: int | None = None) -> SetJudgement:
        """Ask a multiple-choice question step by step, then for the letters only (Kojima et al.'s two stages)."""
        messages = [HumanMessage(prompt)]
        sampling: dict[str, Any] = {"seed": seed, "temperature": self.temperature}

        def step(name: str) -> CallInfo:
            return CallInfo(**{**call.__dict__, "step": f"{call.step}/{name}"})

        reasoning = await acall(
            self.model, messages, call=step("reasoning"), max_tokens=self.reasoning_tokens, **sampling
        )
        follow_up = [
            *messages,
            AIMessage(str(reasoning.content)),
            HumanMessage(prompts.render("proxy/matrix/answer.j2")),
        ]
        constraint = Constraint(grammar=_OPTIONS_GRAMMAR)
        answer = await acall(
            self.model, follow_up, call=step("answer"), max_tokens=16, constraint=constraint, **sampling
        )
        return SetJudgement(option_set(str(answer.content)), str(reasoning.content), str(answer.content))
