"""Offline play: every answer from the response cache, no model called (`sandbox replay`).

While `offline()` is in force, every model stack built (`sandbox.llm.resolve.ModelStack`) puts `OfflineChatModel`
under its cache: a call the cache holds is answered as before; one it does not hold raises `NotRecordedError`, which
names the call, and never reaches a model (nor a retry, a budget or a concurrency limit). The backends are still
built from their specs, since a cache key holds the model's identity, but none loads its weights or opens a
connection until its first call, which never comes.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from langchain_core.outputs import ChatResult

from sandbox.llm.chat_backend import AsyncRun, CallKwargs, Messages, Stop
from sandbox.llm.contracts import CallInfo
from sandbox.llm.wrapper import ChatModelWrapper

__all__ = ["NotRecordedError", "OfflineChatModel", "is_offline", "offline"]

_OFFLINE: contextvars.ContextVar[bool] = contextvars.ContextVar("sandbox_offline", default=False)


class NotRecordedError(RuntimeError):
    """A call that the recording (the run's response cache) does not hold, asked while offline."""


@contextmanager
def offline() -> Iterator[None]:
    """While the block runs, model stacks built in its context answer from their cache only: its own thread and
    tasks, and the threads that `sandbox.base.sync.run_sync` starts with a copy of it; another run in another
    thread of the process is not concerned."""
    token = _OFFLINE.set(True)
    try:
        yield
    finally:
        _OFFLINE.reset(token)


def is_offline() -> bool:
    """Whether `offline()` is in force in this context."""
    return _OFFLINE.get()


class OfflineChatModel(ChatModelWrapper):
    """Refuses every call that reaches it (`NotRecordedError`): it sits under the cache, so only misses do."""

    async def _achat(self, messages: Messages, stop: Stop, run_manager: AsyncRun, kwargs: CallKwargs) -> ChatResult:
        info = kwargs.get("call") or CallInfo()
        where = ", ".join(
            f"{name} {value}"
            for name, value in (
                ("run", info.run),
                ("step", info.epoch),
                ("episode", info.episode),
                ("agent", info.agent),
                ("asking", info.step),
            )
            if value not in (None, "")
        )
        raise NotRecordedError(
            f"offline: the recording holds no answer to this {info.role} call ({where}); the run did not ask it, so "
            "the replay has diverged from it before this call"
        )
