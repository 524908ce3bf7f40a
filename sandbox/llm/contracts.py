"""Contracts of the LLM layer: what a call carries besides its messages.

Every model is a LangChain `BaseChatModel`. A call may carry, as keyword
arguments, a `seed`, a `constraint` (structured output the backend enforces
where it can) and a `call` (who is calling, for the transcript and the
accounting). Backends ignore what they cannot use; wrappers pass all three on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage

# Keyword arguments that only the sandbox's own layers understand; a foreign
# LangChain model must not see them.
SANDBOX_KWARGS = ("call", "constraint")


@dataclass(frozen=True)
class Constraint:
    """Structured output for one call.

    Attributes:
        prefix: Text the answer must start with. A backend that can prefill
            (the embedded one) writes it as the start of the answer and
            generates only the rest; the answer it returns includes it.
        grammar: A GBNF grammar (llama.cpp) for the part of the answer after
            `prefix`; the strongest form.
        regex: A regular expression the whole answer (prefix included) must
            match (vLLM guided decoding).
        choices: A closed set of whole answers.
    """

    prefix: str = ""
    grammar: str | None = None
    regex: str | None = None
    choices: tuple[str, ...] | None = None

    def key(self) -> dict[str, Any]:
        """A JSON-able form, for cache keys."""
        return {"prefix": self.prefix, "grammar": self.grammar, "regex": self.regex,
                "choices": list(self.choices or ())}  # fmt: skip


@dataclass(frozen=True)
class CallInfo:
    """Who makes a call and where in the run it falls; recorded with every call."""

    role: str = "user"
    agent: str = ""
    run: int | None = None
    epoch: int | None = None
    episode: str | None = None
    step: str | None = None
    attempt: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def call_id(self) -> str:
        """A stable id for the call within a run directory (used to de-duplicate on resume)."""
        return f"{self.run}/{self.epoch}/{self.episode}/{self.step}/{self.agent}/{self.attempt}"


def chat_dicts(messages: list[BaseMessage]) -> list[dict[str, str]]:
    """Messages as OpenAI-style `{"role", "content"}` dicts (system, user, assistant)."""
    roles = {"human": "user", "ai": "assistant", "system": "system"}
    return [{"role": roles.get(m.type, "user"), "content": str(m.content)} for m in messages]


def strip_sandbox_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Return `kwargs` without the sandbox-only keys."""
    return {key: value for key, value in kwargs.items() if key not in SANDBOX_KWARGS}
