"""An OpenAI-compatible chat server on loopback, for benchmarks and tests: asyncio, keep-alive, fixed latency.

    python -m sandbox.society.loopback_server --latency 0.2 [--rules scai] [--fail-every 3] [--requests-per-minute 600]

prints the port it listens on (127.0.0.1 only), then answers
`POST /v1/chat/completions` after `--latency` seconds from the scripted rules
of the benchmarks (ultimatum proposals and answers; `scai` adds the MetaLM's
principle; `population` answers the population games' prompts with parseable
moves: a matrix game's first action token, the naming game's partner's last
name, half of a donor's units, a one-line strategy). `--fail-every N` answers every Nth request with HTTP 500 (a
flaky endpoint). `--requests-per-minute N` enforces a rate limit as a provider does: a token bucket of N/60
requests a second holding one second's worth (at least one); a request that finds it empty is answered at once with
HTTP 429 and `Retry-After` (whole seconds until a request may go, at least 1), and is not served. Each response carries `x-endpoint` (its port), so a client
can tell which server answered. One process serves thousands of concurrent
connections, so at a fixed latency the server is never the bottleneck: what
a benchmark measures is the client. Its answers are timing fixtures, never
simulation results.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Bucket", "population_answer", "serve", "server_process"]


_TOKEN = re.compile(r"\b(action\d+)\b")
_WORDS = re.compile(r"following values: ([^.]+)\.")
_PARTNER = re.compile(r"'Player 2': '(\w+)'")
_UNITS = re.compile(r"You currently have ([\d.]+) units")


def population_answer(messages: list[dict[str, Any]]) -> str:
    """A parseable move for a population game's prompt (timing only): a matrix game's first action token named, the
    naming game's partner's last pick (else the first value offered), half of a donor's units, else a strategy.

    >>> population_answer([{"role": "user", "content": "Choose action2 or action1."}])
    'action2'
    >>> population_answer([{"role": "system", "content": "pick from the following values: M, Q."},
    ...                    {"role": "user", "content": "{'round': 1, 'Player 1': 'M', 'Player 2': 'Q', 'payoff': -50}"}])
    "{'value': 'Q'; 'reason': 'my partner played it'}"
    """
    system = str(messages[0].get("content", "")) if messages else ""
    text = str(messages[-1].get("content", "")) if messages else ""
    words = _WORDS.search(system)
    if words:
        partner = _PARTNER.findall(text)
        pick = partner[-1] if partner and partner[-1] != "none" else words.group(1).split(", ")[0]
        return f"{{'value': '{pick}'; 'reason': 'my partner played it'}}"
    if "How many units do you give up" in text:
        units = _UNITS.search(text)
        return f"Justification: half.\nAnswer: {float(units.group(1)) / 2 if units else 0:.2f}"
    token = _TOKEN.search(text)
    if token:
        return token.group(1)
    return "My strategy will be to give half of what I have."


def _answerer(rules: str) -> Callable[[list[dict[str, Any]]], str]:
    if rules == "population":
        return population_answer

    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    from sandbox.llm.contracts import CallInfo
    from sandbox.society.benchmarks import fake_model, fake_scai_models

    model = fake_scai_models(0.0)["user"] if rules == "scai" else fake_model(0.0)
    kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}

    def answer(messages: list[dict[str, Any]]) -> str:
        converted = [
            kinds.get(m.get("role", "user"), HumanMessage)(content=str(m.get("content", ""))) for m in messages
        ]
        reply = model.answer(converted, {"call": CallInfo()})
        return reply if isinstance(reply, str) else reply.text

    return answer


def _response(status: int, body: dict[str, Any], port: int, extra: str = "") -> bytes:
    data = json.dumps(body).encode()
    reason = {200: "OK", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error"}.get(status, "Error")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        f"x-endpoint: {port}\r\n{extra}Connection: keep-alive\r\n\r\n"
    )
    return head.encode() + data


class Bucket:
    """A provider's request limit: `per_minute` requests a minute, a bucket of one second's worth (at least one).

    >>> bucket = Bucket(60, now=0.0)  # one a second, one at a time
    >>> bucket.take(0.0), bucket.take(0.5), bucket.take(1.0)
    (0.0, 0.5, 0.0)
    """

    def __init__(self, per_minute: float, now: float | None = None) -> None:
        self.rate = per_minute / 60
        self.size = max(1.0, self.rate)
        self.level = self.size
        self.at = time.monotonic() if now is None else now

    def take(self, now: float | None = None) -> float:
        """Take a request's token: 0.0 when it may go, else the seconds until a token is there (nothing taken)."""
        now = time.monotonic() if now is None else now
        self.level = min(self.size, self.level + (now - self.at) * self.rate)
        self.at = now
        if self.level >= 1.0:
            self.level -= 1.0
            return 0.0
        return (1.0 - self.level) / self.rate


