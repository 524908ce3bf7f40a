"""The `embedded` backend: the shipped GGUF model run in-process by xllamacpp.

xllamacpp embeds llama.cpp's server: one `Server` holds the model and
several parallel slots (continuous batching). Calls block in C++, so each runs
in a worker thread; the slots then decode together. One server is loaded per
(file, slots, context) and shared by every role and run in the process.
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from sandbox.llm.contracts import Constraint, chat_dicts
from sandbox.llm.embedded_model import FILE_NAME, ensure_model_file
from sandbox.llm.retry import TransientLLMError

_SERVERS: dict[tuple[str, int, int, int], tuple[Any, ThreadPoolExecutor]] = {}
_SERVERS_LOCK = threading.Lock()


def _prefix(kwargs: dict[str, Any]) -> str:
    constraint = kwargs.get("constraint")
    return constraint.prefix if constraint is not None else ""



def load_server(path: str, *, parallel: int, context: int, threads: int) -> tuple[Any, ThreadPoolExecutor]:
    """Load (once) an xllamacpp server for `path` with `parallel` slots sharing `context` tokens."""
    key = (path, parallel, context, threads)
    with _SERVERS_LOCK:
        if key not in _SERVERS:
            import xllamacpp  # imported here: loading the native library is only worth it when used

            params = xllamacpp.CommonParams()
            params.model.path = path
            params.n_parallel = parallel
            params.n_ctx = context
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
            params.verbosity = -1  # llama.cpp logs every slot event; the transcript says what matters
            params.warmup = False
            _SERVERS[key] = (xllamacpp.Server(params), ThreadPoolExecutor(parallel, thread_name_prefix="llama"))
        return _SERVERS[key]


def unload_servers() -> None:
    """Stop every loaded server and free its memory (two servers in one process slow each other)."""
    with _SERVERS_LOCK:
        for server, pool in _SERVERS.values():
            pool.shutdown(wait=True)
            del server
        _SERVERS.clear()
    gc.collect()


class EmbeddedChatModel(BaseChatModel):
    """Qwen2.5-Coder-1.5B-Instruct (Q4_K_M), in-process, with llama.cpp grammars for structured output."""

    model_path: str | None = Field(None, description="A GGUF file; default: the joined embedded model.")
    parallel: int = Field(4, ge=1, le=64, description="Parallel decoding slots.")
    context_per_slot: int = Field(2048, ge=256, description="Context tokens per slot.")
    threads: int = Field(default_factory=lambda: os.cpu_count() or 2, ge=1)

    @property
    def _llm_type(self) -> str:
        return "embedded"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": os.path.basename(self.model_path) if self.model_path else FILE_NAME}

    def _server(self) -> tuple[Any, ThreadPoolExecutor]:
        path = self.model_path or str(ensure_model_file())
        return load_server(
            path, parallel=self.parallel, context=self.context_per_slot * self.parallel, threads=self.threads
        )

    def _request(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]) -> dict:
        request: dict[str, Any] = {
            "messages": chat_dicts(messages),
            "max_tokens": kwargs.get("max_tokens") or 256,
            "temperature": kwargs.get("temperature", 0.0),
            "top_p": kwargs.get("top_p", 1.0),
        }
        if kwargs.get("seed") is not None:
            request["seed"] = int(kwargs["seed"]) % 2**32
        if stop:
            request["stop"] = stop
        constraint: Constraint | None = kwargs.get("constraint")
        if constraint is not None:
            if constraint.prefix:
                # llama.cpp continues a trailing assistant message (prefill).
                request["messages"].append({"role": "assistant", "content": constraint.prefix})
            if constraint.grammar:
                request["grammar"] = constraint.grammar
            elif constraint.choices:
                request["grammar"] = "root ::= " + " | ".join(f'"{c}"' for c in constraint.choices)
        return request

    @staticmethod
    def _result(response: dict[str, Any], prefix: str = "") -> ChatResult:
        if "error" in response:
            error = response["error"]
            message = f"embedded model error {error.get('code')}: {error.get('message')}"
            if int(error.get("code") or 500) >= 500:
                raise TransientLLMError(message)
            raise ValueError(message)
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        content = choice["message"].get("content") or ""
        if prefix and not content.startswith(prefix):
            content = prefix + content  # servers differ on whether a prefill is echoed
        message = AIMessage(
            content=content,
            usage_metadata={
                "input_tokens": usage.get("prompt_tokens", 0),
                "output_tokens": usage.get("completion_tokens", 0),
                "total_tokens": usage.get("total_tokens", 0),
                "input_token_details": {
                    "cache_read": (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
                },
            },
            response_metadata={"finish_reason": choice.get("finish_reason")},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        server, _ = self._server()
        response = server.handle_chat_completions(self._request(messages, stop, kwargs))
        return self._result(response, _prefix(kwargs))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        loop = asyncio.get_running_loop()
        server, pool = await loop.run_in_executor(None, self._server)
        request = self._request(messages, stop, kwargs)
        response = await loop.run_in_executor(pool, server.handle_chat_completions, request)
        return self._result(response, _prefix(kwargs))
