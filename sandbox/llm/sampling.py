"""A wrapper that fills in a role's sampling parameters where a call gives none."""

from __future__ import annotations

from langchain_core.outputs import ChatResult

from sandbox.llm.chat_backend import AsyncRun, CallKwargs, Messages, Stop
from sandbox.llm.wrapper import ChatModelWrapper


class SampledChatModel(ChatModelWrapper):
    """Adds `temperature`, `top_p` and `max_tokens` defaults to every call."""

    temperature: float = 0.2
    top_p: float = 1.0
    max_tokens: int = 96

    async def _achat(self, messages: Messages, stop: Stop, run_manager: AsyncRun, kwargs: CallKwargs) -> ChatResult:
        kwargs.setdefault("temperature", self.temperature)
        kwargs.setdefault("top_p", self.top_p)
        kwargs.setdefault("max_tokens", self.max_tokens)
        return await self.inner._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
