"""An OpenAI-compatible chat server on loopback, for tests: fixed latency and injected errors.

It runs in a thread of the test process, answers `/v1/chat/completions` from a
function of the request, and records every request body it receives.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class LoopbackOpenAI:
    """State shared with the handler threads."""

    def __init__(self, answer: Callable[[dict[str, Any]], Any], latency_s: float = 0.0, fail_every: int = 0) -> None:
        self.answer = answer
        self.latency_s = latency_s
        self.failures: list[int] = []  # status codes to answer with, first to last, before succeeding
        self.fail_every = fail_every  # answer every Nth request with HTTP 500 (a flaky server)
        self.failed = 0
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self.lock = threading.Lock()
        self.url = ""


def _handler(state: LoopbackOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.requests.append(body)
                state.in_flight += 1
                state.peak_in_flight = max(state.peak_in_flight, state.in_flight)
                failure = state.failures.pop(0) if state.failures else None
                if failure is None and state.fail_every and len(state.requests) % state.fail_every == 0:
                    failure = 500
                state.failed += failure is not None
            try:
                time.sleep(state.latency_s)
                if failure is not None:
                    self._send(failure, {"error": {"message": f"injected {failure}", "type": "server_error"}})
                    return
                answer = state.answer(body)
                # an answer may come with OpenAI-shaped log-probabilities: (text, logprobs["content"])
                text, logprobs = answer if isinstance(answer, tuple) else (answer, None)
                self._send(
                    200,
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "test"),
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "logprobs": None if logprobs is None else {"content": logprobs, "refusal": None},
                                "message": {"role": "assistant", "content": text},
                            }
                        ],
                        "usage": {
                            "prompt_tokens": 11,
                            "completion_tokens": len(text.split()),
                            "total_tokens": 11 + len(text.split()),
                        },
                    },
                )
            finally:
                with state.lock:
                    state.in_flight -= 1

    return Handler


@contextmanager
def loopback_openai(
    answer: Callable[[dict[str, Any]], Any], latency_s: float = 0.0, fail_every: int = 0
) -> Iterator[LoopbackOpenAI]:
    """Start the server on 127.0.0.1 (a free port); stop it on exit."""
    state = LoopbackOpenAI(answer, latency_s, fail_every)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
