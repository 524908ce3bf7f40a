"""Budgets: caps on a run's (or a sweep's) LLM calls, tokens and money, and the wrapper that keeps to them.

A `Budget` caps calls, tokens (prompt and answer) and US dollars, the last
where a price is configured for the model (`models.<role>.price`, dollars per
million tokens). `BudgetedChatModel` sits under the response cache (a cache
hit costs nothing) and above the retry wrapper (one call is one request and
its retries). Before each call it reserves one call in every ledger it keeps
to; a ledger that has reached a cap refuses with `BudgetExhaustedError`, and
the run stops cleanly: its directory says why and `sandbox resume DIR` with a
higher cap finishes it. Calls already in flight when a token or money cap is
reached still finish, so those two caps can be passed by what those calls
spend; the call cap is exact.

A run's ledger starts from what its transcript says it spent (a resumed run
counts both sessions). A sweep's ledger is a JSON file in the sweep directory,
read and written under a `flock`, shared by every worker that can see it.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

from sandbox.base.errors import SandboxError
from sandbox.base.scenario_model import StrictModel
from sandbox.llm.chat_backend import AsyncRun, CallKwargs, Messages, Stop
from sandbox.llm.wrapper import ChatModelWrapper

__all__ = [
    "Budget",
    "BudgetExhaustedError",
    "BudgetedChatModel",
    "FileLedger",
    "Ledger",
    "Price",
    "Spent",
    "refused",
    "spent_in_transcript",
]


class Budget(StrictModel):
    """Caps on LLM calls, tokens and money; a cap left out does not limit."""

    calls: int | None = Field(None, ge=0, description="Most calls that reach a model (cache hits are free).")
    tokens: int | None = Field(None, ge=0, description="Most prompt plus answer tokens.")
    usd: float | None = Field(None, ge=0, description="Most US dollars, at the prices in models.<role>.price.")

    def limits(self) -> bool:
        return any(v is not None for v in (self.calls, self.tokens, self.usd))

    def with_caps(
        self, *, max_calls: int | None = None, max_tokens: int | None = None, max_cost: float | None = None
    ) -> Budget | None:
        """This budget with the command line's caps (`--max-calls`, `--max-tokens`, `--max-cost`) in place of its
        own; None when none is given.

        >>> Budget(calls=5, usd=1.0).with_caps(max_tokens=900)
        Budget(calls=5, tokens=900, usd=1.0)
        """
        given = {k: v for k, v in (("calls", max_calls), ("tokens", max_tokens), ("usd", max_cost)) if v is not None}
        return self.model_copy(update=given) if given else None


class Price(StrictModel):
    """A model's price in US dollars per million tokens."""

    input: float = Field(..., ge=0, description="Dollars per million prompt tokens.")
    output: float = Field(..., ge=0, description="Dollars per million answer tokens.")

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1e6


class BudgetExhaustedError(SandboxError):
    """A budget's cap was reached; the run stopped cleanly and resumes with a higher cap."""

    exit_code = 3


@dataclass
class Spent:
    """What a ledger has spent."""

    calls: int = 0
    tokens: int = 0
    usd: float = 0.0

    def over(self, budget: Budget) -> str | None:
        """The cap this spending has reached, in words, or None."""
        for name, value, cap in (
            ("calls", self.calls, budget.calls),
            ("tokens", self.tokens, budget.tokens),
            ("usd", self.usd, budget.usd),
        ):
            if cap is not None and value >= cap:
                return f"{name} cap {cap:g} reached ({value:g} spent)"
        return None


class Ledger:
    """A run's spending, in memory."""

    def __init__(self, budget: Budget, spent: Spent | None = None, name: str = "run") -> None:
        self.budget, self.spent, self.name = budget, spent or Spent(), name
        self._lock = threading.Lock()

    def reserve(self) -> None:
        """Count one call about to be made; `BudgetExhaustedError` when a cap is reached."""
        with self._lock:
            reached = self.spent.over(self.budget)
            if reached:
                raise BudgetExhaustedError(f"the {self.name} budget's {reached}")
            self.spent.calls += 1

    def settle(self, tokens: int, usd: float) -> None:
        """Add what a finished call spent."""
        with self._lock:
            self.spent.tokens += tokens
            self.spent.usd += usd


class FileLedger(Ledger):
    """A sweep's spending, in a JSON file shared by processes (each change under an exclusive `flock`)."""

    def __init__(self, budget: Budget, path: Path | str, name: str = "sweep") -> None:
        super().__init__(budget, name=name)
        self.path = Path(path)

    def _change(self, change: Any) -> Spent:
        """Read, change and write the ledger under an exclusive lock on a sidecar file; the ledger itself is
        replaced whole (a temporary file, then a rename), so a killed writer leaves the last whole ledger."""
        from sandbox.base.files import read_json

        with open(self.path.with_name(self.path.name + ".lock"), "a", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            spent = Spent(**read_json(self.path)) if self.path.is_file() else Spent()
            change(spent)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(asdict(spent)), encoding="utf-8")
            tmp.replace(self.path)
        self.spent = spent
        return spent

    def reserve(self) -> None:
        def take(spent: Spent) -> None:
            reached = spent.over(self.budget)
            if reached:
                raise BudgetExhaustedError(f"the {self.name} budget's {reached}")
            spent.calls += 1

        self._change(take)

    def settle(self, tokens: int, usd: float) -> None:
        def add(spent: Spent) -> None:
            spent.tokens += tokens
            spent.usd += usd

        self._change(add)


def spent_in_transcript(records: Iterable[dict[str, Any]], prices: dict[str, Price]) -> Spent:
    """What a transcript's calls spent: every record that reached a model (not a cache hit, nor a call a budget
    refused), priced by its role (`prices`: role -> `Price`)."""
    spent = Spent()
    for record in records:
        if record.get("cache_hit") or refused(record):
            continue
        tokens_in, tokens_out = int(record.get("input_tokens") or 0), int(record.get("output_tokens") or 0)
        spent.calls += 1
        spent.tokens += tokens_in + tokens_out
        price = prices.get(str(record.get("role")))
        spent.usd += price.cost(tokens_in, tokens_out) if price else 0.0
    return spent


def refused(record: dict[str, Any]) -> bool:
    """Whether a transcript record is a call a budget refused (it reached no model)."""
    return str(record.get("error") or "").startswith(BudgetExhaustedError.__name__)


class BudgetedChatModel(ChatModelWrapper):
    """Reserves each call in its ledgers before making it, and settles its tokens and cost after (priced by the
    calling role, as a resumed run's ledger prices its transcript)."""

    ledgers: Sequence[Any] = ()
    prices: dict[str, Price] = {}  # noqa: RUF012 (a pydantic field: each model gets its own copy)

    async def _achat(self, messages: Messages, stop: Stop, run_manager: AsyncRun, kwargs: CallKwargs) -> ChatResult:
        for ledger in self.ledgers:
            ledger.reserve()
        call = kwargs.get("call")
        price = self.prices.get(getattr(call, "role", "") or "")
        tokens_in = tokens_out = 0
        try:
            result = await self.inner._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
            message = result.generations[0].message
            usage = message.usage_metadata if isinstance(message, AIMessage) else None
            if usage:
                tokens_in, tokens_out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
            return result
        finally:
            cost = price.cost(tokens_in, tokens_out) if price else 0.0
            for ledger in self.ledgers:
                ledger.settle(tokens_in + tokens_out, cost)
