"""The run's store compresses large checkpoints (`sandbox.engine.store.CompressedSerializer`) and still reads a store
written before, uncompressed."""

from __future__ import annotations

import asyncio
import sqlite3
import zlib
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from sandbox.core.run_dir import STORE
from sandbox.engine.store import last_state, open_store


class State(TypedDict):
    agents: list[dict[str, Any]]


class _Zlib(JsonPlusSerializer):
    """How the store compressed before it took Zstandard: zlib at level 1, tagged `+zlib`."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        kind, data = super().dumps_typed(obj)
        return (kind + "+zlib", zlib.compress(data, 1)) if len(data) >= 64 * 1024 else (kind, data)


def _play(folder: Path, plain: bool, serde: Any = None) -> None:
    agents = [{"name": f"agent{i}", "strategy": "Always cooperate with the other agent."} for i in range(20_000)]

    async def main() -> None:
        builder = StateGraph(State)
        builder.add_node("step", lambda state: {"agents": state["agents"][::-1]})
        builder.add_edge(START, "step")
        builder.add_edge("step", END)
        if plain:  # as the store was written before it compressed
            async with AsyncSqliteSaver.from_conn_string(str(folder / STORE)) as saver:
                if serde is not None:
                    saver.serde = serde
                await builder.compile(checkpointer=saver).ainvoke(
                    {"agents": agents}, {"configurable": {"thread_id": "t"}}
                )
        else:
            async with open_store(folder) as saver:
                await builder.compile(checkpointer=saver).ainvoke(
                    {"agents": agents}, {"configurable": {"thread_id": "t"}}
                )

    asyncio.run(main())


def test_a_large_state_is_stored_compressed_and_read_back_as_written(tmp_path: Path) -> None:
    _play(tmp_path, plain=False)
    with sqlite3.connect(tmp_path / STORE) as db:
        kinds = {kind for (kind,) in db.execute("SELECT type FROM checkpoints")}
        size = db.execute("SELECT max(length(checkpoint)) FROM checkpoints").fetchone()[0]
    assert kinds == {"msgpack+zstd"} and size < 100_000  # 20,000 agents: about 1.3 MB as msgpack
    state = last_state(tmp_path, "t")
    assert state is not None and state["agents"][0] == {
        "name": "agent19999",
        "strategy": "Always cooperate with the other agent.",
    }


def test_a_store_written_uncompressed_reads_as_before(tmp_path: Path) -> None:
    _play(tmp_path, plain=True)
    with sqlite3.connect(tmp_path / STORE) as db:
        assert {kind for (kind,) in db.execute("SELECT type FROM checkpoints")} == {"msgpack"}
    state = last_state(tmp_path, "t")
    assert state is not None and len(state["agents"]) == 20_000 and state["agents"][-1]["name"] == "agent0"

    async def read() -> Any:
        async with open_store(tmp_path) as saver:
            return await saver.aget_tuple({"configurable": {"thread_id": "t"}})

    assert asyncio.run(read()).checkpoint["channel_values"]["agents"][0]["name"] == "agent19999"


def test_a_store_compressed_with_zlib_reads_as_before(tmp_path: Path) -> None:
    _play(tmp_path, plain=True, serde=_Zlib())
    with sqlite3.connect(tmp_path / STORE) as db:
        assert {kind for (kind,) in db.execute("SELECT type FROM checkpoints")} == {"msgpack+zlib"}
    state = last_state(tmp_path, "t")
    assert state is not None and len(state["agents"]) == 20_000 and state["agents"][0]["name"] == "agent19999"
