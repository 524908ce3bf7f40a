"""The record of one LLM call, and the wrapper that makes one per call for its sinks.

The sinks are the token ledger (accounting) and the transcript writer; both
see the same `CallRecord`, so the two can never disagree.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatResult

from sandbox.llm.chat_backend import AsyncRun, CallKwargs, Messages, Stop
from sandbox.llm.contracts import TOKEN_LOGPROBS, CallInfo, chat_dicts
from sandbox.llm.wrapper import ChatModelWrapper


@dataclass
class CallRecord:
    """Everything the transcript keeps about one call.

    `cache_hit` means the sandbox's response cache answered (no model call);
    `prompt_cached_tokens` counts prompt tokens the backend reused from its own
    prompt cache (llama.cpp's KV cache), where it reports them.
    """

    call_id: str
    role: str
    agent: str
    run: int | None
    epoch: int | None
    episode: str | None
    step: str | None
    attempt: int
    model: str
    messages: list[dict[str, str]]
    answer: str | None
    seed: int | None
    latency_s: float
    input_tokens: int
    output_tokens: int
    cache_hit: bool
    prompt_cached_tokens: int = 0
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # Per generated token, when the call asked for log-probabilities (`contracts.TokenLogprob.to_dict()`).
    token_logprobs: list[dict[str, Any]] | None = None
    # `openai:` calls: the endpoint that answered, and those that failed this call before it (a pool fails over).
    endpoint: str | None = None
    endpoint_failures: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        # A shallow copy: `asdict` deep-copies every message and costs more than the call itself.
        return dict(self.__dict__)


class CallSink(Protocol):
    """Receives every call record (a ledger, a transcript writer)."""

    def record(self, call: CallRecord) -> None: ...


class RecordingChatModel(ChatModelWrapper):
    """Builds a `CallRecord` for every call, failed ones too, and hands it to each sink."""

    sinks: Sequence[Any] = ()
    role: str = "user"
    model_name: str = ""

    async def _achat(self, messages: Messages, stop: Stop, run_manager: AsyncRun, kwargs: CallKwargs) -> ChatResult:
        info: CallInfo = kwargs.get("call") or CallInfo(role=self.role)
        kwargs["call"] = info  # the layers below see who calls (the budget prices by role)
        started = time.perf_counter()
        answer, error, usage, cache_hit, logprobs, metadata = None, None, {}, False, None, {}
        try:
            result = await self.inner._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
        except BaseException as exc:  # a cancelled call too: recorded as such, never as an answer
            error = f"{type(exc).__name__}: {exc}"
            raise
        else:
            generation = result.generations[0]
            answer = str(generation.message.content)
            if isinstance(generation.message, AIMessage) and generation.message.usage_metadata:
                usage = generation.message.usage_metadata
            cache_hit = bool((generation.generation_info or {}).get("cache_hit"))
            metadata = generation.message.response_metadata
            logprobs = metadata.get(TOKEN_LOGPROBS)
            return result
        finally:
            record = CallRecord(
                call_id=info.call_id(),
                role=info.role or self.role,
                agent=info.agent,
                run=info.run,
                epoch=info.epoch,
                episode=info.episode,
                step=info.step,
                attempt=info.attempt,
                model=self.model_name,
                messages=chat_dicts(messages),
                answer=answer,
                seed=kwargs.get("seed"),
                latency_s=round(time.perf_counter() - started, 6),
                input_tokens=int(usage.get("input_tokens", 0)),
                output_tokens=int(usage.get("output_tokens", 0)),
                cache_hit=cache_hit,
                prompt_cached_tokens=int((usage.get("input_token_details") or {}).get("cache_read") or 0),
                error=error,
                extra=dict(info.extra),
                token_logprobs=logprobs,
                endpoint=None if cache_hit else metadata.get("endpoint"),
                endpoint_failures=None if cache_hit else metadata.get("endpoint_failures"),
            )
            for sink in self.sinks:
                sink.record(record)
