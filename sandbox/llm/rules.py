"""`rules:FILE.py:FUNCTION`: a model a user names for a dry pipeline: answers from a Python function, not an LLM.

    models:
      user: {spec: "rules:my_rules.py:answer"}      # or: sandbox run FILE --model user=rules:my_rules.py:answer

checks a new scenario's plumbing (prompts, parsing, tables, the viewer) without an LLM. The function takes the call's
messages as plain dicts (`{"role": "system" | "user" | "assistant", "content": TEXT}`, first to last) and returns the
answer's text:

    def answer(messages: list[dict[str, str]]) -> str:
        return "action1" if "action1" in messages[-1]["content"] else "My strategy will be to give half."

The file is relative to the directory the command runs in (or absolute); `rules:package.module:function` names an
importable module instead. Its answers are parsed like any model's (an unreadable one is a recorded illegal move).
A run with such a model is no simulation of LLM agents: its `summary.json` says so (`not_an_llm`: the roles and their
specs), and so do the viewer's run list and page. It is never a default.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from sandbox.llm.chat_backend import CallKwargs, ChatBackend, Messages, Stop
from sandbox.llm.specs import RULES, not_an_llm

__all__ = ["RULES", "RulesChatModel", "load_rules", "not_an_llm"]

ROLES = {"human": "user", "ai": "assistant", "system": "system"}


def load_rules(argument: str) -> Callable[[list[dict[str, str]]], Any]:
    """The function `FILE.py:FUNCTION` (or `module:FUNCTION`) names; `ValueError` saying what is wrong."""
    where, sep, name = argument.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise ValueError(f"rules:{argument}: write rules:FILE.py:FUNCTION (or rules:module:FUNCTION)")
    if where.endswith(".py"):
        path = Path(where).expanduser()
        if not path.is_file():
            raise ValueError(f"rules:{argument}: no such file {str(path)!r} (relative to {Path.cwd()})")
        spec = importlib.util.spec_from_file_location(f"sandbox_rules_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ValueError(f"rules:{argument}: {path} is not a Python file")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            raise ValueError(f"rules:{argument}: {path} fails to load: {type(error).__name__}: {error}") from None
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as error:
            raise ValueError(f"rules:{argument}: cannot import {where!r}: {error}") from None
    function = getattr(module, name, None)
    if not callable(function):
        raise ValueError(f"rules:{argument}: {where} has no function {name!r}")
    return function


class RulesChatModel(ChatBackend, BaseChatModel):
    """A chat model whose answers come from a user's function (`rules:`): not an LLM. Its usage counts words."""

    argument: str
    function: Any = None

    def model_post_init(self, context: Any) -> None:
        if self.function is None:
            self.function = load_rules(self.argument)

    @property
    def _llm_type(self) -> str:
        return RULES

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"rules": self.argument}

    def _chat(self, messages: Messages, stop: Stop, kwargs: CallKwargs) -> ChatResult:
        plain = [{"role": ROLES.get(m.type, m.type), "content": str(m.content)} for m in messages]
        answer = self.function(plain)
        if inspect.isawaitable(answer):
            raise TypeError(f"rules:{self.argument} returned an awaitable: write a plain function")
        text = "" if answer is None else str(answer)
        words_in = sum(len(m["content"].split()) for m in plain)
        usage = {"input_tokens": words_in, "output_tokens": len(text.split())}
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        message = AIMessage(content=text, usage_metadata=usage, response_metadata={"finish_reason": "stop"})
        return ChatResult(generations=[ChatGeneration(message=message)])
