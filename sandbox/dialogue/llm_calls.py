"""The LLM calls of a dialogue game on the project's model stack: the speakers, and the judge.

Every call carries a seed and a `CallInfo`, goes through the run's cache and
transcript, and is limited by the backend's concurrency limit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from prompts import render
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.llm.wrapper import acall
from sandbox.rules.dialogue import Message, Outcome, Prompt, Setup, dialogue_text

YES_NO = Constraint(grammar='root ::= ("yes" | "no")', regex=r"(yes|no)", choices=("yes", "no"))


def call_key(*parts: Any) -> str:
    """A short stable id of a call's content: the transcript keeps one record per distinct call."""
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:16]


@dataclass
class StackModels:
    """`DialogueModels` over two wrapped chat models: `speaker` writes messages (and, with `reward: selection`,
    says what was agreed), `judge` ends and scores dialogues.

    Attributes:
        speaker: The players' model (its role's sampling applies).
        judge: The judge's model (termination, reward model, instruction classifier).
        judge_seed: The seed of every judge call (a judgment is a function of its prompt).
        reward: The domain's reward model (`sandbox.dialogue.reward.RewardModel`), where payoffs come from an LLM.
    """

    speaker: BaseChatModel
    judge: BaseChatModel | None = None
    judge_seed: int = 0
    reward_model: Any = None

    async def speak(self, prompt: Prompt, seed: int, *, speaker: str) -> str:
        from agents.dialogue import InstructedSpeaker

        return await InstructedSpeaker(self.speaker).speak(
            prompt, seed, speaker=speaker, episode=call_key(prompt.key(), seed)
        )

    async def is_over(self, setup: Setup, dialogue: tuple[Message, ...]) -> bool:
        if self.judge is None:
            raise ValueError("termination: judge needs a judge model")
        prompt = render("dialogue/over.j2", dialogue=dialogue_text(setup, dialogue, sep="\n"))
        answer = await acall(
            self.judge,
            [HumanMessage(prompt)],
            seed=self.judge_seed,
            max_tokens=2,
            constraint=YES_NO,
            call=CallInfo(role="judge", episode=call_key(prompt), step="over"),
        )
        return str(answer.content).strip().lower().startswith("yes")

    async def reward(self, setup: Setup, dialogue: tuple[Message, ...]) -> Outcome:
        if self.reward_model is None:
            raise ValueError("this domain's payoffs come from the LLM reward model (dialogue.domain.reward)")
        return await self.reward_model.score(self.judge, setup, dialogue, seed=self.judge_seed, players=self.speaker)


@contextmanager
def run_roles(
    run_dir: Any,
    scenario: Any,
    given: Mapping[str, BaseChatModel] | None = None,
    sinks: Sequence[Any] = (),
    ledgers: Sequence[Any] = (),
) -> Iterator[dict[str, BaseChatModel]]:
    """The `players` and `judge` models of a dialogue run, on the run's cache and transcript (and `sinks`),
    counted in the run's budget (and `ledgers`, a sweep's); `given` models (by role) replace the scenario's specs.
    The transcript is closed and finalised on exit."""
    from sandbox.core import run_dir as layout
    from sandbox.core.budget import run_ledgers
    from sandbox.llm.cache import ResponseCache
    from sandbox.llm.resolve import BackendOptions, ModelStack, scenario_prices
    from sandbox.llm.transcript import TranscriptWriter, finalize_transcript

    cache = ResponseCache(run_dir / layout.CACHE)
    ledgers = run_ledgers(run_dir, scenario, ledgers) if hasattr(scenario, "budget") else list(ledgers)
    transcript = TranscriptWriter(run_dir / layout.TRANSCRIPTS)
    stack = ModelStack(
        cache=cache,
        sinks=[transcript, *sinks],
        concurrency=scenario.concurrency,
        options=BackendOptions(embedded=scenario.embedded),
        ledgers=ledgers,
        prices=scenario_prices(scenario, by="role"),
    )
    try:
        yield {
            role: stack.for_role(
                role,
                getattr(scenario.models, role).spec,
                getattr(scenario.models, role).sampling.model_dump(),
                given=(given or {}).get(role),
            )
            for role in ("players", "judge")
        }
    finally:
        transcript.close()
        cache.close()
        finalize_transcript(run_dir / layout.TRANSCRIPTS)
