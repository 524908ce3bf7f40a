"""The `openai:MODEL` backend: any OpenAI-compatible endpoint (OpenAI, a vLLM server, llama.cpp, Ollama), or a
pool of them (`openai:MODEL@URL1,URL2`).

It is LangChain's `ChatOpenAI`: LangChain builds the request (`_get_request_payload`)
and reads the answer (`_create_chat_result`), reading `OPENAI_BASE_URL` and
`OPENAI_API_KEY`. The request itself goes out through the sandbox's
`EndpointPool` (plain JSON over aiohttp), not the openai SDK, whose request
transform cost more CPU than the rest of a call. The sandbox's retry wrapper
owns retries; the sandbox-only call arguments are removed before the request
is built. A call's `top_logprobs=k` becomes the API's `logprobs` option, and
the answer's log-probabilities come back in the sandbox's shape
(`TOKEN_LOGPROBS`). The answer's metadata says which endpoint answered
(`endpoint`) and which failed before it (`endpoint_failures`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI
from pydantic import Field, SecretStr

from sandbox.llm.chat_backend import AsyncRun, CallKwargs, ChatBackend, Messages, Stop
from sandbox.llm.contracts import TOKEN_LOGPROBS, Constraint, openai_token_logprobs, strip_sandbox_kwargs
from sandbox.llm.endpoints import EndpointPool, parse_endpoints

_ROLES = {SystemMessage: "system", HumanMessage: "user", AIMessage: "assistant"}  # LangChain's roles of plain texts
_O_SERIES = re.compile(r"^o\d")  # models whose system messages LangChain sends as `developer`


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


def structured_fields(constraint: Constraint | None, structured: str) -> dict[str, Any]:
    r"""The request fields that make a server enforce `constraint`: vLLM's guided decoding
    (`structured_outputs`), llama.cpp's GBNF `grammar`, or none for OpenAI itself.

    The tolerant parser reads every answer either way; this only makes a legal
    answer likelier on servers that can enforce one.

    >>> structured_fields(Constraint(choices=("yes", "no")), "vllm")
    {'structured_outputs': {'choice': ['yes', 'no']}}
    >>> structured_fields(Constraint(prefix="A:", grammar='root ::= " " [0-9]'), "llamacpp")["grammar"]
    'root ::= "A:" answer\nanswer ::= " " [0-9]'
    """
    if constraint is None or structured == "none":
        return {}
    if structured == "vllm":
        if constraint.choices:
            return {"structured_outputs": {"choice": list(constraint.choices)}}
        if constraint.regex:
            return {"structured_outputs": {"regex": constraint.regex}}
        if constraint.grammar and not constraint.prefix:
            return {"structured_outputs": {"grammar": constraint.grammar}}
        return {}
    grammar = constraint.grammar
    if grammar is None and constraint.choices:
        grammar = "root ::= " + " | ".join(json.dumps(choice) for choice in constraint.choices)
    if grammar is None:
        return {}
    if constraint.prefix:  # the answer is the prefix, then what the grammar's root allows
        grammar = f"root ::= {json.dumps(constraint.prefix)} answer\n" + re.sub(
            r"^root\s*::=", "answer ::=", grammar, flags=re.M
        )
    return {"grammar": grammar}


class OpenAICompatibleChatModel(ChatBackend, ChatOpenAI):
    """`ChatOpenAI` whose requests go straight to an `EndpointPool` (one endpoint or several), not through the
    openai SDK; it accepts (and drops) the sandbox's `call` argument and turns `constraint` into the server's
    structured-output fields where the spec says the server has them."""

    endpoint_spec: Any = None
    # a field, not a private attribute, which pydantic reads through a slow `__getattr__` (every call reads it)
    endpoint_pool: Any = Field(default=None, exclude=True, repr=False)
    request_defaults: dict[str, Any] | None = Field(default=None, exclude=True, repr=False)  # `request_payload`'s

    @property
    def pool(self) -> EndpointPool:
        if self.endpoint_pool is None:
            self.endpoint_pool = EndpointPool(
                self.endpoint_spec,
                api_key=self.openai_api_key.get_secret_value() if isinstance(self.openai_api_key, SecretStr) else "",
                timeout_s=float(self.request_timeout) if isinstance(self.request_timeout, int | float) else 120.0,
            )
        return self.endpoint_pool

    def request_payload(self, messages: Messages, stop: Stop, kwargs: CallKwargs) -> dict[str, Any]:
        """LangChain's request (`_get_request_payload`), built directly where every message is a plain system, human or
        AI text (no name, extra fields or tool calls) for a chat-completions model that is not an o-series one: the
        same dict (a test holds them equal) without LangChain's conversion of each message, a tenth of a call's CPU.
        Anything else goes through LangChain."""
        if self.request_defaults is None:
            self.request_defaults = self._default_params
        plain = not _O_SERIES.match(self.model_name or "") and all(
            type(m) in _ROLES
            and isinstance(m.content, str)
            and not m.name
            and not m.additional_kwargs
            and not getattr(m, "tool_calls", None)
            and not getattr(m, "invalid_tool_calls", None)
            for m in messages
        )
        payload = {**self.request_defaults, **kwargs}
        if not plain or self._use_responses_api(payload):
            return self._get_request_payload(messages, stop=stop, **kwargs)
        if stop is not None:
            payload["stop"] = stop
        if "max_tokens" in payload:  # as ChatOpenAI: max_tokens became max_completion_tokens (September 2024)
            payload["max_completion_tokens"] = payload.pop("max_tokens")
        payload["messages"] = [{"content": m.content, "role": _ROLES[type(m)]} for m in messages]
        return payload

    async def _achat(self, messages: Messages, stop: Stop, run_manager: AsyncRun, kwargs: CallKwargs) -> ChatResult:
        payload = self.request_payload(messages, stop, _request_kwargs(kwargs))
        payload.pop("stream", None)
        payload.update(structured_fields(kwargs.get("constraint"), self.endpoint_spec.structured))
        response, endpoint, failed = await self.pool.post("/chat/completions", payload)
        result = _with_logprobs(self._create_chat_result(response))
        for generation in result.generations:
            generation.message.response_metadata["endpoint"] = endpoint
            if failed:
                generation.message.response_metadata["endpoint_failures"] = failed
        return result

    async def aclose(self) -> None:
        """Close this event loop's HTTP session."""
        if self.endpoint_pool is not None:
            await self.endpoint_pool.aclose()


def openai_chat_model(argument: str, *, timeout_s: float = 120.0) -> OpenAICompatibleChatModel:
    """Build the backend for `openai:MODEL` or `openai:MODEL@URL1,URL2?OPTIONS` (`sandbox.llm.endpoints`).

    Without URLs the endpoint is `OPENAI_BASE_URL` (or OpenAI's own). A local
    server (a URL is given) needs no real key, so a placeholder is sent when
    `OPENAI_API_KEY` is unset.
    """
    spec = parse_endpoints(argument)
    base_url = os.environ.get("OPENAI_BASE_URL") or None
    api_key = os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url or spec.urls else None)
    if api_key is None:
        from sandbox.base.errors import ModelUnavailableError

        raise ModelUnavailableError(
            f"openai:{spec.model} needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible server)"
        )
    urls = spec.urls or ((base_url or "https://api.openai.com/v1").rstrip("/"),)
    return OpenAICompatibleChatModel(
        model=spec.model,
        base_url=urls[0],
        api_key=api_key,
        max_retries=0,
        timeout=timeout_s,
        endpoint_spec=replace(spec, urls=urls),
    )
