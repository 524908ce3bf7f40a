"""The `embedded` backend: the shipped GGUF model run in-process by xllamacpp.

xllamacpp embeds llama.cpp's server: one `Server` holds the model and its
slots (continuous batching). Calls block in C++, so each runs in a worker
thread, one thread per slot. One server is loaded per settings and shared by
every role and run in the process.

On a CPU the time goes to computing prompts (prefill). Calls that share a
system prompt and few-shot block share their first few hundred tokens, so the
server keeps prompts between calls: llama.cpp's host-memory prompt cache
(`prompt_cache_mib`) saves a slot's prompt state when the slot moves on to
another prompt, and loads the saved state that shares the longest prefix with
the next call. A prefix is then computed once and reused whichever slot runs
the call; the transcript's `prompt_cached_tokens` counts the tokens reused per
call. With one slot, the slot is chosen by least recent use, never by prompt
similarity (`slot_prompt_similarity = 0`), so every call saves the slot's prompt
and loads the best match. Choosing by similarity would overwrite a prompt that
shares only the system prompt with the next call, such as a proposal followed
by a decision of the same norm, without saving it. With several slots
the similarity choice stays, so a call goes to the slot that already holds its
prefix, and a `PrefixGate` holds back the calls that share a prefix not yet
computed until the first of them has finished. How many slots and threads fit
the machine is `sandbox.llm.embedded_tuning`'s business.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field, PrivateAttr

from sandbox.llm.contracts import Constraint, chat_dicts
from sandbox.llm.embedded_model import FILE_NAME, ensure_model_file
from sandbox.llm.embedded_tuning import choose_slots, choose_threads, physical_cores, usable_cores
from sandbox.llm.prefix_gate import PrefixGate, prefix_key
from sandbox.llm.retry import TransientLLMError

# llama.cpp picks a slot whose cached prompt shares more than this fraction of the new prompt (its default).
SLOT_SIMILARITY = 0.1


@dataclass(frozen=True)
class ServerSettings:
    """Everything a loaded server is keyed by."""

    path: str
    slots: int
    context_per_slot: int
    threads: int
    prompt_cache_mib: int


@dataclass
class LoadedServer:
    """A server, the worker threads that call it (one per slot) and its prefix gate."""

    server: Any
    pool: ThreadPoolExecutor
    gate: PrefixGate
    settings: ServerSettings


_SERVERS: dict[ServerSettings, LoadedServer] = {}
_SERVERS_LOCK = threading.Lock()


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
                xllamacpp.Server(params),
                ThreadPoolExecutor(settings.slots, thread_name_prefix="llama"),
                PrefixGate(),
                settings,
            )
        return _SERVERS[settings]


def unload_servers() -> None:
    """Stop every loaded server and free its memory (two servers in one process slow each other)."""
    with _SERVERS_LOCK:
        for loaded in _SERVERS.values():
            loaded.pool.shutdown(wait=True)
        _SERVERS.clear()
    gc.collect()


class EmbeddedChatModel(BaseChatModel):
    """Qwen2.5-Coder-1.5B-Instruct (Q4_K_M), in-process, with llama.cpp grammars for structured output."""

    model_path: str | None = Field(None, description="A GGUF file; default: the joined embedded model.")
    slots: int | None = Field(
        None, ge=1, le=64, description="Calls decoded at once; default: chosen from the cores (see embedded_tuning)."
    )
    threads: int | None = Field(None, ge=1, le=1024, description="CPU threads; default: the usable physical cores.")
    context_per_slot: int = Field(2048, ge=256, le=131072, description="Context tokens per slot.")
    prompt_cache_mib: int = Field(
        2048, ge=0, description="Host memory for prompts kept between calls (llama.cpp's prompt cache); 0 = none."
    )
    gate_prefixes: bool = Field(
        True, description="With several slots, hold calls whose shared prefix is being computed by another call."
    )
    _settings: ServerSettings | None = PrivateAttr(None)

    @property
    def _llm_type(self) -> str:
        return "embedded"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": self.model_path.rsplit("/", 1)[-1] if self.model_path else FILE_NAME}

    def settings(self) -> ServerSettings:
        """The server settings this model runs with, the machine's choices filled in (resolved once)."""
        if self._settings is not None:
            return self._settings
        cores = usable_cores()
        self._settings = ServerSettings(
            path=self.model_path or str(ensure_model_file()),
            slots=self.slots or choose_slots(cores),
            context_per_slot=self.context_per_slot,
            threads=self.threads or choose_threads(cores, physical_cores()),
            prompt_cache_mib=self.prompt_cache_mib,
        )
        return self._settings

    def _server(self) -> LoadedServer:
        return load_server(self.settings())

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
        loaded = self._server()
        response = loaded.server.handle_chat_completions(self._request(messages, stop, kwargs))
        return self._result(response, _prefix(kwargs))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        loop = asyncio.get_running_loop()
        loaded = await loop.run_in_executor(None, self._server)
        request = self._request(messages, stop, kwargs)
        # One slot runs calls one at a time in arrival order anyway; holding some back would only reorder them.
        gated = self.gate_prefixes and loaded.settings.slots > 1
        async with loaded.gate.hold(prefix_key(chat_dicts(messages)) if gated else None):
            response = await loop.run_in_executor(loaded.pool, loaded.server.handle_chat_completions, request)
        return self._result(response, _prefix(kwargs))
