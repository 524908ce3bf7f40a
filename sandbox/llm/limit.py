"""A concurrency limit: at most `max_concurrency` calls of the wrapped model in flight.

One limiter is shared by every role that uses the same backend, so the limit
holds for the whole run. A semaphore is made per event loop, because a run
started from a notebook and one started from the CLI live on different loops.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any

from langchain_core.outputs import ChatResult
from pydantic import Field

from sandbox.llm.chat_backend import AsyncRun, CallKwargs, Messages, Stop
from sandbox.llm.wrapper import ChatModelWrapper


class ConcurrencyLimitedChatModel(ChatModelWrapper):
    """Holds calls beyond `max_concurrency` until a slot frees."""

    max_concurrency: int = Field(8, ge=1)
    # fields, not private attributes, which pydantic reads through a slow `__getattr__` (every call reads these)
    semaphores: weakref.WeakKeyDictionary = Field(default_factory=weakref.WeakKeyDictionary, exclude=True, repr=False)
    lock: Any = Field(default_factory=threading.Lock, exclude=True, repr=False)  # a threading.Lock
    in_flight: int = 0
    peak_in_flight: int = 0

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        with self.lock:
            semaphore = self.semaphores.get(loop)
            if semaphore is None:
                semaphore = self.semaphores[loop] = asyncio.Semaphore(self.max_concurrency)
            return semaphore

    async def _achat(self, messages: Messages, stop: Stop, run_manager: AsyncRun, kwargs: CallKwargs) -> ChatResult:
        async with self._semaphore():
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                return await self.inner._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
            finally:
                self.in_flight -= 1
