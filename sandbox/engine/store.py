"""The run's store (LangGraph's SQLite checkpointer in `store.sqlite`) and the one resume path of every graph.

Every graph of the sandbox is compiled with this checkpointer, so each step (a society's epoch tasks, a
population's pair, play, score, revise and record) is saved when it ends, and `drive` plays a thread from its last
checkpoint: a new thread from its start, a killed one from where it stopped, a finished one not at all.

A checkpoint or a step's write of 64 KB or more is stored compressed (`CompressedSerializer`, Zstandard at level 1,
tagged `msgpack+zstd`, as LangGraph's own encrypting serializer tags `+aes`): a million agents' state is 90 MB of
msgpack and 1 MB compressed, in 0.04 s (zlib at level 1, which stores written before used, took 0.14 s for 3 MB).
Every reader of a store here (`open_store`, `last_state`) reads all three kinds, so a store written before reads as
it did.

A population's store (`sandbox.engine.pruned_store.GenerationStore`) also encodes each large value of the state (a
list or dict of `LARGE` items or more: a population's agents, a generation's rows) once per object, not once per
checkpoint: the same agents stand in the checkpoint after every step of a generation and in the writes of the step
that made them, and a million agents' list took 0.06 s to encode, 13 times a generation. Such a value is stored as a
msgpack extension (`SHARED`) holding its own Zstandard-compressed msgpack; every reader here reads it. This holds
because a population's steps never change a value of the state in place (`GenerationGame`'s contract).

The store runs in WAL mode: what is written goes to `store.sqlite-wal` first. Every connection here folds that log
into `store.sqlite` (a TRUNCATE checkpoint) and closes when its block ends, so between runs and stages the file alone
holds everything, and a copy of `store.sqlite` without its -wal file loses nothing.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import zlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from contextlib import asynccontextmanager, closing, contextmanager
from pathlib import Path
from typing import Any, cast

import ormsgpack
import zstandard
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer, _msgpack_enc
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from sandbox.base.collector import during_run
from sandbox.core.run_dir import STORE

__all__ = [
    "CHECKPOINT_WAL",
    "LARGE",
    "SHARED",
    "CompressedSerializer",
    "drive",
    "interrupts_as_errors",
    "last_state",
    "open_store",
    "store_tables",
]

# Copies the write-ahead log into the database file and empties it (SQLite deletes it when its last connection closes).
CHECKPOINT_WAL = "PRAGMA wal_checkpoint(TRUNCATE)"


LARGE = (
    10_000  # a list or dict of this many items or more is encoded once per object (`CompressedSerializer(once=True)`)
)
SHARED = 64  # the msgpack extension code of such a value (LangGraph's own are 0 to 7)
KEPT = 8  # the large values whose encodings are kept, the latest


class CompressedSerializer(JsonPlusSerializer):
    """LangGraph's serializer, whose payloads of `least` bytes or more are compressed with Zstandard (level 1) and
    tagged `+zstd`; it reads those, plain ones and the `+zlib` ones that stores written before hold. With `once`, each
    large value (`LARGE` items or more) met among the dicts of an object's first four levels (a checkpoint's channel
    values, the run's input among them, and their fields) is encoded once per object, as the extension `SHARED`: its writer's steps must never
    change such a value in place.

    >>> serde = CompressedSerializer()
    >>> state = {"agents": ["Always cooperate."] * 100_000}
    >>> kind, data = serde.dumps_typed(state)
    >>> kind, len(data) < 10_000, serde.loads_typed((kind, data)) == state
    ('msgpack+zstd', True, True)
    >>> serde.loads_typed(("msgpack+zlib", zlib.compress(serde.dumps_typed({"generation": 3})[1]))) == {"generation": 3}
    True
    >>> serde.dumps_typed({"generation": 3})[0]
    'msgpack'
    >>> once = CompressedSerializer(once=True)
    >>> checkpoint = {"channel_values": {"agents": state["agents"], "played": {"agents": state["agents"]}}}
    >>> kind, data = once.dumps_typed(checkpoint)
    >>> kind, len(data) < 1_000, serde.loads_typed((kind, data)) == checkpoint
    ('msgpack', True, True)
    """

    TAG, OLD_TAG = "+zstd", "+zlib"

    def __init__(self, least: int = 64 * 1024, *, once: bool = False) -> None:
        super().__init__()
        self.least, self.once = least, once
        self._given_hook = self._unpack_ext_hook  # LangGraph's, for its own extensions
        self._unpack_ext_hook = self._ext_hook
        self._encoded: OrderedDict[int, tuple[Any, bytes]] = OrderedDict()  # id -> (the value, kept alive; its bytes)
        self._lock = threading.Lock()

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        kind, data = super().dumps_typed(self._shared(obj, 4) if self.once else obj)
        if len(data) < self.least:
            return kind, data
        return kind + self.TAG, zstandard.compress(data, 1)  # a compressor a call: one is not shared by threads

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        kind, payload = data
        if kind.endswith(self.TAG):
            return super().loads_typed((kind.removesuffix(self.TAG), zstandard.decompress(payload)))
        if kind.endswith(self.OLD_TAG):
            return super().loads_typed((kind.removesuffix(self.OLD_TAG), zlib.decompress(payload)))
        return super().loads_typed(data)

    def _shared(self, value: Any, depth: int) -> Any:
        """`value` with each large value in it (at most `depth` dicts down) as the extension `SHARED`."""
        if isinstance(value, list | dict) and len(value) >= LARGE:
            return ormsgpack.Ext(SHARED, self._encoding(value))
        if isinstance(value, dict) and depth > 0:
            return {key: self._shared(item, depth - 1) for key, item in value.items()}
        return value

    def _encoding(self, value: list[Any] | dict[Any, Any]) -> bytes:
        """`value`'s compressed msgpack, encoded at its first checkpoint and kept (with the value, so that its id is
        not reused) while it is among the `KEPT` latest."""
        with self._lock:
            kept = self._encoded.get(id(value))
            if kept is not None:
                self._encoded.move_to_end(id(value))
                return kept[1]
        data = zstandard.compress(_msgpack_enc(value), 1)
        with self._lock:
            self._encoded[id(value)] = (value, data)
            while len(self._encoded) > KEPT:
                self._encoded.popitem(last=False)
        return data

    def _ext_hook(self, code: int, data: bytes) -> Any:
        if code == SHARED:
            return ormsgpack.unpackb(
                zstandard.decompress(data), ext_hook=self._ext_hook, option=ormsgpack.OPT_NON_STR_KEYS
            )
        return self._given_hook(code, data)


SERDE = CompressedSerializer()


@asynccontextmanager
async def open_store(
    folder: Path | str, kind: type[AsyncSqliteSaver] = AsyncSqliteSaver
) -> AsyncIterator[AsyncSqliteSaver]:
    """The checkpointer of the run in `folder` (of class `kind`: a population's prunes its finished generations and
    encodes each large value once, `sandbox.engine.pruned_store`), open while the context lasts."""
    async with kind.from_conn_string(str(Path(folder) / STORE)) as saver:
        # a store whose writers never change the state in place encodes each large value once (a serializer of its own)
        saver.serde = CompressedSerializer(once=True) if getattr(kind, "encodes_once", False) else SERDE
        # The saver runs in WAL mode; NORMAL syncs at WAL checkpoints instead of every commit, which still survives
        # a killed process (what `sandbox resume` is for), though not a power cut.
        await saver.conn.execute("PRAGMA synchronous=NORMAL")
        yield saver
        await saver.conn.execute(CHECKPOINT_WAL)


@contextmanager
def store_tables(folder: Path | str) -> Iterator[sqlite3.Connection]:
    """The store of the run in `folder`, open to write its result tables (`DataFrame.to_sql`): committed when the
    block ends, its log folded into `store.sqlite`, and closed (`sqlite3.connect`'s own block only commits)."""
    with closing(sqlite3.connect(Path(folder) / STORE)) as conn:
        with conn:
            yield conn
        conn.execute(CHECKPOINT_WAL)


async def drive(
    graph: Any,
    thread: str,
    start: Callable[[], Mapping[str, Any]],
    *,
    context: Any,
    finished: Callable[[Mapping[str, Any]], bool],
    recursion_limit: int,
    final: bool = True,
) -> dict[str, Any] | None:
    """Play thread `thread` of `graph` to its end from its last checkpoint; its final state (`final`), or None (a
    caller that does not read it: a million agents' state takes seconds to decode).

    A thread with no checkpoint starts from `start()` (called only then: a new run's setup); one whose last state
    is not `finished` goes on; a finished one is left as it is.
    """
    config = {"configurable": {"thread_id": thread}, "recursion_limit": recursion_limit}
    snapshot = await graph.aget_state(config)
    with during_run():  # the run's live state is frozen from the collector's full collections
        if not snapshot.values:
            await graph.ainvoke(dict(start()), config, context=context)
        elif not finished(snapshot.values):
            # Not `snapshot.next`: when every task of the interrupted superstep had saved its writes, `next` is
            # empty although the superstep was never committed.
            await graph.ainvoke(None, config, context=context)
    return dict((await graph.aget_state(config)).values) if final else None


def last_state(folder: Path | str, thread: str) -> dict[str, Any] | None:
    """The last checkpointed state of `thread` in the run in `folder` (None: no store, or no checkpoint yet), read
    without running anything (for progress bars and the viewer)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = Path(folder) / STORE
    if not path.is_file():
        return None
    with closing(sqlite3.connect(path)) as conn:
        found = SqliteSaver(conn, serde=SERDE).get_tuple({"configurable": {"thread_id": thread}})
    return dict(found.checkpoint["channel_values"]) if found is not None else None


class _Interrupted(Exception):
    """A KeyboardInterrupt or SystemExit raised inside a task, carried as an ordinary error."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error


async def _guarded(coro: Coroutine[Any, Any, Any]) -> Any:
    try:
        return await coro
    except (KeyboardInterrupt, SystemExit) as error:
        raise _Interrupted(error) from error


@contextmanager
def interrupts_as_errors() -> Iterator[None]:
    """While a graph runs, a KeyboardInterrupt or SystemExit raised inside any task (a model that is stopped in
    the middle of a call) unwinds the graph as an ordinary error, and is raised again, as itself, when the context
    ends.

    asyncio hands such an exception from a task straight to the event loop, which stops at once: LangGraph's tasks
    and the store's connection are then left half-done (the store stays locked for a resume in the same process).
    An interrupt from the keyboard itself (SIGINT) is not concerned: `asyncio.run` turns it into a cancellation,
    which unwinds cleanly.
    """
    loop = asyncio.get_running_loop()
    previous = loop.get_task_factory()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **options: Any) -> asyncio.Task[Any]:
        guarded = _guarded(coro)
        task = previous(loop, guarded, **options) if previous else asyncio.Task(guarded, loop=loop, **options)
        return cast("asyncio.Task[Any]", task)

    loop.set_task_factory(factory)  # typeshed's factory protocol lacks **options
    try:
        yield
    except _Interrupted as interrupted:
        raise interrupted.error from None
    finally:
        loop.set_task_factory(previous)
