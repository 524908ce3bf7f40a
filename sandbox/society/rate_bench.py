"""`sandbox bench rate-limit`: calls against an endpoint that enforces a rate limit (the loopback server at
`requests_per_minute`, answering 429 with `Retry-After` above it), by a client told the limit (`?requests_per_minute`)
and, as the baseline in the same run, by one that is not (it only honours `Retry-After`).

For each: the calls answered and lost, the achieved rate (answered calls a minute, from the first answer to the last)
against the limit, the 429s as a share of the requests sent, and the seconds the calls slept on the limit. The
server's answers are timing fixtures, never simulation results.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["bench_rate_limit", "run"]


async def _play(spec: str, calls: int, concurrency: int) -> dict[str, Any]:
    from langchain_core.messages import HumanMessage

    from sandbox.llm.resolve import ModelStack

    stack = ModelStack(cache=None, sinks=[], concurrency=concurrency)
    model = stack.for_role("user", spec, {"max_tokens": 16})
    done: list[float] = []
    lost = 0

    async def one(k: int) -> None:
        nonlocal lost
        try:
            await model.ainvoke([HumanMessage(f"Call {k}: say hello.")])
            done.append(time.monotonic())
        except Exception:  # a call that gave up: counted as lost
            lost += 1

    started = time.monotonic()
    await asyncio.gather(*(one(k) for k in range(calls)))
    elapsed = time.monotonic() - started
    [backend] = stack.backends()
    [stats] = backend.pool.stats()  # type: ignore[attr-defined]
    span = max(done) - min(done) if len(done) > 1 else float("nan")
    return {
        "answered": len(done),
        "lost": lost,
        "seconds": elapsed,
        "rate_per_minute": 60 * (len(done) - 1) / span,
        "requests": stats["calls"],
        "rate_limited": stats["rate_limited"],
        "share_429": stats["rate_limited"] / max(stats["calls"], 1),
        "waited_s": stats["waited_s"],
    }


def bench_rate_limit(
    requests_per_minute: float = 600, calls: int = 300, latency_s: float = 0.2, concurrency: int = 64
) -> dict[str, Any]:
    """`calls` calls at `concurrency` against the loopback server limited to `requests_per_minute`, paced by the
    client and not."""
    import os

    from sandbox.society.loopback_server import server_process

    os.environ.pop("OPENAI_BASE_URL", None)
    figures = {}
    with server_process(latency_s=latency_s, rules="population", requests_per_minute=requests_per_minute) as url:
        for name, spec in (
            ("told the limit", f"openai:bench@{url}?requests_per_minute={requests_per_minute:g}"),
            ("not told (Retry-After only: the baseline)", f"openai:bench@{url}"),
        ):
            figures[name] = asyncio.run(_play(spec, calls, concurrency))
    table = Table(
        title=f"Rate limits: {calls} calls at concurrency {concurrency} against the loopback server "
        f"({latency_s * 1000:.0f} ms) limited to {requests_per_minute:g} requests a minute",
        title_justify="left",
    )
    for column in ("client", "answered", "lost", "rate / limit", "429s of requests", "slept on the limit", "seconds"):
        table.add_column(column, justify="left" if column == "client" else "right")
    for name, f in figures.items():
        table.add_row(
            name,
            str(f["answered"]),
            str(f["lost"]),
            f"{f['rate_per_minute']:,.0f} / {requests_per_minute:g} ({f['rate_per_minute'] / requests_per_minute:.3f}x)",
            f"{f['rate_limited']} of {f['requests']} ({f['share_429']:.1%})",
            f"{f['waited_s']:,.0f} s",
            f"{f['seconds']:.1f}",
        )
    Console().print(table)
    return figures


def run() -> dict[str, Any]:
    return bench_rate_limit()
