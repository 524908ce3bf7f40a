"""LangChain's two entry points of a chat model, said once for every backend and wrapper of the sandbox.

LangChain calls a chat model's `_generate` (synchronous) or `_agenerate`
(asynchronous), each with the same five-parameter signature. `ChatBackend`,
mixed in before LangChain's class, holds both and calls the model's own
`_chat` and `_achat`, so that a backend or a wrapper writes only what it does.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables.config import run_in_executor

from sandbox.base.sync import run_sync

__all__ = ["AsyncRun", "CallKwargs", "ChatBackend", "Messages", "Stop"]

Messages = list[BaseMessage]
"""The chat a model completes."""
Stop = list[str] | None
"""Strings that end the completion, if any."""
AsyncRun = AsyncCallbackManagerForLLMRun | None
"""LangChain's callbacks of an asynchronous call, if any (a wrapper passes them to its inner model)."""
CallKwargs = dict[str, Any]
"""The call's keyword arguments (sampling, `constraint`, a `seed`, the sandbox's own)."""


class ChatBackend:
    """Mixin for a LangChain chat model (`class Mine(ChatBackend, BaseChatModel)`): write `_chat`, `_achat` or both.

    Unwritten, `_chat` runs `_achat` on a private event loop (an async-first backend, a wrapper) and `_achat`
    runs `_chat` in LangChain's executor (LangChain's own default for a model without `_agenerate`).
    """

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._chat(messages, stop, kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await self._achat(messages, stop, run_manager, kwargs)

    def _chat(self, messages: Messages, stop: Stop, kwargs: CallKwargs) -> ChatResult:
        """One completion of `messages`, synchronously (`kwargs`: the call's keyword arguments)."""
        return run_sync(self._achat(messages, stop, None, kwargs))

    async def _achat(self, messages: Messages, stop: Stop, run_manager: AsyncRun, kwargs: CallKwargs) -> ChatResult:
        """One completion of `messages`, asynchronously; `run_manager`: LangChain's callbacks of the call, if any."""
        return await run_in_executor(None, self._chat, messages, stop, kwargs)