async def serve(
    port: int = 0,
    *,
    latency_s: float = 0.2,
    rules: str = "ultimatum",
    fail_every: int = 0,
    requests_per_minute: float = 0.0,
    ready: Callable[[int], None] | None = None,
) -> None:
    """Serve forever on 127.0.0.1:`port` (0: a free one, passed to `ready`); `requests_per_minute` > 0 enforces that
    limit (429 with `Retry-After`)."""
    answer = _answerer(rules)
    bucket = Bucket(requests_per_minute) if requests_per_minute > 0 else None
    count = {"n": 0}
    bound = {"port": port}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                request = json.loads(await reader.readexactly(length)) if length else {}
                wait = bucket.take() if bucket is not None else 0.0
                if wait > 0:
                    body = {
                        "error": {"message": "rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}
                    }
                    retry = f"Retry-After: {max(1, math.ceil(wait))}\r\n"
                    writer.write(_response(429, body, bound["port"], retry))
                    await writer.drain()
                    continue
                count["n"] += 1
                failing = fail_every and count["n"] % fail_every == 0
                await asyncio.sleep(latency_s)
                if failing:
                    writer.write(
                        _response(
                            500, {"error": {"message": "injected failure", "type": "server_error"}}, bound["port"]
                        )
                    )
                else:
                    text = answer(request.get("messages", []))
                    words = len(text.split())
                    writer.write(
                        _response(
                            200,
                            {
                                "id": f"chatcmpl-{count['n']}",
                                "object": "chat.completion",
                                "created": 0,
                                "model": request.get("model", "bench"),
                                "choices": [
                                    {
                                        "index": 0,
                                        "finish_reason": "stop",
                                        "logprobs": None,
                                        "message": {"role": "assistant", "content": text},
                                    }
                                ],
                                "usage": {
                                    "prompt_tokens": 100,
                                    "completion_tokens": words,
                                    "total_tokens": 100 + words,
                                },
                            },
                            bound["port"],
                        )
                    )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=4096)
    bound["port"] = server.sockets[0].getsockname()[1]
    if ready:
        ready(bound["port"])
    async with server:
        await server.serve_forever()


@contextmanager
def server_process(
    *, latency_s: float = 0.2, rules: str = "ultimatum", fail_every: int = 0, requests_per_minute: float = 0.0
) -> Iterator[str]:
    """Run the server in a child process (its own CPU, not the client's); yield its base URL; stop it on exit."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sandbox.society.loopback_server",
            "--latency",
            str(latency_s),
            "--rules",
            rules,
            "--fail-every",
            str(fail_every),
            "--requests-per-minute",
            str(requests_per_minute),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--rules", choices=("ultimatum", "scai", "population"), default="ultimatum")
    parser.add_argument("--fail-every", type=int, default=0)
    parser.add_argument("--requests-per-minute", type=float, default=0.0)
    args = parser.parse_args()
    asyncio.run(
        serve(
            args.port,
            latency_s=args.latency,
            rules=args.rules,
            fail_every=args.fail_every,
            requests_per_minute=args.requests_per_minute,
            ready=lambda port: print(port, flush=True),
        )
    )


if __name__ == "__main__":
    main()
