"""The LLM layer's wrappers: cache, retry, concurrency limit, recording, sampling defaults."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableLambda

from sandbox.llm.accounting import TokenLedger
from sandbox.llm.cache import CachedChatModel, ResponseCache
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.llm.errors import TransientLLMError
from sandbox.llm.limit import ConcurrencyLimitedChatModel
from sandbox.llm.resolve import ModelStack, build_backend, check_spec
from sandbox.llm.retry import RetryExhaustedError, RetryingChatModel
from sandbox.llm.scripted import ScriptedChatModel, UnexpectedPromptError, scripted
from sandbox.llm.transcript import (
    TranscriptWriter,
    finalize_transcript,
    read_transcript,
)
from sandbox.llm.wrapper import acall

MESSAGES = [SystemMessage("You are terse."), HumanMessage("Say hello.")]


def echo(messages: list[Any], kwargs: dict[str, Any]) -> str:
    return f"hello seed={kwargs.get('seed')} t={kwargs.get('temperature')}"


class Flaky(ScriptedChatModel):
    """Fails transiently `failures` times, then answers."""

    failures: int = 0
    error: Any = TransientLLMError

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[override]
        if self.failures > 0:
            self.failures -= 1
            raise self.error("injected failure")
        return await super()._agenerate(messages, stop, run_manager, **kwargs)


def test_scripted_model_raises_on_unexpected_prompts() -> None:
    model = scripted([("Say hello", "hello")])
    assert model.invoke(MESSAGES).content == "hello"
    with pytest.raises(UnexpectedPromptError):
        model.invoke([HumanMessage("What is the capital of France?")])


async def test_cache_hits_skip_the_model(tmp_path: Path) -> None:
    inner = scripted([("Say hello", echo)])
    cache = ResponseCache(tmp_path / "cache.sqlite")
    model = CachedChatModel(inner=inner, responses=cache)
    first = await model.ainvoke(MESSAGES, seed=1, temperature=0.5)
    second = await model.ainvoke(MESSAGES, seed=1, temperature=0.5)
    assert first.content == second.content == "hello seed=1 t=0.5"
    assert inner.calls == 1
    # a different seed, temperature, constraint or message is a different key
    await model.ainvoke(MESSAGES, seed=2, temperature=0.5)
    await model.ainvoke(MESSAGES, seed=1, temperature=0.7)
    await model.ainvoke(MESSAGES, seed=1, temperature=0.5, constraint=Constraint(grammar='root ::= "x"'))
    await model.ainvoke([*MESSAGES[:1], HumanMessage("Say hello again.")], seed=1, temperature=0.5)
    assert inner.calls == 5
    # who calls does not change the answer, so it is not part of the key
    await model.ainvoke(MESSAGES, seed=1, temperature=0.5, call=CallInfo(agent="someone-else"))
    assert inner.calls == 5
    cache.close()
    # persisted: a new cache on the same file answers without the model
    reopened = CachedChatModel(inner=scripted([]), responses=ResponseCache(tmp_path / "cache.sqlite"))
    assert (await reopened.ainvoke(MESSAGES, seed=1, temperature=0.5)).content == "hello seed=1 t=0.5"


async def test_at_temperature_0_the_seed_is_no_part_of_the_key_and_twins_in_flight_are_one_call(tmp_path: Path) -> None:
    inner = scripted([("Say hello", "hello")], latency_s=0.05)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    model = CachedChatModel(inner=inner, responses=cache)
    await model.ainvoke(MESSAGES, seed=1, temperature=0.0)
    await model.ainvoke(MESSAGES, seed=2, temperature=0.0)  # greedy: the seed changes nothing
    assert inner.calls == 1
    await model.ainvoke(MESSAGES, seed=2, temperature=0.2)  # sampled: it does
    assert inner.calls == 2
    # the same call made five times at once reaches the model once; the others are cache hits
    results = await asyncio.gather(
        *(model._agenerate(MESSAGES, seed=s, temperature=0.0, max_tokens=7) for s in range(5))
    )
    assert inner.calls == 3 and sum(bool(r.generations[0].generation_info) for r in results) == 4
    # a twin that fails (after its retries) fails its waiting twins too; a later call asks again
    attempts = {"n": 0}

    def fails_first(messages: list[Any], kwargs: dict[str, Any]) -> str:
        attempts["n"] += 1
        if attempts["n"] == 1:
            raise RuntimeError("injected failure")
        return "hello again"

    shared = CachedChatModel(inner=scripted([("Say hello", fails_first)], latency_s=0.05), responses=cache)
    outcomes = await asyncio.gather(
        *(shared._agenerate(MESSAGES, seed=1, temperature=0.0, max_tokens=9) for _ in range(3)), return_exceptions=True
    )
    assert all(isinstance(o, RuntimeError) for o in outcomes) and attempts["n"] == 1
    later = await shared._agenerate(MESSAGES, seed=1, temperature=0.0, max_tokens=9)
    assert later.generations[0].message.content == "hello again" and attempts["n"] == 2
    # a twin cancelled mid-call leaves the waiting one to ask for itself
    slow = CachedChatModel(inner=scripted([("Say hello", "hi")], latency_s=0.2), responses=cache)
    first = asyncio.ensure_future(slow._agenerate(MESSAGES, seed=1, temperature=0.0, max_tokens=11))
    await asyncio.sleep(0.05)
    second = asyncio.ensure_future(slow._agenerate(MESSAGES, seed=1, temperature=0.0, max_tokens=11))
    await asyncio.sleep(0.05)
    first.cancel()
    answer = (await second).generations[0]
    assert answer.message.content == "hi" and not answer.generation_info and slow.inner.calls == 1  # its own call
    cache.close()


async def test_retry_recovers_from_transient_failures() -> None:
    flaky = Flaky(rules=[("Say hello", "hello")], failures=3)
    model = RetryingChatModel(inner=flaky, max_attempts=5, base_delay_s=0.001)
    assert (await model.ainvoke(MESSAGES)).content == "hello"
    assert model.retries == 3


async def test_retry_gives_up_after_the_cap() -> None:
    flaky = Flaky(rules=[("Say hello", "hello")], failures=10)
    model = RetryingChatModel(inner=flaky, max_attempts=3, base_delay_s=0.001)
    with pytest.raises(RetryExhaustedError, match="gave up after 3 attempts"):
        await model.ainvoke(MESSAGES)
    assert flaky.failures == 7


async def test_retry_does_not_retry_permanent_errors() -> None:
    flaky = Flaky(rules=[("Say hello", "hello")], failures=1, error=ValueError)
    model = RetryingChatModel(inner=flaky, max_attempts=5, base_delay_s=0.001)
    with pytest.raises(ValueError, match="injected"):
        await model.ainvoke(MESSAGES)
    assert model.retries == 0


async def test_retry_times_out_slow_attempts() -> None:
    slow = scripted([("Say hello", "hello")], latency_s=1.0)
    model = RetryingChatModel(inner=slow, max_attempts=2, base_delay_s=0.001, timeout_s=0.05)
    with pytest.raises(RetryExhaustedError, match="TimeoutError"):
        await model.ainvoke(MESSAGES)


def test_backoff_is_capped_and_grows() -> None:
    model = RetryingChatModel(inner=scripted([]), base_delay_s=1.0, max_delay_s=4.0)
    assert all(0 <= model.backoff(0) <= 1.0 for _ in range(50))
    assert all(0 <= model.backoff(10) <= 4.0 for _ in range(50))
    assert max(model.backoff(2) for _ in range(200)) > 1.0


async def test_concurrency_limit_holds() -> None:
    inner = scripted([("Say hello", "hello")], latency_s=0.02)
    model = ConcurrencyLimitedChatModel(inner=inner, max_concurrency=3)
    await asyncio.gather(*(model.ainvoke(MESSAGES) for _ in range(20)))
    assert model.peak_in_flight == 3
    assert model.in_flight == 0


async def test_stack_records_every_call(tmp_path: Path) -> None:
    ledger = TokenLedger()
    writer = TranscriptWriter(tmp_path / "t.jsonl")
    inner = scripted([("Say hello", echo)])
    stack = ModelStack(cache=ResponseCache(tmp_path / "c.sqlite"), sinks=[ledger, writer], concurrency=2)
    model = stack.for_role("user", "embedded", {"temperature": 0.3, "top_p": 1.0, "max_tokens": 10}, given=inner)
    info = CallInfo(role="user", agent="user-1", run=0, epoch=0, episode="e1", step="propose")
    first = await model.ainvoke(MESSAGES, seed=42, call=info)
    await model.ainvoke(MESSAGES, seed=42, call=info)
    assert first.content == "hello seed=42 t=0.3"  # the role's sampling reached the backend
    writer.close()
    records = read_transcript(tmp_path / "t.jsonl")
    assert len(records) == 2
    record = records[0]
    assert record["role"] == "user" and record["agent"] == "user-1" and record["seed"] == 42
    assert record["messages"][1] == {"role": "user", "content": "Say hello."}
    assert record["answer"] == "hello seed=42 t=0.3"
    assert record["input_tokens"] > 0 and record["output_tokens"] > 0 and record["latency_s"] >= 0
    assert [r["cache_hit"] for r in records] == [False, True]
    usage = ledger.totals()["user"]
    assert usage["calls"] == 2 and usage["cache_hits"] == 1
    # finalize keeps one record per call id (a resumed run redoes calls)
    assert len(finalize_transcript(tmp_path / "t.jsonl")) == 1


class Listener(AsyncCallbackHandler):
    """Counts the chat-model starts LangChain reports to it."""

    def __init__(self) -> None:
        self.starts = 0

    async def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self.starts += 1


async def test_acall_skips_langchain_callbacks_only_when_nobody_listens(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "t.jsonl")
    stack = ModelStack(cache=None, sinks=[writer], concurrency=2)
    model = stack.for_role("user", "embedded", {}, given=scripted([("Say hello", echo)]))
    with patch.object(type(model), "ainvoke", side_effect=AssertionError("ainvoke with nobody listening")):
        quiet = await acall(model, MESSAGES, seed=1, call=CallInfo(agent="a"))
    own, inherited = Listener(), Listener()
    heard = await acall(model.model_copy(update={"callbacks": [own]}), MESSAGES, seed=1, call=CallInfo(agent="b"))

    # a graph node's calls inherit the graph's callbacks through the runnable config's context
    async def node(_: Any) -> Any:
        return await acall(model, MESSAGES, seed=1, call=CallInfo(agent="c"))

    in_graph = await RunnableLambda(node).ainvoke(None, {"callbacks": [inherited]})
    assert quiet.content == heard.content == in_graph.content == "hello seed=1 t=0.2"
    assert (own.starts, inherited.starts) == (1, 1)
    writer.close()
    assert [r["agent"] for r in read_transcript(tmp_path / "t.jsonl")] == ["a", "b", "c"]  # recorded either way


async def test_failed_calls_are_recorded(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "t.jsonl")
    stack = ModelStack(cache=None, sinks=[writer], concurrency=2, max_attempts=1)
    model = stack.for_role("user", "embedded", {}, given=scripted([]))
    with pytest.raises(UnexpectedPromptError):
        await model.ainvoke(MESSAGES, call=CallInfo(agent="a"))
    writer.close()
    [record] = read_transcript(tmp_path / "t.jsonl")
    assert record["answer"] is None and "UnexpectedPromptError" in record["error"]


async def test_a_cancelled_call_is_recorded_as_cancelled_not_as_an_answer(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "t.jsonl")
    stack = ModelStack(cache=None, sinks=[writer], concurrency=1)
    model = stack.for_role("user", "embedded", {}, given=scripted([("Say hello", "hello")], latency_s=5.0))
    call = asyncio.create_task(model.ainvoke(MESSAGES, call=CallInfo(role="user", agent="user-1", step="propose")))
    await asyncio.sleep(0.05)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    writer.close()
    [record] = read_transcript(tmp_path / "t.jsonl")
    assert record["answer"] is None and record["error"].startswith("CancelledError")


def test_specs() -> None:
    for good in ("embedded", "openai:gpt-4o-mini", "hf:/models/x", "vllm:Qwen/Qwen2.5-1.5B"):
        check_spec(good)
    for bad, message in (("nope", "unknown model backend"), ("hf:", "hf:PATH"), ("scripted", "tests only")):
        with pytest.raises(ValueError, match=message):
            check_spec(bad)


def test_openai_backend_needs_a_key_or_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    from sandbox.base.errors import ModelUnavailableError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ModelUnavailableError, match="OPENAI_API_KEY"):
        build_backend("openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert build_backend("openai:local-model").model_name == "local-model"


def test_vllm_backend_is_imported_lazily() -> None:
    import sys

    model = build_backend("vllm:some/model")
    assert "vllm" not in sys.modules
    assert model._llm_type == "vllm"


def test_cache_keys_without_log_probabilities_are_those_of_older_caches(tmp_path: Path) -> None:
    """A cache written before log-probabilities existed keeps answering: same keys, and its table is migrated."""
    import sqlite3

    from langchain_core.messages import HumanMessage

    from sandbox.llm.cache import cache_key

    messages = [HumanMessage("hi")]
    plain = cache_key({"type": "m"}, messages, None, {"temperature": 0.0, "seed": 1})
    assert plain == cache_key({"type": "m"}, messages, None, {"temperature": 0.0, "seed": 1, "top_logprobs": None})
    assert plain != cache_key({"type": "m"}, messages, None, {"temperature": 0.0, "seed": 1, "top_logprobs": 5})
    old = sqlite3.connect(tmp_path / "old.sqlite")
    old.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, content TEXT NOT NULL, usage TEXT NOT NULL)")
    old.execute("INSERT INTO responses VALUES ('k', 'stored answer', '{}')")
    old.commit()
    old.close()
    cache = ResponseCache(tmp_path / "old.sqlite")
    assert cache.get("k") == ("stored answer", {}, {})
    cache.put("k2", "new", {}, {"finish_reason": "length"})
    assert cache.get("k2") == ("new", {}, {"finish_reason": "length"})


def test_compacting_a_transcript_keeps_each_calls_last_line_in_run_order_and_skips_a_torn_line(tmp_path: Path) -> None:
    from sandbox.llm.transcript import compact_transcript

    def line(call_id: str, epoch: int, answer: str) -> str:
        return json.dumps({"call_id": call_id, "run": 0, "epoch": epoch, "episode": "e", "answer": answer}) + "\n"

    path = tmp_path / "t.jsonl"
    # epoch 1 written first, call b redone (a resumed run: its last line wins), a torn line left by a kill
    path.write_text(line("b", 1, "first") + line("a", 0, "ü\u2028") + line("b", 1, "again") + '{"call_id": "c", "ep')
    (tmp_path / "t.parsed.jsonl").write_text('{"call_id": "b", "parsed": "C", "illegal": false}\n')
    assert compact_transcript(path) == 2
    assert path.read_text() == line("a", 0, "ü\u2028") + line("b", 1, "again")
    assert [json.loads(x)["call_id"] for x in (tmp_path / "t.parsed.jsonl").read_text().splitlines()] == ["b"]


def test_transcripts_and_notes_an_older_writer_left_are_read_whole(tmp_path: Path) -> None:
    """orjson reads the lines, and refuses a NaN or an infinity, which json wrote before it: those lines are read
    by json, not skipped as torn ones; a note with an int beyond 64 bits is written by json."""
    from sandbox.llm.moves import read_notes
    from sandbox.llm.transcript import compact_transcript, iter_transcript

    path = tmp_path / "t.jsonl"
    lines = [
        json.dumps({"call_id": "a", "run": 0, "epoch": 0, "episode": "e", "logprob": float("-inf")}),
        json.dumps({"call_id": "b", "run": 0, "epoch": 0, "episode": "e", "score": float("nan")}),
        '{"call_id": "c", "ep',  # torn
    ]
    path.write_text("\n".join(lines))
    records = list(iter_transcript(path))
    assert [r["call_id"] for r in records] == ["a", "b"] and records[0]["logprob"] == float("-inf")
    assert read_transcript(path) == records
    writer = TranscriptWriter(tmp_path / "u.jsonl")
    writer.note("a", 2**70, False)
    writer.note("b", float("nan"), True)
    writer.close()
    assert read_notes(tmp_path / "u.jsonl") == {
        "a": {"parsed": 2**70, "illegal": False},
        "b": {"parsed": None, "illegal": True},  # orjson writes a NaN as null
    }
    assert compact_transcript(path) == 2


def test_a_writer_appending_after_a_torn_last_line_starts_a_line_of_its_own(tmp_path: Path) -> None:
    from sandbox.llm.transcript import TranscriptWriter, compact_transcript

    path = tmp_path / "t.jsonl"
    path.write_text('{"call_id": "a", "run": 0, "epoch": 0, "episode": "e"}\n{"call_id": "b", "ep')  # a killed writer
    writer = TranscriptWriter(path)
    writer._file.write(json.dumps({"call_id": "c", "run": 0, "epoch": 1, "episode": "e"}) + "\n")
    writer.close()
    assert compact_transcript(path) == 2  # a and c: c is not glued to the torn line and dropped with it


def test_answers_stored_in_a_loop_pass_are_read_at_once_and_written_when_it_ends(tmp_path: Path) -> None:
    import asyncio
    import sqlite3

    from sandbox.llm.cache import ResponseCache

    def on_disk() -> int:
        with sqlite3.connect(tmp_path / "cache.sqlite") as db:
            return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    async def main() -> tuple[int, int]:
        cache, other = ResponseCache(tmp_path / "cache.sqlite"), ResponseCache(tmp_path / "cache.sqlite")
        for k in range(3):
            cache.put(f"k{k}", f"answer {k}", {"input_tokens": k}, {"finish_reason": "stop"})
        assert other.get("k2") == ("answer 2", {"input_tokens": 2}, {"finish_reason": "stop"})  # the same process
        before = on_disk()
        await asyncio.sleep(0)  # the pass ends
        after = on_disk()
        cache.put("k3", "answer 3", {})
        cache.close()  # writes what is left
        other.close()
        return before, after

    assert asyncio.run(main()) == (0, 3) and on_disk() == 4
    outside = ResponseCache(tmp_path / "cache.sqlite")
    outside.put("k4", "answer 4", {})  # outside a loop: at once
    assert on_disk() == 5
    outside.close()
