"""The embedded model's machine settings: slots and threads from the cores, the scenario's override, the prefix gate."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from sandbox.errors import ScenarioError
from sandbox.llm import embedded, embedded_tuning
from sandbox.llm.embedded import EmbeddedChatModel, LoadedServer, ServerSettings
from sandbox.llm.embedded_tuning import choose_slots, choose_threads, usable_cores
from sandbox.llm.prefix_gate import PrefixGate, prefix_key
from sandbox.llm.resolve import build_backend
from tests.conftest import small_scenario


@pytest.mark.parametrize(
    ("cores", "slots"), [(1, 1), (2, 1), (4, 1), (6, 1), (7, 1), (8, 2), (11, 2), (12, 3), (16, 4), (128, 4)]
)
def test_slots_from_the_core_count(cores: int, slots: int) -> None:
    assert choose_slots(cores) == slots


def test_threads_are_the_usable_physical_cores() -> None:
    assert choose_threads(2) == 2
    assert choose_threads(16, physical=8) == 8  # hyper-threads share a core's vector units
    assert choose_threads(4, physical=8) == 4  # a CPU set smaller than the machine
    assert choose_threads(1, physical=None) == 1


@pytest.mark.parametrize(("cpu_max", "expected"), [("max 100000\n", None), ("150000 100000\n", 1), ("400000 100000\n", 4)])
def test_a_container_quota_caps_the_usable_cores(tmp_path: Path, cpu_max: str, expected: int | None) -> None:
    quota = tmp_path / "cpu.max"
    quota.write_text(cpu_max)
    affinity = usable_cores(tmp_path / "absent")
    assert usable_cores(quota) == (affinity if expected is None else min(expected, affinity))


def test_the_model_chooses_from_the_cores_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "physical_cores", lambda: None)
    monkeypatch.setattr(embedded, "usable_cores", lambda: 16)
    chosen = EmbeddedChatModel(model_path="/models/m.gguf").settings()
    assert (chosen.slots, chosen.threads, chosen.prompt_cache_mib) == (4, 16, 2048)
    monkeypatch.setattr(embedded, "usable_cores", lambda: 2)
    assert EmbeddedChatModel(model_path="/models/m.gguf").settings().slots == 1
    told = EmbeddedChatModel(model_path="/models/m.gguf", slots=3, threads=5).settings()
    assert (told.slots, told.threads) == (3, 5)


def test_the_scenario_block_reaches_the_backend() -> None:
    scenario = small_scenario(embedded={"slots": 2, "threads": 3, "prompt_cache_mib": 0})
    model = build_backend("embedded:/models/m.gguf", {"embedded": scenario.embedded.model_dump()})
    assert isinstance(model, EmbeddedChatModel)
    assert (model.slots, model.threads, model.prompt_cache_mib, model.model_path) == (2, 3, 0, "/models/m.gguf")
    assert small_scenario().embedded.slots is None  # chosen from the machine


@pytest.mark.parametrize(
    ("block", "message"),
    [({"slots": 0}, "embedded.slots"), ({"slot": 2}, "embedded.slot"), ({"prompt_cache_mib": -1}, "embedded.prompt_cache_mib")],
)
def test_a_bad_embedded_block_names_its_field(block: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        small_scenario(embedded=block)


def test_prefix_key_is_everything_but_the_last_message() -> None:
    system = {"role": "system", "content": "Be fair."}
    a = prefix_key([system, {"role": "user", "content": "Split 10."}])
    assert a == prefix_key([system, {"role": "user", "content": "Split 99."}])
    assert a != prefix_key([{"role": "system", "content": "Be selfish."}, {"role": "user", "content": "Split 10."}])
    assert prefix_key([{"role": "user", "content": "alone"}]) is None


async def test_calls_sharing_a_new_prefix_wait_for_the_first() -> None:
    gate, log = PrefixGate(), []

    async def call(name: str, key: str, fail: bool = False) -> None:
        async with gate.hold(key):
            log.append(f"start {name}")
            await asyncio.sleep(0.05)
            log.append(f"end {name}")
            if fail:
                raise RuntimeError("the backend failed")

    await asyncio.gather(call("a1", "A"), call("a2", "A"), call("b1", "B"), call("a3", "A"))
    assert log.index("end a1") < log.index("start a2") and log.index("end a1") < log.index("start a3")
    assert log.index("start b1") < log.index("end a1")  # another prefix does not wait
    assert gate.computed("A") and gate.computed("B")
    log.clear()
    await asyncio.gather(call("a4", "A"), call("a5", "A"))  # computed: both run at once
    assert log[:2] == ["start a4", "start a5"]

    log.clear()
    results = await asyncio.gather(call("c1", "C", fail=True), call("c2", "C"), return_exceptions=True)
    assert isinstance(results[0], RuntimeError) and results[1] is None
    assert log.index("end c1") < log.index("start c2") and gate.computed("C")  # c2 finished, so C is computed


class _FakeServer:
    """Stands in for xllamacpp's server: answers after a delay and logs when each call starts and ends."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def handle_chat_completions(self, request: dict[str, Any]) -> dict[str, Any]:
        name = request["messages"][-1]["content"]
        self.log.append(f"start {name}")
        time.sleep(0.05)
        self.log.append(f"end {name}")
        usage = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11, "prompt_tokens_details": {"cached_tokens": 4}}
        return {"choices": [{"message": {"content": "yes"}, "finish_reason": "stop"}], "usage": usage}


@pytest.mark.parametrize("slots", [1, 3])
async def test_the_backend_gates_prefixes_only_with_several_slots(monkeypatch: pytest.MonkeyPatch, slots: int) -> None:
    from concurrent.futures import ThreadPoolExecutor

    fake = _FakeServer()
    settings = ServerSettings("/models/m.gguf", slots, 2048, 2, 2048)
    loaded = LoadedServer(fake, ThreadPoolExecutor(slots), PrefixGate(), settings)
    monkeypatch.setattr(embedded, "load_server", lambda _: loaded)
    model = EmbeddedChatModel(model_path="/models/m.gguf", slots=slots, threads=2)
    calls = [[SystemMessage(norm), HumanMessage(name)] for name, norm in [("a1", "A"), ("a2", "A"), ("a3", "A"), ("b1", "B")]]
    answers = await asyncio.gather(*(model.ainvoke(messages) for messages in calls))
    loaded.pool.shutdown()
    assert [a.content for a in answers] == ["yes"] * 4
    assert answers[0].usage_metadata["input_token_details"]["cache_read"] == 4  # reused tokens reach the record
    log = fake.log
    if slots == 1:  # one worker: arrival order, one call at a time, nothing held back
        assert log == [f"{e} {n}" for n in ("a1", "a2", "a3", "b1") for e in ("start", "end")]
    else:  # b1 runs beside a1; a2 and a3 wait until a1 has computed A
        assert log.index("start b1") < log.index("end a1") < min(log.index("start a2"), log.index("start a3"))
    assert loaded.gate.computed(prefix_key([{"role": "system", "content": "A"}, {}])) == (slots > 1)
