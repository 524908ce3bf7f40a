"""The base of every wrapper: a chat model that holds another and has its interface.

Wrappers call the inner model's `_agenerate` directly, so one call through a
stack of wrappers runs LangChain's callback machinery once, at the top, and
`acall` skips even that when nobody listens (see its docstring).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables.config import var_child_runnable_config
from langsmith.utils import tracing_is_enabled
from pydantic import ConfigDict

from sandbox.llm.chat_backend import AsyncRun, CallKwargs, ChatBackend, Messages, Stop


class ChatModelWrapper(ChatBackend, BaseChatModel):
    """A chat model that delegates to `inner`; subclasses add one concern each."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel

    @property
    def _llm_type(self) -> str:
        return f"{type(self).__name__}({self.inner._llm_type})"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return dict(self.inner._identifying_params)

    def innermost(self) -> BaseChatModel:
        """The backend at the bottom of the wrapper stack."""
        model: BaseChatModel = self.inner
        while isinstance(model, ChatModelWrapper):
            model = model.inner
        return model

    async def _achat(self, messages: Messages, stop: Stop, run_manager: AsyncRun, kwargs: CallKwargs) -> ChatResult:
        return await self.inner._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)


def listened(model: BaseChatModel) -> bool:
    """Whether a call of `model` has LangChain callbacks to run: its own, the calling graph's, or LangSmith tracing."""
    if model.callbacks:
        return True
    config = var_child_runnable_config.get()  # what `ensure_config` would read its callbacks from, without its copy
    inherited = config.get("callbacks") if config else None  # a list, or a graph's manager (often with no handlers)
    return bool(getattr(inherited, "handlers", inherited) or tracing_is_enabled())


async def acall(model: BaseChatModel, messages: Sequence[BaseMessage], **kwargs: Any) -> BaseMessage:
    """One chat call; the answer message.

    A sandbox stack records every call itself (transcript and ledger), so when
    no LangChain callback listens the call goes straight to the stack's
    `_agenerate`. That skips `ainvoke`'s per-call callback setup, about 0.5 ms
    on a 2-core CPU, more than the whole stack costs, and the bulk of the
    framework time in `sandbox bench scai`. Any other model, or a listened
    one, goes through `ainvoke`, callbacks and all.
    """
    if isinstance(model, ChatModelWrapper) and not listened(model):
        result = await model._agenerate(list(messages), **kwargs)
        return result.generations[0].message
    return await model.ainvoke(list(messages), **kwargs)
