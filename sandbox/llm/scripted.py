"""A scripted chat model, for tests and benchmarks only.

It answers from rules (a regex over the conversation, and an answer or a
function of the messages), sleeps a fixed latency if asked, and raises on a
prompt no rule expects. An answer may carry log-probabilities
(`ScriptedReply`), returned when a call asks for them. Its answers are never
simulation results.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field

from sandbox.llm.chat_backend import AsyncRun, CallKwargs, ChatBackend, Messages, Stop
from sandbox.llm.contracts import TOKEN_LOGPROBS


@dataclass(frozen=True)
class ScriptedReply:
    """An answer with log-probabilities (`token_logprobs`, in the shape of `contracts.TokenLogprob.to_dict()`)
    and a finish reason (`length` stands in for an answer cut off at its token limit)."""

    text: str
    token_logprobs: tuple[dict[str, Any], ...] = ()
    finish_reason: str = "stop"


Answer = str | ScriptedReply | Callable[[list[BaseMessage], dict[str, Any]], "str | ScriptedReply"]


class UnexpectedPromptError(AssertionError):
    """The scripted model met a prompt that none of its rules expects."""


class ScriptedChatModel(ChatBackend, BaseChatModel):
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

    def answer(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> str | ScriptedReply:
        """The answer for `messages`, or `UnexpectedPromptError`."""
        conversation = "\n".join(f"{m.type}: {m.content}" for m in messages)
        for pattern, answer in self.rules:
            if re.search(pattern, conversation, flags=re.S):
                reply = answer(messages, kwargs) if callable(answer) else answer
                return reply if isinstance(reply, ScriptedReply) else str(reply)
        raise UnexpectedPromptError(f"no scripted rule matches the prompt:\n{conversation[-2000:]}")

    def _result(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> ChatResult:
        started = time.perf_counter()
        self.calls += 1
        reply = self.answer(messages, kwargs)
        text = reply.text if isinstance(reply, ScriptedReply) else reply
        metadata: dict[str, Any] = {
            "finish_reason": reply.finish_reason if isinstance(reply, ScriptedReply) else "stop"
        }
        if isinstance(reply, ScriptedReply) and reply.token_logprobs and kwargs.get("top_logprobs"):
            metadata[TOKEN_LOGPROBS] = [dict(entry) for entry in reply.token_logprobs]
        usage = {
            "input_tokens": sum(len(str(m.content).split()) for m in messages),
            "output_tokens": len(text.split()),
            "total_tokens": 0,
        }
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        self.busy_s += time.perf_counter() - started
        message = AIMessage(content=text, usage_metadata=usage, response_metadata=metadata)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _chat(self, messages: Messages, stop: Stop, kwargs: CallKwargs) -> ChatResult:
        if self.latency_s:
            time.sleep(self.latency_s)
        return self._result(messages, kwargs)

    async def _achat(self, messages: Messages, stop: Stop, run_manager: AsyncRun, kwargs: CallKwargs) -> ChatResult:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return self._result(messages, kwargs)


def scripted(rules: Sequence[tuple[str, Answer]], *, latency_s: float = 0.0) -> ScriptedChatModel:
    """Build a `ScriptedChatModel` from `(pattern, answer)` rules."""
    return ScriptedChatModel(rules=list(rules), latency_s=latency_s)
