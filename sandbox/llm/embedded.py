"""The `embedded` backend: the shipped GGUF model run in-process by xllamacpp.

xllamacpp embeds llama.cpp's server: one `Server` holds the model and its
slots (continuous batching). Calls block in C++, so each runs in a worker
thread, one thread per slot, and calls reach the server in the order they
were made. One server is loaded per `ServerSettings` and shared by every role
and run in the process.

On a CPU the time goes to computing prompts (prefill), and the calls of a
society share most of their prompt: users of a norm share its system prompt
and few-shot turns. So the server keeps prompts between calls in llama.cpp's
host-memory prompt cache (`prompt_cache_mib`). When a slot takes a new call,
it saves the prompt it holds to the cache and loads the cached prompt that
best matches the new one: llama.cpp takes a saved prompt only if it shares
more of the new prompt than the slot's own, and at least a quarter of its own
tokens. Only the rest is computed, so a shared prefix is computed once and
reused afterwards. The transcript's `prompt_cached_tokens` counts the tokens
reused per call.

With one slot, the slot is taken by least recent use, never by prompt
similarity (`slot_prompt_similarity = 0`), so every call takes that save-and-load
path. Taken by similarity, a slot overwrites the prompt it holds without
saving it whenever the new call keeps more than half of it, for example a
proposal after a decision of the same norm, which share only the system prompt.

With several slots, a call goes to the free slot that already holds most of
its prompt (similarity). The cache moves a saved prompt into one slot rather
than copying it, so a prefix is computed at most once per slot, not once in
all. How many slots and threads fit the machine is
`sandbox.llm.embedded_tuning`'s business.
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from sandbox.llm.chat_backend import AsyncRun, CallKwargs, ChatBackend, Messages, Stop
from sandbox.llm.contracts import TOKEN_LOGPROBS, Constraint, chat_dicts, openai_token_logprobs
from sandbox.llm.embedded_model import FILE_NAME, ensure_model_file
from sandbox.llm.embedded_tuning import EmbeddedSettings, ServerSettings
from sandbox.llm.errors import TransientLLMError

# llama.cpp picks a free slot whose prompt shares more than this fraction of the new prompt (its default).
SLOT_SIMILARITY = 0.1


@dataclass
class LoadedServer:
    """A server and the worker threads that call it, one per slot."""

    server: Any
    pool: ThreadPoolExecutor
    settings: ServerSettings


_SERVERS: dict[ServerSettings, LoadedServer] = {}
_RESOLVED: dict[tuple[str | None, EmbeddedSettings], ServerSettings] = {}
_SERVERS_LOCK = threading.Lock()
# Per event loop (a notebook's and the CLI's differ): calls wait here, in order, while a server loads.
_LOAD_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


def _prefix(kwargs: dict[str, Any]) -> str:
    constraint = kwargs.get("constraint")
    return constraint.prefix if constraint is not None else ""


def load_server(settings: ServerSettings) -> LoadedServer:
    """Load (once) an xllamacpp server with these settings; later calls return the same one."""
    with _SERVERS_LOCK:
        if settings not in _SERVERS:
            import xllamacpp  # imported here: loading the native library is only worth it when used

            params = xllamacpp.CommonParams()
            params.model.path = settings.path
            params.n_parallel = settings.slots
            params.n_ctx = settings.context_per_slot * settings.slots
            params.cpuparams.n_threads = settings.threads
            params.cpuparams_batch.n_threads = settings.threads
            params.cache_ram_mib = settings.prompt_cache_mib
            params.slot_prompt_similarity = SLOT_SIMILARITY if settings.slots > 1 else 0.0
            params.verbosity = -1  # llama.cpp logs every slot event; the transcript says what matters
            params.warmup = False
            _SERVERS[settings] = LoadedServer(
                xllamacpp.Server(params), ThreadPoolExecutor(settings.slots, thread_name_prefix="llama"), settings
            )
        return _SERVERS[settings]


def unload_servers() -> None:
    """Stop every loaded server and free its memory (two servers in one process slow each other)."""
    with _SERVERS_LOCK:
        loaded = list(_SERVERS.values())
        _SERVERS.clear()
    for server in loaded:
        server.pool.shutdown(wait=True)
    del loaded
    gc.collect()


def _load_lock() -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    with _SERVERS_LOCK:
        lock = _LOAD_LOCKS.get(loop)
        if lock is None:
            lock = _LOAD_LOCKS[loop] = asyncio.Lock()
        return lock


class EmbeddedChatModel(ChatBackend, BaseChatModel):
    """Qwen2.5-Coder-1.5B-Instruct (Q4_K_M), in-process, with llama.cpp grammars for structured output."""

    model_path: str | None = Field(None, description="A GGUF file; default: the joined embedded model.")
    settings: EmbeddedSettings = Field(
        default_factory=EmbeddedSettings,
        description="Slots, threads, context and prompt cache (a scenario's `embedded:`).",
    )

    @property
    def _llm_type(self) -> str:
        return "embedded"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": os.path.basename(self.model_path) if self.model_path else FILE_NAME}

    def server_settings(self) -> ServerSettings:
        """The settings of this model's server on this machine (resolved once per model file and settings).

        The first call may join and verify the embedded model file (see `embedded_model`).
        """
        key = (self.model_path, self.settings)
        if key not in _RESOLVED:
            resolved = self.settings.resolve(self.model_path or str(ensure_model_file()))
            with _SERVERS_LOCK:
                _RESOLVED.setdefault(key, resolved)
        return _RESOLVED[key]

    def _server(self) -> LoadedServer:
        return load_server(self.server_settings())

    async def _aserver(self) -> LoadedServer:
        """The loaded server. Every call passes one lock (free when uncontended), so while the server loads,
        calls queue in the order they were made and reach its workers in that order."""
        async with _load_lock():
            settings = _RESOLVED.get((self.model_path, self.settings))
            loaded = _SERVERS.get(settings) if settings is not None else None
            if loaded is None:
                loaded = await asyncio.get_running_loop().run_in_executor(None, self._server)
            return loaded

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
        if kwargs.get("top_logprobs"):
            # llama.cpp reports the probabilities before sampling, so a grammar does not change them.
            request["logprobs"] = True
            request["top_logprobs"] = int(kwargs["top_logprobs"])
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
        metadata: dict[str, Any] = {"finish_reason": choice.get("finish_reason")}
        if choice.get("logprobs"):
            metadata[TOKEN_LOGPROBS] = openai_token_logprobs(choice["logprobs"].get("content"))
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
            response_metadata=metadata,
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _chat(self, messages: Messages, stop: Stop, kwargs: CallKwargs) -> ChatResult:
        response = self._server().server.handle_chat_completions(self._request(messages, stop, kwargs))
        return self._result(response, _prefix(kwargs))

    async def _achat(self, messages: Messages, stop: Stop, run_manager: AsyncRun, kwargs: CallKwargs) -> ChatResult:
        loaded = await self._aserver()
        request = self._request(messages, stop, kwargs)
        try:
            future = asyncio.get_running_loop().run_in_executor(
                loaded.pool, loaded.server.handle_chat_completions, request
            )
        except RuntimeError as error:  # the server was unloaded under this call: the retry loads it again
            raise TransientLLMError(f"embedded model server stopped: {error}") from error
        return self._result(await future, _prefix(kwargs))
