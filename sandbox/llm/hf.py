"""The `hf:PATH` backend: a transformers causal LM from a local directory (or a trainer's base model with a LoRA adapter).

Generation runs in a worker thread (LangChain's default for async calls), one
call at a time per model (a single CPU model gains nothing from parallel calls). transformers samples from the
global torch generator, so the call's seed is set and used under one lock.
A call's `top_logprobs=k` returns, for every generated token, the k most
likely tokens from the model's raw logits (before any sampling setting).
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, PrivateAttr

from sandbox.base.errors import ModelUnavailableError
from sandbox.llm.chat_backend import CallKwargs, ChatBackend, Messages, Stop
from sandbox.llm.contracts import TOKEN_LOGPROBS, TokenLogprob, chat_dicts


def _token_logprobs(tokenizer: Any, logits: Any, tokens: Any, k: int) -> list[dict[str, Any]]:
    """`TokenLogprob` dicts from generate's per-step raw logits and the generated token ids."""
    import torch

    entries = []
    for step_logits, token in zip(logits, tokens.tolist()):
        logprobs = torch.log_softmax(step_logits[0].float(), dim=-1)
        values, ids = logprobs.topk(k)
        top: dict[str, float] = {}
        for value, index in zip(values.tolist(), ids.tolist()):
            text = tokenizer.decode([index])
            top[text] = max(top.get(text, float("-inf")), value)
        entries.append(TokenLogprob(tokenizer.decode([token]), float(logprobs[token]), top).to_dict())
    return entries


# Every HF model in the process generates under one lock: a call's seed sets torch's global generator, which two
# models sampling at once in two threads (a distillation's student and base) would share, and their draws would
# depend on the interleaving.
_GENERATE = threading.Lock()


class HFChatModel(ChatBackend, BaseChatModel):
    """A local transformers model behind the chat-model interface."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: str
    device: str = "cpu"
    base: str | None = None  # a trainer's base-model spec (`sandbox.llm.base_model`), instead of `path`
    adapter: str | None = None  # a LoRA adapter directory (PEFT format) put on the model
    _loaded: tuple[Any, Any] | None = PrivateAttr(default=None)

    @property
    def _llm_type(self) -> str:
        return "hf"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        if self.base is None and self.adapter is None:
            return {"path": str(Path(self.path).resolve())}
        # The adapter's weights, not only its path, name the model: a retrained adapter is another model.
        weights = Path(self.adapter or "") / "adapter_model.safetensors"
        digest = hashlib.sha256(weights.read_bytes()).hexdigest()[:16] if weights.is_file() else None
        base = self.base if self.base is not None else f"hf:{Path(self.path).resolve()}"
        return {"base": base, "adapter": str(Path(self.adapter).resolve()) if self.adapter else None, "weights": digest}

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            if self.base is not None:
                from sandbox.llm.base_model import load_base_model

                loaded = load_base_model(self.base, device=self.device)
                tokenizer, model = loaded.tokenizer, loaded.model
            else:
                if not Path(self.path).is_dir():
                    raise ModelUnavailableError(f"hf:{self.path}: no such model directory")
                from transformers import AutoModelForCausalLM, AutoTokenizer

                tokenizer = AutoTokenizer.from_pretrained(self.path)
                model = AutoModelForCausalLM.from_pretrained(self.path).to(self.device)
            if self.adapter is not None:
                from peft import PeftModel

                model = PeftModel.from_pretrained(model, self.adapter)
            self._loaded = (tokenizer, model.eval())
        return self._loaded

    def _chat(self, messages: Messages, stop: Stop, kwargs: CallKwargs) -> ChatResult:
        import torch

        with _GENERATE:  # one call at a time in the process: the seed is torch's global generator
            tokenizer, model = self._load()
            chat = chat_dicts(messages)
            if tokenizer.chat_template:
                prompt = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            else:
                prompt = "\n".join(f"{m['role']}: {m['content']}" for m in chat) + "\nassistant:"
            inputs = tokenizer(prompt, return_tensors="pt").to(self.device)
            temperature = float(kwargs.get("temperature") or 0.0)
            if kwargs.get("seed") is not None:
                torch.manual_seed(int(kwargs["seed"]))
            top_k = int(kwargs.get("top_logprobs") or 0)
            with torch.no_grad():
                output = model.generate(
                    **inputs,
                    max_new_tokens=int(kwargs.get("max_tokens") or 128),
                    do_sample=temperature > 0,
                    temperature=temperature if temperature > 0 else None,
                    top_p=float(kwargs.get("top_p") or 1.0) if temperature > 0 else None,
                    pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
                    return_dict_in_generate=True,
                    output_logits=bool(top_k),
                )
            new_tokens = output.sequences[0, inputs["input_ids"].shape[1] :]
            text = tokenizer.decode(new_tokens, skip_special_tokens=True)
            metadata = {TOKEN_LOGPROBS: _token_logprobs(tokenizer, output.logits, new_tokens, top_k)} if top_k else {}
        for marker in stop or ():
            text = text.split(marker)[0]
        usage = {
            "input_tokens": int(inputs["input_ids"].shape[1]),
            "output_tokens": int(new_tokens.shape[0]),
            "total_tokens": int(inputs["input_ids"].shape[1] + new_tokens.shape[0]),
        }
        message = AIMessage(content=text, usage_metadata=usage, response_metadata=metadata)
        return ChatResult(generations=[ChatGeneration(message=message)])
