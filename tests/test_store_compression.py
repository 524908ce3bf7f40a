"""The run's store compresses large checkpoints (`sandbox.engine.store.CompressedSerializer`) and still reads a store
written before, uncompressed."""

from __future__ import annotations

import asyncio
import sqlite3
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import ormsgpack
import pytest
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


def test_a_population_store_encodes_each_large_value_once_and_forks_and_resumes_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`CompressedSerializer(once=True)`, the population's store: with every list or dict of 30 items or more counted
    as large (40 agents: more items than a checkpoint's own dicts hold), each such value (the naming game's agents, its interactions) is encoded once however many checkpoints
    and writes hold it, the last state reads back as the run left it, and a fork at every generation and a longer
    fork play the same tables as runs that encoded every value at every checkpoint. A scripted model: plumbing."""
    import sandbox
    from sandbox.engine import store
    from sandbox.population.run import run_population
    from tests.test_fork import _tables_equal
    from tests.test_population_naming import Copier, naming

    def run(generations: int, out: Path) -> Path:
        scenario = naming(agents=40, generations=generations, stop_at_consensus=False)
        return run_population(scenario, out, models={"user": Copier().model()})

    tables = ("population.csv", "generations.csv", "interactions.csv")
    plain, longer_plain = run(3, tmp_path / "plain"), run(5, tmp_path / "plain5")

    monkeypatch.setattr(store, "LARGE", 30)
    encoded: Counter[int] = Counter()
    kept: list[Any] = []  # the values encoded, alive to the end: their ids stay theirs
    encode = store._msgpack_enc

    def counting(value: Any) -> bytes:
        if isinstance(value, list | dict) and len(value) >= 30:
            encoded[id(value)] += 1
            kept.append(value)
        return encode(value)

    monkeypatch.setattr(store, "_msgpack_enc", counting)
    parent = run(3, tmp_path / "p")
    assert len(encoded) >= 2 * 3 and set(encoded.values()) == {1}, encoded  # agents and interactions a generation
    with sqlite3.connect(parent / STORE) as db:  # the checkpoints hold every large value as the extension, once
        checkpoints = [
            ormsgpack.unpackb(data, ext_hook=lambda code, _: f"<{code}>", option=ormsgpack.OPT_NON_STR_KEYS)
            for (data,) in db.execute("SELECT checkpoint FROM checkpoints")
        ]
    assert all(_largest(c) < 30 for c in checkpoints) and all(c["channel_values"] for c in checkpoints)
    assert all(c["channel_values"].get("agents", {"agents": "<64>"})["agents"] == "<64>" for c in checkpoints)
    _tables_equal(plain, parent, tables)
    state, before = last_state(parent, "population"), last_state(plain, "population")
    assert state is not None and before is not None and state["agents"] == before["agents"]
    assert len(state["agents"]["agents"]) == 40 and state["generation"] == 3
    for at in (0, 1, 3):
        fork = sandbox.fork(parent, at=at, out=tmp_path / f"f{at}", models={"user": Copier().model()})
        _tables_equal(parent, fork.path, tables)
    longer = sandbox.fork(
        parent, at=3, changes={"population.generations": 5}, out=tmp_path / "longer", models={"user": Copier().model()}
    )
    _tables_equal(longer_plain, longer.path, tables)


def _largest(value: Any) -> int:
    """The most items of a list or dict in `value` (itself or nested)."""
    if isinstance(value, dict):
        return max([len(value), *map(_largest, value.values())])
    if isinstance(value, list):
        return max([len(value), *map(_largest, value)])
    return 0
