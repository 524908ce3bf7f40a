"""The `vllm:MODEL` backend: in-process vLLM (the optional `vllm` extra, GPU).

vLLM is imported only when this backend is built, so the rest of the sandbox
never needs it. Grammars and regexes become vLLM's structured outputs.
"""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, PrivateAttr

from sandbox.base.errors import ModelUnavailableError
from sandbox.llm.chat_backend import CallKwargs, ChatBackend, Messages, Stop
from sandbox.llm.contracts import Constraint, chat_dicts


class VLLMChatModel(ChatBackend, BaseChatModel):
    """A vLLM engine in this process."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: str
    _engine: Any = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "vllm"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": self.model}

    def _load(self) -> Any:
        if self._engine is None:
            try:
                import vllm
            except ImportError as error:
                raise ModelUnavailableError(
                    "vllm:MODEL needs the optional extra: pip install 'norm-sandbox[vllm]' (CUDA machines only)"
                ) from error
            self._engine = vllm.LLM(model=self.model)
        return self._engine

    def _sampling(self, kwargs: dict[str, Any]) -> Any:
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        constraint: Constraint | None = kwargs.get("constraint")
        structured = None
        if constraint is not None:
            # The regex covers the whole answer; the grammar only what follows a prefill.
            if constraint.regex:
                structured = StructuredOutputsParams(regex=constraint.regex)
            elif constraint.choices:
                structured = StructuredOutputsParams(choice=list(constraint.choices))
        return SamplingParams(
            temperature=float(kwargs.get("temperature") or 0.0),
            top_p=float(kwargs.get("top_p") or 1.0),
            max_tokens=int(kwargs.get("max_tokens") or 128),
            seed=kwargs.get("seed"),
            structured_outputs=structured,
        )

    def _chat(self, messages: Messages, stop: Stop, kwargs: CallKwargs) -> ChatResult:
        with self._lock:
            engine = self._load()
            chat = chat_dicts(messages)
            output = engine.chat(chat, self._sampling(kwargs), use_tqdm=False)[0]
        completion = output.outputs[0]
        usage = {
            "input_tokens": len(output.prompt_token_ids or ()),
            "output_tokens": len(completion.token_ids),
            "total_tokens": len(output.prompt_token_ids or ()) + len(completion.token_ids),
        }
        return ChatResult(
            generations=[ChatGeneration(message=AIMessage(content=completion.text, usage_metadata=usage))]
        )
