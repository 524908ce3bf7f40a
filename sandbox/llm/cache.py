"""An SQLite response cache, keyed by model, messages, sampling parameters and seed.

A hit returns the stored answer without calling the model and marks the
generation with `cache_hit=True`, so the transcript can say so. The answer's
log-probabilities and finish reason are stored with it, so a hit gives the
same graded reward, and the same verdict on a cut-off answer, as the call
that filled it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import orjson
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from sandbox.llm.chat_backend import AsyncRun, CallKwargs, Messages, Stop
from sandbox.llm.contracts import TOKEN_LOGPROBS, Constraint
from sandbox.llm.wrapper import ChatModelWrapper

# Call arguments that change the answer; `call` (who asks) does not.
_KEYED_KWARGS = ("temperature", "top_p", "max_tokens", "seed", "constraint", "top_logprobs")
# The parts of an answer's `response_metadata` that are stored with it.
_KEPT_METADATA = (TOKEN_LOGPROBS, "finish_reason")


_PENDING: dict[Path, dict[str, tuple[str, str, str]]] = {}  # by cache file: answers not yet written (key -> row)
_PENDING_LOCK = threading.Lock()


class ResponseCache:
    """A thread-safe key-value store of answers in one SQLite file.

    An answer stored inside an event loop is written with the others of the loop's pass, in one transaction, when
    the pass ends (a commit a call cost a tenth of a call's CPU); until then every `ResponseCache` of this process
    on the same file reads it from memory, and `close` writes what is left. Before a step's checkpoint is saved its
    answers are written (the checkpoint's write comes back in a later pass). Another process (a Ray actor) sees an
    answer once its pass has ended. Outside a loop an answer is written at once."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with _PENDING_LOCK:
            self._pending = _PENDING.setdefault(self.path.resolve(), {})
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, content TEXT NOT NULL,"
            " usage TEXT NOT NULL, metadata TEXT NOT NULL DEFAULT '{}')"
        )
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
        if "metadata" not in columns:  # a cache written before answers kept their metadata
            self._db.execute("ALTER TABLE responses ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}'")

    def get(self, key: str) -> tuple[str, dict[str, int], dict[str, Any]] | None:
        """(content, usage, metadata) of a stored answer, or None."""
        with _PENDING_LOCK:
            row = self._pending.get(key)
        if row is None:
            with self._lock:
                row = self._db.execute(
                    "SELECT content, usage, metadata FROM responses WHERE key = ?", (key,)
                ).fetchone()
        return None if row is None else (row[0], orjson.loads(row[1]), orjson.loads(row[2]))

    def put(self, key: str, content: str, usage: dict[str, int], metadata: dict[str, Any] | None = None) -> None:
        row = (content, orjson.dumps(usage).decode(), orjson.dumps(metadata or {}).decode())
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with _PENDING_LOCK:
            first = not self._pending
            self._pending[key] = row
        if loop is None:
            self.flush()
        elif first:
            loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write the answers not yet written (this file's, whichever `ResponseCache` stored them), in one
        transaction."""
        with _PENDING_LOCK:
            rows = [(key, *row) for key, row in self._pending.items()]
            self._pending.clear()
        if not rows:
            return
        with self._lock, self._db:  # one transaction (the connection autocommits otherwise)
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO responses (key, content, usage, metadata) VALUES (?, ?, ?, ?)", rows
            )

    def __len__(self) -> int:
        self.flush()
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self.flush()
        with self._lock:
            self._db.close()


def cache_key(model_id: dict[str, Any], messages: list[BaseMessage], stop: list[str] | None, kwargs: dict) -> str:
    """The cache key of one call: a sha256 over everything that shapes the answer.

    At temperature 0 the seed shapes nothing (decoding is greedy), so it is
    left out: the same prompt asked under two seeds is one call. The SCAI
    paper's protocol (temperature 0, one stake per epoch) asks eight users of
    one norm the same question each epoch.
    """
    params = {}
    for name in _KEYED_KWARGS:
        value = kwargs.get(name)
        if name == "top_logprobs" and not value:
            continue  # keys made before log-probabilities existed stay valid
        if name == "seed" and kwargs.get("temperature") == 0:
            continue
        params[name] = value.key() if isinstance(value, Constraint) else value
    payload = {
        "model": model_id,
        "messages": [(message.type, message.content) for message in messages],
        "stop": stop,
        "params": params,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


class CachedChatModel(ChatModelWrapper):
    """Answers from `cache` when the same call was made before; stores new answers.

    A call whose twin is in flight waits for the twin's answer instead of
    asking the model again (a cache hit, as if it had come a moment later);
    if the twin fails (after the retries below), the call fails with it.
    """

    # Not `cache`: that name is BaseChatModel's own (LangChain's global cache switch).
    responses: Any  # ResponseCache; Any keeps pydantic from copying it
    # fields, not private attributes, which pydantic reads through a slow `__getattr__` (every call reads these)
    backend_id: dict[str, Any] | None = Field(default=None, exclude=True, repr=False)
    inflight: dict[tuple[Any, str], asyncio.Future] = Field(
        default_factory=dict, exclude=True, repr=False
    )  # by (loop, key)

    def _key(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict) -> str:
        if self.backend_id is None:
            backend = self.innermost()
            self.backend_id = {"type": backend._llm_type, **backend._identifying_params}
        return cache_key(self.backend_id, messages, stop, kwargs)

    async def _achat(self, messages: Messages, stop: Stop, run_manager: AsyncRun, kwargs: CallKwargs) -> ChatResult:
        key = self._key(messages, stop, kwargs)
        loop = asyncio.get_running_loop()
        while (twin := self.inflight.get((loop, key))) is not None:
            await asyncio.wait([twin])
            failure = None if twin.cancelled() else twin.exception()
            if failure is not None:
                raise failure  # the twin failed after its retries: so does this call
            if self.responses.get(key) is not None:
                break  # else the twin was cancelled: ask, unless another twin already does
        stored = self.responses.get(key)
        if stored is not None:
            content, usage, metadata = stored
            message = AIMessage(content=content, usage_metadata=usage or None, response_metadata=metadata)
            return ChatResult(generations=[ChatGeneration(message=message, generation_info={"cache_hit": True})])
        done: asyncio.Future = loop.create_future()
        self.inflight[(loop, key)] = done
        try:
            result = await self.inner._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
            answer = result.generations[0].message
            usage = dict(answer.usage_metadata or {}) if isinstance(answer, AIMessage) else {}
            kept = {name: answer.response_metadata[name] for name in _KEPT_METADATA if name in answer.response_metadata}
            self.responses.put(key, str(answer.content), usage, kept)
            done.set_result(None)
            return result
        except Exception as error:
            done.set_exception(error)
            done.exception()  # marked retrieved: no warning when no twin waits
            raise
        finally:
            if not done.done():
                done.cancel()  # cancelled or interrupted: a waiting twin asks for itself
            if self.inflight.get((loop, key)) is done:
                del self.inflight[(loop, key)]
