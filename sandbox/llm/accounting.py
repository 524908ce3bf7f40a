"""Token and call accounting per role, fed by `RecordingChatModel`."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from sandbox.llm.record import CallRecord


@dataclass
class RoleUsage:
    """Totals for one role."""

    calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    # prompt tokens the backend reused from its own prompt cache instead of computing them (llama.cpp)
    prompt_cached_tokens: int = 0


class TokenLedger:
    """Counts calls, cache hits, errors, tokens and latency per role."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_role: dict[str, RoleUsage] = {}

    def record(self, call: CallRecord) -> None:
        self.add(
            call.role,
            call.cache_hit,
            call.error is not None,
            call.input_tokens,
            call.output_tokens,
            call.latency_s,
            call.prompt_cached_tokens,
        )

    def add(
        self,
        role: str,
        cache_hit: bool,
        error: bool,
        input_tokens: int,
        output_tokens: int,
        latency_s: float,
        prompt_cached_tokens: int = 0,
    ) -> None:
        """Count one call."""
        with self._lock:
            usage = self.by_role.setdefault(role, RoleUsage())
            usage.calls += 1
            usage.cache_hits += cache_hit
            usage.errors += error
            usage.input_tokens += input_tokens
            usage.output_tokens += output_tokens
            usage.latency_s = round(usage.latency_s + latency_s, 6)
            usage.prompt_cached_tokens += prompt_cached_tokens

    @classmethod
    def from_transcript(cls, records: Iterable[dict[str, Any]]) -> TokenLedger:
        """A ledger of a transcript's records (a resumed run's calls from both sessions)."""
        ledger = cls()
        for r in records:
            ledger.add(
                r["role"],
                bool(r["cache_hit"]),
                r.get("error") is not None,
                r["input_tokens"],
                r["output_tokens"],
                r["latency_s"],
                int(r.get("prompt_cached_tokens") or 0),
            )
        return ledger

    def totals(self) -> dict[str, dict[str, float]]:
        """Per-role totals as plain dicts (for summary.json)."""
        with self._lock:
            return {role: asdict(usage) for role, usage in sorted(self.by_role.items())}
