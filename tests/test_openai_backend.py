"""The openai: backend on the real HTTP path, against a loopback server: retries, timeouts, concurrency."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.llm.resolve import ModelStack
from sandbox.llm.retry import RetryExhaustedError
from tests.loopback_openai import loopback_openai

MESSAGES = [HumanMessage("Say hello.")]


def hello(body: dict[str, Any]) -> str:
    return "hello"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return monkeypatch


def stack(**changes: Any) -> ModelStack:
    options: dict[str, Any] = {"cache": None, "sinks": [], "concurrency": 4, "max_attempts": 4, "base_delay_s": 0.01}
    options.update(changes)
    return ModelStack(**options)


async def test_requests_carry_sampling_and_seed_but_not_sandbox_fields(env: pytest.MonkeyPatch) -> None:
    with loopback_openai(hello) as server:
        env.setenv("OPENAI_BASE_URL", server.url)
        model = stack().for_role("user", "openai:test-model", {"temperature": 0.4, "top_p": 0.9, "max_tokens": 12})
        answer = await model.ainvoke(MESSAGES, seed=7, call=CallInfo(agent="a"), constraint=Constraint(regex="x"))
    assert answer.content == "hello"
    [body] = server.requests
    assert body["model"] == "test-model" and body["seed"] == 7 and body["temperature"] == 0.4
    assert body.get("max_tokens", body.get("max_completion_tokens")) == 12
    assert "call" not in body and "constraint" not in body


@pytest.mark.parametrize("status", [500, 502, 429])
async def test_transient_http_errors_are_retried(env: pytest.MonkeyPatch, status: int) -> None:
    with loopback_openai(hello) as server:
        env.setenv("OPENAI_BASE_URL", server.url)
        server.failures = [status, status]
        model = stack().for_role("user", "openai:m", {})
        assert (await model.ainvoke(MESSAGES)).content == "hello"
    assert len(server.requests) == 3


async def test_client_errors_are_not_retried(env: pytest.MonkeyPatch) -> None:
    import openai

    with loopback_openai(hello) as server:
        env.setenv("OPENAI_BASE_URL", server.url)
        server.failures = [400]
        model = stack().for_role("user", "openai:m", {})
        with pytest.raises(openai.BadRequestError):
            await model.ainvoke(MESSAGES)
    assert len(server.requests) == 1


async def test_retries_stop_at_the_cap(env: pytest.MonkeyPatch) -> None:
    with loopback_openai(hello) as server:
        env.setenv("OPENAI_BASE_URL", server.url)
        server.failures = [503] * 10
        model = stack(max_attempts=3).for_role("user", "openai:m", {})
        with pytest.raises(RetryExhaustedError, match="3 attempts"):
            await model.ainvoke(MESSAGES)
    assert len(server.requests) == 3


async def test_slow_server_times_out_then_recovers(env: pytest.MonkeyPatch) -> None:
    with loopback_openai(hello, latency_s=0.5) as server:
        env.setenv("OPENAI_BASE_URL", server.url)
        model = stack(max_attempts=2, timeout_s=0.1).for_role("user", "openai:m", {})
        with pytest.raises(RetryExhaustedError, match="TimeoutError"):
            await model.ainvoke(MESSAGES)
        server.latency_s = 0.0
        assert (await model.ainvoke(MESSAGES)).content == "hello"


async def test_concurrency_limit_on_the_wire(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with loopback_openai(hello, latency_s=0.1) as server:
        env.setenv("OPENAI_BASE_URL", server.url)
        model = stack(concurrency=3).for_role("user", "openai:m", {})
        started = asyncio.get_running_loop().time()
        await asyncio.gather(*(model.ainvoke(MESSAGES) for _ in range(9)))
        elapsed = asyncio.get_running_loop().time() - started
    assert server.peak_in_flight == 3
    assert elapsed >= 0.3  # three waves of three


async def test_log_probabilities_on_the_wire_and_through_the_cache(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from sandbox.llm.cache import ResponseCache
    from sandbox.llm.contracts import TOKEN_LOGPROBS
    from sandbox.rewards.judge import ProxyJudge

    def graded(body: dict[str, Any]) -> Any:
        if not body.get("logprobs"):
            return "Yes"
        top = [{"token": "Yes", "logprob": -0.5, "bytes": None}, {"token": "No", "logprob": -1.5, "bytes": None}]
        return "Yes", [{"token": "Yes", "logprob": -0.5, "bytes": None, "top_logprobs": top}]

    with loopback_openai(graded) as server:
        env.setenv("OPENAI_BASE_URL", server.url)
        model = stack(cache=ResponseCache(tmp_path / "cache.sqlite")).for_role("judge", "openai:judge", {})
        answer = await model.ainvoke(MESSAGES, top_logprobs=5)
        assert server.requests[-1]["logprobs"] is True and server.requests[-1]["top_logprobs"] == 5
        assert "top_logprobs" in server.requests[-1] and "call" not in server.requests[-1]
        assert answer.response_metadata[TOKEN_LOGPROBS] == [
            {"token": "Yes", "logprob": -0.5, "top": {"Yes": -0.5, "No": -1.5}}
        ]
        verdict = await ProxyJudge(model).yes_no("Is it?", step_by_step=False, call=CallInfo(role="judge"))
        again = await ProxyJudge(model).yes_no("Is it?", step_by_step=False, call=CallInfo(role="judge"))
        assert len(server.requests) == 2  # the second verdict is a cache hit
        assert verdict == again and verdict.p_yes == pytest.approx(1 / (1 + math.exp(-1.0)))
        plain = await model.ainvoke(MESSAGES)
        assert "logprobs" not in server.requests[-1] and TOKEN_LOGPROBS not in plain.response_metadata


async def test_a_scratch_model_asks_a_repeated_question_once_and_keeps_nothing(env: pytest.MonkeyPatch) -> None:
    import tempfile

    from sandbox.llm.resolve import scratch_model

    before = set(Path(tempfile.gettempdir()).iterdir())
    with loopback_openai(hello) as server:
        env.setenv("OPENAI_BASE_URL", server.url)
        with scratch_model("judge", "openai:bench", {"temperature": 0.0}) as model:
            answers = [(await model.ainvoke(MESSAGES, seed=1)).content for _ in range(3)]
            other = (await model.ainvoke([HumanMessage("Say goodbye.")], seed=1)).content
    assert answers == ["hello"] * 3 and other == "hello"
    assert len(server.requests) == 2  # the repeats came from the scratch cache
    assert server.requests[0]["temperature"] == 0.0
    assert set(Path(tempfile.gettempdir()).iterdir()) <= before  # the scratch folder is gone


@pytest.mark.parametrize("model", ["bench", "gpt-4o-mini", "o3-mini"])
@pytest.mark.parametrize(
    "kwargs, stop",
    [({}, None), ({"temperature": 0.7, "max_tokens": 64, "seed": 3, "top_p": 0.9}, ["\n"]), ({"logprobs": True}, None)],
)
def test_the_request_built_directly_is_langchain_s_own(model: str, kwargs: dict[str, Any], stop: Any) -> None:
    from langchain_core.messages import AIMessage, SystemMessage

    from sandbox.llm.openai_compat import openai_chat_model

    backend = openai_chat_model(f"{model}@http://127.0.0.1:9/v1")
    plain = [SystemMessage("Be fair."), HumanMessage("Offer?"), AIMessage("5"), HumanMessage("And now?")]
    named = [SystemMessage("Be fair."), HumanMessage("Offer?", name="alice")]
    tools = [HumanMessage("Hi"), AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "1", "type": "tool_call"}])]
    for messages in (plain, named, tools, [HumanMessage([{"type": "text", "text": "parts"}])]):
        direct = backend.request_payload(messages, stop, dict(kwargs))
        assert direct == backend._get_request_payload(messages, stop=stop, **kwargs)
    assert backend.request_payload(plain, None, {})["messages"][-1] == {"content": "And now?", "role": "user"}
