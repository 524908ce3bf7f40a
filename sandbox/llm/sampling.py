"""A wrapper that fills in a role's sampling parameters where a call gives none."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult

from sandbox.llm.wrapper import ChatModelWrapper


class SampledChatModel(ChatModelWrapper):
    """Adds `temperature`, `top_p` and `max_tokens` defaults to every call."""

    temperature: float = 0.2
    top_p: float = 1.0
    max_tokens: int = 96

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        kwargs.setdefault("temperature", self.temperature)
        kwargs.setdefault("top_p", self.top_p)
        kwargs.setdefault("max_tokens", self.max_tokens)
        return await self.inner._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
