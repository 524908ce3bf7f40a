"""The base of every wrapper: a chat model that holds another and has its interface.

Wrappers call the inner model's `_agenerate` directly, so one call through a
stack of wrappers runs LangChain's callback machinery once, at the top.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import ConfigDict

from sandbox._sync import run_sync


class ChatModelWrapper(BaseChatModel):
    """A chat model that delegates to `inner`; subclasses add one concern each."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel

    @property
    def _llm_type(self) -> str:
        return f"{type(self).__name__}({self.inner._llm_type})"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return self.inner._identifying_params

    def innermost(self) -> BaseChatModel:
        """The backend at the bottom of the wrapper stack."""
        model: BaseChatModel = self.inner
        while isinstance(model, ChatModelWrapper):
            model = model.inner
        return model

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await self.inner._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        # The layer is async-first; a synchronous call runs the async path on a private loop.
        return run_sync(self._agenerate(messages, stop=stop, **kwargs))
