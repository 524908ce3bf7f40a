"""Single flight per prompt prefix: calls that share a prefix nobody has computed yet wait for the first.

Users who share a norm share a system prompt and few-shot block. When several
of their calls reach a server with several free slots at once, each slot
would compute that prefix for itself. The gate lets the first call with a new
prefix run and holds the others until it has finished; by then the prefix
is in a slot and in llama.cpp's prompt cache, and they reuse it. Once a prefix
has been computed, its calls pass straight through.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any


def prefix_key(messages: Sequence[dict[str, Any]]) -> str | None:
    """The key of what a call shares with its siblings: every message but the last, or None for one message."""
    if len(messages) < 2:
        return None
    return hashlib.sha1(json.dumps(list(messages[:-1]), sort_keys=True).encode()).hexdigest()


class PrefixGate:
    """Lets one call per new prefix run at a time; the rest of that prefix's calls wait for it."""

    def __init__(self) -> None:
        self._computed: set[str] = set()
        self._pending: dict[tuple[int, str], asyncio.Event] = {}  # per event loop: a notebook's and the CLI's differ

    def computed(self, key: str) -> bool:
        """Whether a call with this prefix has finished."""
        return key in self._computed

    @asynccontextmanager
    async def hold(self, key: str | None) -> AsyncIterator[None]:
        """Wrap one call: run it now, or after the first call with the same new prefix finished.

        If that first call fails, the ones waiting for it go on as they
        would have without the gate.
        """
        if key is None or key in self._computed:
            yield
            return
        slot = (id(asyncio.get_running_loop()), key)
        first = self._pending.get(slot)
        if first is not None:
            await first.wait()
            yield
            self._computed.add(key)  # it may have been the first to succeed
            return
        event = self._pending[slot] = asyncio.Event()
        try:
            yield
            self._computed.add(key)
        finally:
            del self._pending[slot]
            event.set()
