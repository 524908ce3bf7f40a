"""A scripted chat model, for tests and benchmarks only.

It answers from rules (a regex over the conversation, and an answer or a
function of the messages), sleeps a fixed latency if asked, and raises on a
prompt no rule expects. Its answers are never simulation results.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from typing import Any, Union

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field

Answer = Union[str, Callable[[list[BaseMessage], dict[str, Any]], str]]


class UnexpectedPromptError(AssertionError):
    """The scripted model met a prompt that none of its rules expects."""


class ScriptedChatModel(BaseChatModel):
    """Answers by rules: the first `(pattern, answer)` whose pattern matches the conversation wins.

    The conversation is matched as `role: content` lines joined by newlines.
    An answer is a string or a function of (messages, call kwargs).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    rules: Sequence[tuple[str, Any]] = Field(default_factory=list)
    latency_s: float = Field(0.0, ge=0.0, description="Sleep per call, to stand in for a real model.")
    name_tag: str = "scripted"
    calls: int = 0
    busy_s: float = Field(0.0, description="Seconds spent answering (latency sleeps excluded).")

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"name": self.name_tag}

    def answer(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> str:
        """The answer for `messages`, or `UnexpectedPromptError`."""
        conversation = "\n".join(f"{m.type}: {m.content}" for m in messages)
        for pattern, answer in self.rules:
            if re.search(pattern, conversation, flags=re.S):
                return answer(messages, kwargs) if callable(answer) else str(answer)
        raise UnexpectedPromptError(f"no scripted rule matches the prompt:\n{conversation[-2000:]}")

    def _result(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> ChatResult:
        started = time.perf_counter()
        self.calls += 1
        text = self.answer(messages, kwargs)
        usage = {
            "input_tokens": sum(len(str(m.content).split()) for m in messages),
            "output_tokens": len(text.split()),
            "total_tokens": 0,
        }
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        self.busy_s += time.perf_counter() - started
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, usage_metadata=usage))])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency_s:
            time.sleep(self.latency_s)
        return self._result(messages, kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return self._result(messages, kwargs)


def scripted(rules: Sequence[tuple[str, Answer]], *, latency_s: float = 0.0) -> ScriptedChatModel:
    """Build a `ScriptedChatModel` from `(pattern, answer)` rules."""
    return ScriptedChatModel(rules=list(rules), latency_s=latency_s)
