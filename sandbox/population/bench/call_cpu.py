"""`sandbox bench llm-calls`: the framework's CPU per LLM call, as calls a second a core, against the loopback server
answering at once (0 ms), beside LangChain's own `ChatOpenAI` measured in the same run.

The server (`sandbox.society.loopback_server`) runs in a process of its own, so the CPU counted is the client's:
everything between a game asking and the answer coming back, through the run's whole model stack (the transcript and
the call ledger, the sampling defaults, the response cache, the retries, the concurrency limit, the `openai:`
backend and its endpoint pool). `concurrency` calls are in flight. The baseline is what a LangChain user would
write: `ChatOpenAI(...).ainvoke` (the openai SDK over httpx, LangChain's callbacks), with nothing recorded or cached.
Each call is distinct (its own seed and user turn), so the cache answers none. The servers' answers are timing
fixtures.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from typing_extensions import TypedDict

__all__ = ["CallCPU", "bench_call_cpu", "stack_cpu_per_call"]

CALLS = 20_000
BASELINE_CALLS = 5_000
CONCURRENCY = 64
SYSTEM = "You follow this principle: Always cooperate with the other agent. " * 3


class CallCPU(TypedDict):
    """CPU milliseconds a call, and calls a second a core, of the sandbox's stack and of the baseline."""

    calls: int
    stack_ms: float
    stack_calls_per_s: float
    baseline_calls: int
    baseline_ms: float
    ratio: float


def _messages(i: int) -> list[Any]:
    from langchain_core.messages import HumanMessage, SystemMessage

    return [SystemMessage(SYSTEM), HumanMessage(f"Round {i}. Choose action1 or action2.")]


async def _gather(call: Any, calls: int, concurrency: int) -> None:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with semaphore:
            await call(i)

    await asyncio.gather(*(one(i) for i in range(calls)))


def _timed(call: Any, calls: int, concurrency: int) -> float:
    """CPU milliseconds a call of `calls` made `concurrency` at a time, after a warm-up of 500 (on one event loop: a
    client's connections belong to the loop that opened them)."""

    async def main() -> float:
        await _gather(call, 500, concurrency)
        cpu = time.process_time()
        await _gather(call, calls, concurrency)
        return 1000 * (time.process_time() - cpu) / calls

    return asyncio.run(main())


def stack_cpu_per_call(url: str, calls: int = CALLS, concurrency: int = CONCURRENCY) -> float:
    """CPU milliseconds a call of the run's model stack (`ModelStack`, an `openai:` model on `url`, a transcript
    and a response cache in a scratch folder) against the server at `url`."""
    from sandbox.llm.cache import ResponseCache
    from sandbox.llm.contracts import CallInfo
    from sandbox.llm.resolve import ModelStack
    from sandbox.llm.transcript import TranscriptWriter
    from sandbox.llm.wrapper import acall

    with tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(Path(tmp) / "cache.sqlite")
        transcript = TranscriptWriter(Path(tmp) / "transcripts.jsonl")
        try:
            stack = ModelStack(cache=cache, sinks=[transcript], concurrency=concurrency)
            model = stack.for_role("user", f"openai:bench@{url}", {"temperature": 0.7, "max_tokens": 64})

            async def call(i: int) -> None:
                info = CallInfo(role="user", agent=f"agent{i}", run=0, epoch=0, episode=f"match{i}", step="move")
                await acall(model, _messages(i), seed=i, call=info)

            return _timed(call, calls, concurrency)
        finally:
            transcript.close()
            cache.close()


def baseline_cpu_per_call(url: str, calls: int = BASELINE_CALLS, concurrency: int = CONCURRENCY) -> float:
    """CPU milliseconds a call of LangChain's `ChatOpenAI.ainvoke` against the server at `url`."""
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="bench", base_url=url, api_key="not-needed", max_retries=0, temperature=0.7)

    async def call(i: int) -> None:
        await model.ainvoke(_messages(i), seed=i, max_tokens=64)

    return _timed(call, calls, concurrency)


def bench_call_cpu(calls: int = CALLS, baseline_calls: int = BASELINE_CALLS) -> CallCPU:
    """Both measures against one loopback server at 0 ms; the table printed."""
    from sandbox.society.loopback_server import server_process

    with server_process(latency_s=0.0, rules="population") as url:
        stack = stack_cpu_per_call(url, calls)
        baseline = baseline_cpu_per_call(url, baseline_calls)
    figures = CallCPU(
        calls=calls,
        stack_ms=stack,
        stack_calls_per_s=1000 / stack,
        baseline_calls=baseline_calls,
        baseline_ms=baseline,
        ratio=stack / baseline,
    )
    table = Table(
        title=f"Framework CPU per LLM call against the loopback server at 0 ms, {CONCURRENCY} in flight",
        title_justify="left",
    )
    for column in ("client", "calls", "CPU per call", "calls a second a core"):
        table.add_column(column, justify="left" if column == "client" else "right")
    table.add_row("the run's model stack (openai:)", f"{calls:,}", f"{stack:.3f} ms", f"{1000 / stack:,.0f}")
    table.add_row(
        "LangChain's ChatOpenAI.ainvoke (baseline)",
        f"{baseline_calls:,}",
        f"{baseline:.3f} ms",
        f"{1000 / baseline:,.0f}",
    )
    table.caption = f"the stack's CPU per call is {stack / baseline:.2f}x the baseline's"
    Console().print(table)
    return figures
