"""Token and call accounting per role, fed by `RecordingChatModel`."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass

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


class TokenLedger:
    """Counts calls, cache hits, errors, tokens and latency per role."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_role: dict[str, RoleUsage] = {}

    def record(self, call: CallRecord) -> None:
        with self._lock:
            usage = self.by_role.setdefault(call.role, RoleUsage())
            usage.calls += 1
            usage.cache_hits += call.cache_hit
            usage.errors += call.error is not None
            usage.input_tokens += call.input_tokens
            usage.output_tokens += call.output_tokens
            usage.latency_s += call.latency_s

    def totals(self) -> dict[str, dict[str, float]]:
        """Per-role totals as plain dicts (for summary.json)."""
        with self._lock:
            return {role: asdict(usage) for role, usage in sorted(self.by_role.items())}

    @property
    def calls(self) -> int:
        with self._lock:
            return sum(usage.calls for usage in self.by_role.values())
