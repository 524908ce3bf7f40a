"""Retry with capped exponential backoff on transient failures (timeouts, rate limits, 5xx).

Anything else (a bad request, a missing model) fails at once: retrying it
would only spend the budget.
"""

from __future__ import annotations

import asyncio
import random

from langchain_core.outputs import ChatResult
from pydantic import Field, PrivateAttr

from sandbox.llm.chat_backend import AsyncRun, CallKwargs, Messages, Stop
from sandbox.llm.errors import TransientLLMError
from sandbox.llm.wrapper import ChatModelWrapper


def is_transient(error: BaseException) -> bool:
    """Whether `error` is a timeout, a rate limit, a connection drop or a server error."""
    if isinstance(error, (TransientLLMError, TimeoutError, asyncio.TimeoutError, ConnectionError)):
        return True
    try:
        import httpx
        import openai
    except ImportError:  # pragma: no cover - both are dependencies
        return False
    if isinstance(error, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)):
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code == 429 or error.status_code >= 500
    return isinstance(error, (httpx.TimeoutException, httpx.NetworkError))


class RetryExhaustedError(RuntimeError):
    """A call kept failing transiently after every allowed attempt."""


class RetryingChatModel(ChatModelWrapper):
    """Retries transient failures with exponential backoff and full jitter, with a cap."""

    max_attempts: int = Field(5, ge=1, description="Attempts in all, the first included.")
    base_delay_s: float = Field(0.5, ge=0.0, description="Backoff before the second attempt.")
    max_delay_s: float = Field(20.0, ge=0.0, description="Cap on one backoff.")
    timeout_s: float | None = Field(None, gt=0.0, description="Per-attempt timeout; None waits forever.")
    # Jitter only spreads retries in time; it never touches results, so it has its own generator.
    _jitter: random.Random = PrivateAttr(default_factory=random.Random)
    retries: int = 0

    def backoff(self, attempt: int) -> float:
        """The delay before attempt `attempt + 1` (full jitter under a capped exponential)."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2**attempt)
        return self._jitter.uniform(0, ceiling)

    async def _achat(self, messages: Messages, stop: Stop, run_manager: AsyncRun, kwargs: CallKwargs) -> ChatResult:
        failed: list[str] = []  # endpoints that failed earlier attempts (an `openai:` pool says which)
        for attempt in range(self.max_attempts):
            try:
                call = self.inner._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
                result = await (call if self.timeout_s is None else asyncio.wait_for(call, self.timeout_s))
                if failed:
                    for generation in result.generations:
                        metadata = generation.message.response_metadata
                        metadata["endpoint_failures"] = failed + list(metadata.get("endpoint_failures") or [])
                return result
            except Exception as error:
                failed += list(getattr(error, "endpoint_failures", None) or [])
                if not is_transient(error):
                    raise
                if attempt + 1 == self.max_attempts:
                    raise RetryExhaustedError(
                        f"gave up after {self.max_attempts} attempts; last error: {type(error).__name__}: {error}"
                    ) from error
                self.retries += 1
                await asyncio.sleep(self.backoff(attempt))
        raise AssertionError("unreachable")  # pragma: no cover
