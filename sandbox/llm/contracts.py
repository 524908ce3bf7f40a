"""Contracts of the LLM layer: what a call carries besides its messages.

Every model is a LangChain `BaseChatModel`. A call may carry, as keyword
arguments, a `seed`, a `constraint` (structured output the backend enforces
where it can), a `call` (who is calling, for the transcript and the
accounting) and `top_logprobs` (how many of the most likely tokens to report
at each generated position). Backends ignore what they cannot use; wrappers
pass all of them on.

Log-probabilities come back in the answer message's
`response_metadata["token_logprobs"]`, one entry per generated token, in one
shape for every backend (see `TokenLogprob`); a backend that cannot give them
leaves the key out, and the caller falls back to the answer text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage

# Keyword arguments that only the sandbox's own layers understand; a foreign
# LangChain model must not see them.
SANDBOX_KWARGS = ("call", "constraint", "top_logprobs")

# The answer message's metadata key for log-probabilities (a list of `TokenLogprob.to_dict()`).
TOKEN_LOGPROBS = "token_logprobs"


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
        return {
            "prefix": self.prefix,
            "grammar": self.grammar,
            "regex": self.regex,
            "choices": list(self.choices or ()),
        }


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token, its log-probability, and the most likely tokens at its position.

    Attributes:
        token: The token as text.
        logprob: Its natural-log probability.
        top: The `top_logprobs` most likely tokens at this position (text -> log-probability),
            before sampling, so a grammar or a temperature does not change them.
    """

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"token": self.token, "logprob": self.logprob, "top": dict(self.top)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TokenLogprob:
        return cls(str(data["token"]), float(data["logprob"]), {str(k): float(v) for k, v in data["top"].items()})


def openai_token_logprobs(content: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """OpenAI's `choices[0].logprobs.content` (also llama.cpp's) as `TokenLogprob` dicts.

    >>> openai_token_logprobs([{"token": "Yes", "logprob": -0.1,
    ...                         "top_logprobs": [{"token": "Yes", "logprob": -0.1}, {"token": "No", "logprob": -2.4}]}])
    [{'token': 'Yes', 'logprob': -0.1, 'top': {'Yes': -0.1, 'No': -2.4}}]
    """
    entries = []
    for item in content or ():
        top: dict[str, float] = {}
        for alternative in item.get("top_logprobs") or ():
            token = str(alternative["token"])
            # Two byte-level tokens may print alike; keep the likelier (the probabilities are summed later).
            top[token] = max(top.get(token, -math.inf), float(alternative["logprob"]))
        entries.append(TokenLogprob(str(item["token"]), float(item["logprob"]), top).to_dict())
    return entries


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
