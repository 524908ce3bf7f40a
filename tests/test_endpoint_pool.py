"""A pool of OpenAI-compatible endpoints on the real HTTP path: spread, per-endpoint limits, fail-over, structured
output fields, and a society run that loses nothing while one of two servers fails a third of its calls."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from langchain_core.messages import HumanMessage

from sandbox import RunResult
from sandbox.base.errors import ScenarioError
from sandbox.core.scenario_files import parse_scenario
from sandbox.llm.contracts import Constraint
from sandbox.llm.resolve import ModelStack
from sandbox.society.runner import arun
from tests.loopback_openai import loopback_openai
from tests.test_kill_and_resume import SCENARIO, answer

MESSAGES = [HumanMessage("Say hello.")]


def hello(body: dict[str, Any]) -> str:
    return "hello"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return monkeypatch


def stack(**changes: Any) -> ModelStack:
    return ModelStack(
        **{"cache": None, "sinks": [], "concurrency": 16, "max_attempts": 3, "base_delay_s": 0.01, **changes}
    )


async def test_calls_spread_over_the_endpoints_under_a_per_endpoint_limit(env: pytest.MonkeyPatch) -> None:
    with loopback_openai(hello, latency_s=0.05) as a, loopback_openai(hello, latency_s=0.05) as b:
        model = stack().for_role("user", f"openai:m@{a.url},{b.url}?per_endpoint=2", {})
        answers = await asyncio.gather(*(model.ainvoke(MESSAGES) for _ in range(12)))
    assert {m.response_metadata["endpoint"] for m in answers} == {a.url, b.url}
    assert len(a.requests) + len(b.requests) == 12 and a.peak_in_flight <= 2 and b.peak_in_flight <= 2
    assert abs(len(a.requests) - len(b.requests)) <= 2  # the least loaded endpoint takes the next call


async def test_a_failing_endpoint_is_failed_over_and_recorded(env: pytest.MonkeyPatch) -> None:
    with loopback_openai(hello) as good, loopback_openai(hello) as bad:
        bad.failures = [503] * 50
        model = stack(max_attempts=1).for_role("user", f"openai:m@{bad.url},{good.url}?cooldown_s=60", {})
        first = await model.ainvoke(MESSAGES)
        later = [await model.ainvoke(MESSAGES) for _ in range(3)]
    # the first call tried the bad endpoint, failed over at once (no retry attempt spent), and says so
    assert first.response_metadata["endpoint"] == good.url and first.response_metadata["endpoint_failures"] == [bad.url]
    assert len(bad.requests) == 1 and all(m.response_metadata["endpoint"] == good.url for m in later)  # cooling down


async def test_client_errors_are_not_failed_over_and_every_endpoint_failing_is_retried(env: pytest.MonkeyPatch) -> None:
    import openai

    from sandbox.llm.retry import RetryExhaustedError

    with loopback_openai(hello) as a, loopback_openai(hello) as b:
        a.failures, b.failures = [400], [400]
        model = stack().for_role("user", f"openai:m@{a.url},{b.url}", {})
        with pytest.raises(openai.BadRequestError):
            await model.ainvoke(MESSAGES)
        assert len(a.requests) + len(b.requests) == 1
        a.failures, b.failures = [500] * 10, [500] * 10
        with pytest.raises(RetryExhaustedError, match="3 attempts"):
            await model.ainvoke(MESSAGES)


async def test_a_slow_endpoint_sends_the_call_elsewhere(env: pytest.MonkeyPatch) -> None:
    with loopback_openai(hello, latency_s=2.0) as slow, loopback_openai(hello) as fast:
        model = stack(max_attempts=1).for_role("user", f"openai:m@{slow.url},{fast.url}?slow_after_s=0.3", {})
        started = asyncio.get_running_loop().time()
        reply = await model.ainvoke(MESSAGES)
        assert asyncio.get_running_loop().time() - started < 1.9  # the slow one answers after 2 s
    assert reply.response_metadata["endpoint"] == fast.url and reply.response_metadata["endpoint_failures"] == [
        slow.url
    ]


async def test_structured_output_fields_by_server_kind(env: pytest.MonkeyPatch) -> None:
    yes_no = Constraint(grammar='root ::= ("yes" | "no")', regex="(yes|no)", choices=("yes", "no"))
    with loopback_openai(hello) as server:
        for structured, field, value in (
            ("vllm", "structured_outputs", {"choice": ["yes", "no"]}),
            ("llamacpp", "grammar", 'root ::= ("yes" | "no")'),
        ):
            model = stack().for_role("user", f"openai:m@{server.url}?structured={structured}", {})
            await model.ainvoke(MESSAGES, constraint=yes_no)
            assert server.requests[-1][field] == value
        model = stack().for_role("user", f"openai:m@{server.url}", {})  # OpenAI itself: no extra fields
        await model.ainvoke(MESSAGES, constraint=yes_no)
        assert "grammar" not in server.requests[-1] and "structured_outputs" not in server.requests[-1]


def test_an_endpoints_list_is_written_into_the_spec() -> None:
    scenario = parse_scenario(
        {
            "name": "x",
            "society": {"size": 2, "norms": [{"norm": "fair", "proportion": 1.0}]},
            "models": {
                "user": {"spec": "openai:m?per_endpoint=4", "endpoints": ["http://a:8000/v1", "http://b:8000/v1"]}
            },
        }
    )
    assert scenario.models.user.spec == "openai:m@http://a:8000/v1,http://b:8000/v1?per_endpoint=4"
    assert parse_scenario(scenario.model_dump(mode="json")).models.user.spec == scenario.models.user.spec
    with pytest.raises(ScenarioError, match="models.user: .*endpoints go with spec: openai:MODEL"):
        parse_scenario(
            {
                "name": "x",
                "society": {"size": 2, "norms": [{"norm": "fair", "proportion": 1.0}]},
                "models": {"user": {"spec": "embedded", "endpoints": ["http://a/v1"]}},
            }
        )


def test_endpoint_specs_are_checked_where_they_are_written() -> None:
    for spec, words in (
        ("openai:m@", "at least one endpoint"),
        ("openai:m@ftp://x", "not an http"),
        ("openai:m@http://a/v1?per_endpoint=x", "not a number"),
        ("openai:m@http://a/v1?speed=1", "unknown option"),
    ):
        with pytest.raises(ScenarioError, match=words):
            parse_scenario(
                {
                    "name": "x",
                    "models": {"user": spec},
                    "society": {"size": 2, "norms": [{"norm": "fair", "proportion": 1.0}]},
                },
                "s.yaml",
            )


async def test_a_society_run_loses_nothing_while_one_of_two_servers_fails_a_third(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with loopback_openai(answer) as healthy:
        whole = await arun(
            parse_scenario({**SCENARIO, "models": {"user": f"openai:loopback@{healthy.url}"}}), out=tmp_path / "whole"
        )
    with loopback_openai(answer) as a, loopback_openai(answer, fail_every=3) as b:
        scenario = parse_scenario({**SCENARIO, "models": {"user": f"openai:loopback@{a.url},{b.url}"}})
        pooled = await arun(scenario, out=tmp_path / "pooled")
    assert b.failed > 0 and len(a.requests) > 0 and len(b.requests) - b.failed > 0
    one, two = RunResult.load(whole), RunResult.load(pooled)
    pd.testing.assert_frame_equal(one.metrics, two.metrics)  # nothing lost, nothing changed
    calls = two.transcripts
    assert set(calls["endpoint"]) == {a.url, b.url}
    assert calls["endpoint"].value_counts().sum() == len(one.transcripts)
    failed_over = calls["endpoint_failures"].dropna()
    assert len(failed_over) == b.failed and all(f == [b.url] for f in failed_over)


def closed_port_url() -> str:
    import socket

    with socket.socket() as sock:  # a port nobody listens on once this closes
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


async def test_a_refused_connection_is_failed_over_and_retried(env: pytest.MonkeyPatch) -> None:
    from sandbox.llm.retry import RetryExhaustedError

    dead = closed_port_url()
    with pytest.raises(RetryExhaustedError, match="2 attempts.*no endpoint answered"):
        await stack(max_attempts=2).for_role("user", f"openai:m@{dead}", {}).ainvoke(MESSAGES)
    with loopback_openai(hello) as live:
        reply = await stack(max_attempts=1).for_role("user", f"openai:m@{dead},{live.url}", {}).ainvoke(MESSAGES)
    assert reply.response_metadata["endpoint"] == live.url and reply.response_metadata["endpoint_failures"] == [dead]


async def test_a_burst_of_failures_sets_an_endpoint_aside_once(env: pytest.MonkeyPatch) -> None:
    with loopback_openai(hello, latency_s=0.05) as good, loopback_openai(hello, latency_s=0.05) as bad:
        bad.failures = [503] * 8
        model = stack(max_attempts=1).for_role("user", f"openai:m@{bad.url},{good.url}?cooldown_s=0.3", {})
        await asyncio.gather(*(model.ainvoke(MESSAGES) for _ in range(16)))  # 8 fail at once on bad, go to good
        pool = model.innermost().pool  # type: ignore[attr-defined]
        bad_endpoint = next(e for e in pool.endpoints if e.url == bad.url)
        assert bad_endpoint.failures >= 2 and bad_endpoint.failures_in_a_row == 1  # one burst, one failure
        await asyncio.sleep(0.4)  # the cool-down (0.3 s, not doubled per failed call) is over
        served = len(bad.requests)
        await asyncio.gather(*(model.ainvoke(MESSAGES) for _ in range(8)))
    assert len(bad.requests) > served  # back in the pool
