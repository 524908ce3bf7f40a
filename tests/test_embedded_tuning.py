"""The embedded model's machine settings: slots and threads from the cores, the scenario's override, call order."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from sandbox.base.errors import ScenarioError
from sandbox.llm import embedded, embedded_tuning
from sandbox.llm.embedded import EmbeddedChatModel, LoadedServer
from sandbox.llm.embedded_tuning import EmbeddedSettings, ServerSettings, choose_slots, choose_threads, usable_cores
from sandbox.llm.resolve import BackendOptions, ModelStack, build_backend
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


@pytest.mark.parametrize(
    ("cpu_max", "expected"), [("max 100000\n", None), ("150000 100000\n", 1), ("400000 100000\n", 4)]
)
def test_a_container_quota_caps_the_usable_cores(tmp_path: Path, cpu_max: str, expected: int | None) -> None:
    quota = tmp_path / "cpu.max"
    quota.write_text(cpu_max)
    affinity = usable_cores(tmp_path / "absent")
    assert usable_cores(quota) == (affinity if expected is None else min(expected, affinity))


def test_the_model_chooses_from_the_cores_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded_tuning, "machine", lambda: (16, None))
    chosen = EmbeddedSettings().resolve("/models/m.gguf")
    assert (chosen.slots, chosen.threads, chosen.prompt_cache_mib, chosen.path) == (4, 16, 2048, "/models/m.gguf")
    monkeypatch.setattr(embedded_tuning, "machine", lambda: (2, 2))
    assert EmbeddedSettings().resolve("/m.gguf").slots == 1
    told = EmbeddedSettings(slots=3, threads=5).resolve("/m.gguf")
    assert (told.slots, told.threads) == (3, 5)
    assert told.machine() == {
        "slots": 3,
        "threads": 5,
        "context_per_slot": 2048,
        "prompt_cache_mib": 2048,
        "usable_cores": 2,
    }


def test_the_scenario_block_reaches_the_backend() -> None:
    scenario = small_scenario(embedded={"slots": 2, "threads": 3, "prompt_cache_mib": 0})
    model = build_backend("embedded:/models/m.gguf", BackendOptions(embedded=scenario.embedded))
    assert isinstance(model, EmbeddedChatModel) and model.model_path == "/models/m.gguf"
    assert model.settings == EmbeddedSettings(slots=2, threads=3, prompt_cache_mib=0)
    assert small_scenario().embedded == EmbeddedSettings()  # slots and threads left to the machine


def test_the_stack_reports_its_bare_backends() -> None:
    stack = ModelStack(cache=None, sinks=[], concurrency=1, options=BackendOptions(embedded=EmbeddedSettings(slots=2)))
    stack.for_role("user", "embedded:/models/m.gguf", {})
    stack.for_role("assistant", "embedded:/models/m.gguf", {})  # the same spec: one backend, shared
    (backend,) = stack.backends()
    assert isinstance(backend, EmbeddedChatModel) and backend.settings.slots == 2


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"slots": 0}, "embedded.slots"),
        ({"slot": 2}, "embedded.slot"),
        ({"prompt_cache_mib": -1}, "embedded.prompt_cache_mib"),
    ],
)
def test_a_bad_embedded_block_names_its_field(block: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        small_scenario(embedded=block)


class _FakeServer:
    """Stands in for xllamacpp's server: answers after a delay and logs when each call starts and ends."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def handle_chat_completions(self, request: dict[str, Any]) -> dict[str, Any]:
        name = request["messages"][-1]["content"]
        self.log.append(f"start {name}")
        time.sleep(0.05)
        self.log.append(f"end {name}")
        usage = {
            "prompt_tokens": 10,
            "completion_tokens": 1,
            "total_tokens": 11,
            "prompt_tokens_details": {"cached_tokens": 4},
        }
        return {"choices": [{"message": {"content": "yes"}, "finish_reason": "stop"}], "usage": usage}


@pytest.mark.parametrize("slots", [1, 3])
async def test_calls_reach_the_server_in_the_order_made(monkeypatch: pytest.MonkeyPatch, slots: int) -> None:
    """While the server loads, calls queue in order; one slot then runs them one at a time in that order."""
    from concurrent.futures import ThreadPoolExecutor

    fake = _FakeServer()
    settings = ServerSettings("/models/m.gguf", slots, 2048, 2, 2048)
    loaded = LoadedServer(fake, ThreadPoolExecutor(slots), settings)
    monkeypatch.setattr(embedded, "_SERVERS", {})
    monkeypatch.setattr(embedded, "_RESOLVED", {})

    def slow_load(settings: ServerSettings) -> LoadedServer:
        time.sleep(0.05)  # calls keep arriving while the server loads
        return embedded._SERVERS.setdefault(settings, loaded)

    monkeypatch.setattr(embedded, "load_server", slow_load)
    model = EmbeddedChatModel(model_path="/models/m.gguf", settings=EmbeddedSettings(slots=slots, threads=2))
    names = [f"call-{i}" for i in range(6)]
    answers = await asyncio.gather(*(model.ainvoke([SystemMessage("Be fair."), HumanMessage(n)]) for n in names))
    loaded.pool.shutdown()
    assert [a.content for a in answers] == ["yes"] * 6
    assert answers[0].usage_metadata["input_token_details"]["cache_read"] == 4  # reused tokens reach the record
    starts = [entry.split()[1] for entry in fake.log if entry.startswith("start")]
    if slots == 1:
        assert fake.log == [f"{e} {n}" for n in names for e in ("start", "end")]
    else:  # workers take calls in the order made, several at once
        assert starts[:slots] == names[:slots] and fake.log.index(f"start {names[1]}") < fake.log.index(
            f"end {names[0]}"
        )
