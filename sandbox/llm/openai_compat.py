"""The `openai:MODEL` backend: any OpenAI-compatible endpoint (OpenAI, a vLLM server, Ollama).

It is LangChain's `ChatOpenAI`, reading `OPENAI_BASE_URL` and `OPENAI_API_KEY`,
with the client's own retries off (the sandbox's retry wrapper owns retries)
and the sandbox-only call arguments removed before the request is built. A
call's `top_logprobs=k` becomes the API's `logprobs` option, and the answer's
log-probabilities come back in the sandbox's shape (`TOKEN_LOGPROBS`).
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI

from sandbox.llm.contracts import TOKEN_LOGPROBS, openai_token_logprobs, strip_sandbox_kwargs


def _request_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    request = strip_sandbox_kwargs(kwargs)
    if kwargs.get("top_logprobs"):
        request.update(logprobs=True, top_logprobs=int(kwargs["top_logprobs"]))
    return request


def _with_logprobs(result: ChatResult) -> ChatResult:
    """Moves the finish reason and the log-probabilities onto the message, where the sandbox's wrappers read them.

    (LangChain merges `generation_info` into the message only on its own call path, which the wrappers skip.)
    """
    for generation in result.generations:
        info = generation.generation_info or {}
        metadata = generation.message.response_metadata
        if info.get("finish_reason") is not None:
            metadata.setdefault("finish_reason", info["finish_reason"])
        logprobs = info.get("logprobs") or metadata.get("logprobs")
        if isinstance(logprobs, dict) and logprobs.get("content") is not None:
            metadata[TOKEN_LOGPROBS] = openai_token_logprobs(logprobs["content"])
    return result


class OpenAICompatibleChatModel(ChatOpenAI):
    """`ChatOpenAI` that accepts (and drops) the sandbox's `call` and `constraint` arguments."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return _with_logprobs(super()._generate(messages, stop=stop, run_manager=run_manager, **_request_kwargs(kwargs)))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return _with_logprobs(
            await super()._agenerate(messages, stop=stop, run_manager=run_manager, **_request_kwargs(kwargs))
        )


def openai_chat_model(model: str, *, timeout_s: float = 120.0) -> OpenAICompatibleChatModel:
    """Build the backend for `openai:MODEL`.

    A local server (a base URL is set) needs no real key, so a placeholder is
    sent when `OPENAI_API_KEY` is unset.
    """
    base_url = os.environ.get("OPENAI_BASE_URL") or None
    api_key = os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
    if api_key is None:
        from sandbox.errors import ModelUnavailableError

        raise ModelUnavailableError(
            f"openai:{model} needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible server)"
        )
    return OpenAICompatibleChatModel(
        model=model, base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout_s
    )
