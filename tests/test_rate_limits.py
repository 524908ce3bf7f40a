"""Clients that keep to an endpoint's rate limits (`sandbox.llm.rate`, `sandbox.llm.endpoints`): calls paced to
`requests_per_minute` against the loopback server enforcing the same limit lose nothing and meet no 429; a 429's
`Retry-After` holds every call to the endpoint and is never counted as the endpoint failing."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from sandbox.llm.rate import RateLimit, waiting
from sandbox.llm.resolve import ModelStack
from sandbox.society.loopback_server import server_process

MESSAGES = [HumanMessage("Say hello.")]


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return monkeypatch


async def _calls(spec: str, n: int) -> tuple[list[Any], list[dict[str, Any]], float]:
    stack = ModelStack(cache=None, sinks=[], concurrency=32, max_attempts=2, base_delay_s=0.01)
    model = stack.for_role("user", spec, {"max_tokens": 8})
    started = time.monotonic()
    answers = await asyncio.gather(*(model.ainvoke(MESSAGES) for _ in range(n)))
    elapsed = time.monotonic() - started
    [backend] = stack.backends()
    return answers, backend.pool.stats(), elapsed  # type: ignore[attr-defined]


def test_a_schedule_spaces_the_calls_evenly_and_a_pause_starts_it_again() -> None:
    limit = RateLimit(requests_per_minute=120)  # two a second, no burst
    delays = [limit.reserve(10, now=100.0)[0] for _ in range(4)]
    assert delays == [0.0, 0.5, 1.0, 1.5]
    tokens = RateLimit(tokens_per_minute=600)  # ten tokens a second: a call of 20 holds the next for 2 s
    assert [tokens.reserve(20, now=0.0)[0] for _ in range(3)] == [0.0, 2.0, 4.0]
    tokens.settle(20, 5)  # the last call used 5 tokens, not 20: 1.5 s given back
    assert tokens.reserve(20, now=0.0)[0] == pytest.approx(4.5)
    epoch = limit.reserve(1)[1]
    limit.pause(3.0)  # a 429's Retry-After: the bookings made before are void, the next goes after the pause
    delay, after = limit.reserve(1)
    assert after == epoch + 1 and 2.9 < delay <= 3.0 and limit.rate_limited == 1


async def test_calls_paced_to_the_limit_meet_no_429_and_go_at_the_limit(env: pytest.MonkeyPatch) -> None:
    with server_process(latency_s=0.0, rules="population", requests_per_minute=1200) as url:  # 20 a second
        answers, [stats], elapsed = await _calls(f"openai:m@{url}?requests_per_minute=1200", 61)
    assert all(a.content for a in answers)  # nothing lost
    assert stats["rate_limited"] == 0 and stats["failures"] == 0 and stats["calls"] == 61
    assert 3.0 * 0.95 <= elapsed <= 3.0 * 1.05 + 0.5  # 60 intervals of 50 ms; the start's half second aside
    assert stats["waited_s"] > 0 and waiting() == 0


async def test_a_429_s_retry_after_holds_the_calls_and_is_no_failure(env: pytest.MonkeyPatch) -> None:
    with server_process(latency_s=0.0, rules="population", requests_per_minute=600) as url:  # 10 a second, 10 at once
        answers, [stats], elapsed = await _calls(f"openai:m@{url}", 30)  # the client is not told the limit
    assert all(a.content for a in answers)
    assert stats["failures"] == 0 and stats["rate_limited"] >= 1  # 429s waited out, never a failure
    assert stats["calls"] == 30 + stats["rate_limited"]  # each 429 asked once more, nothing else
    assert elapsed >= 1.0  # Retry-After: 1 (whole seconds) was honoured


def test_limits_are_read_from_the_spec_and_the_scenario_and_checked() -> None:
    from sandbox.core.scenario import ModelConfig
    from sandbox.llm.endpoints import parse_endpoints

    spec = parse_endpoints("m@http://a/v1?requests_per_minute=600&tokens_per_minute=90000")
    assert (spec.requests_per_minute, spec.tokens_per_minute) == (600.0, 90000.0)
    with pytest.raises(ValueError, match="requests_per_minute is a number of a minute above 0"):
        parse_endpoints("m@http://a/v1?requests_per_minute=0")
    config = ModelConfig.model_validate(
        {"spec": "openai:m", "endpoints": ["http://a/v1"], "requests_per_minute": 500, "tokens_per_minute": 1000}
    )
    assert config.spec == "openai:m@http://a/v1?requests_per_minute=500&tokens_per_minute=1000"
    with pytest.raises(ValueError, match="requests_per_minute goes with spec: openai"):
        ModelConfig.model_validate({"spec": "embedded", "requests_per_minute": 500})


def test_the_dry_run_says_how_long_the_calls_take_at_least_under_the_limits(tmp_path: Any) -> None:
    import yaml
    from typer.testing import CliRunner

    from sandbox.cli.runs import app

    data = yaml.safe_load(open("scenarios/population/pd_llm_small.yaml"))
    data["models"]["user"] = {"spec": "openai:m@http://127.0.0.1:9/v1", "requests_per_minute": 6}
    (tmp_path / "limited.yaml").write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(app, ["run", str(tmp_path / "limited.yaml"), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "openai:m@http://127.0.0.1:9/v1?requests_per_minute=6's rate limits" in result.output
    assert "take at least" in result.output and not (tmp_path / "runs").exists()


def test_the_bar_of_calls_says_when_calls_wait_for_a_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from sandbox.core.commands import progress_bar
    from sandbox.llm import rate

    bar = progress_bar(None, rate=True)
    task = bar.add_task("LLM calls", total=10, rate=True)
    column = next(c for c in bar.columns if type(c).__name__ == "RateColumn")
    assert "waiting" not in column.render(bar.tasks[task]).plain  # type: ignore[union-attr]
    monkeypatch.setattr(rate, "_waiting", [12])
    assert "(12 waiting for a rate limit)" in column.render(bar.tasks[task]).plain  # type: ignore[union-attr]
