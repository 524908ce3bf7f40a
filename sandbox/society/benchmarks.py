"""The society engine's benchmarks, each printed as a ratio against a baseline measured in the same run.

* concurrency: an epoch of 64 episodes with a fake model that sleeps a fixed
  latency per call, at concurrency 32 and sequentially, against the ideal
  (the episode's critical path, two calls, times 2 waves of 32).
* overhead: an epoch of a 10,000-user society with the scripted model; the
  framework's own time per LLM call (epoch time less the model's own time).
* embedded: the `make run` society on the embedded model with the present
  settings (4 slots) and with this machine's choice, each
  from a cold server: wall time, prompt tokens computed against reused, calls
  per minute; then generated tokens per second with 1, 2 and 4 slots.

The society kind registers them (`sandbox bench concurrency|overhead|embedded`).
The fake and scripted models here produce timing figures, never simulation results.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from sandbox.base.files import read_json
from sandbox.core.scenario_files import parse_scenario
from sandbox.llm.scripted import ScriptedChatModel, scripted
from sandbox.society.runner import ProgressHooks, arun

console = Console()

_STAKE = re.compile(r"Split (\d+) (.+?) between")


def propose_half(messages: list[Any], _: dict[str, Any]) -> str:
    """A proposal of an even split of the stake the last message asks for (a scripted rule)."""
    match = _STAKE.search(str(messages[-1].content))
    assert match, "the propose template changed; update the benchmark's scripted rule"
    amount, currency = int(match.group(1)), match.group(2)
    return f"For the {amount} {currency}, the proposer will get {amount // 2}, and the responder will get {amount - amount // 2}."


def _principle(_: list[Any], kwargs: dict[str, Any]) -> str:
    """The single draw's principle; a search's candidate k gets its own words, so each is replayed."""
    step = kwargs["call"].step or ""
    variant = f" Candidate {step.split('-')[-1]}." if step.startswith("candidate-") else ""
    return f"Revised principle: Share everything equally with everyone.{variant}"


def fake_scai_models(latency_s: float) -> dict[str, ScriptedChatModel]:
    """One scripted model for the user, assistant and meta roles, sleeping `latency_s` per call (timing only).

    One object, so the roles share one concurrency limit, as they share the
    embedded backend in a real run (and "sequential" means one call at a time).
    """
    model = scripted(
        [
            (r"extract a principle", _principle),
            (r"explain what a principle means", _READING),
            (r"reason for your proposal", "Because my principle says so."),
            (r"You are the proposer", propose_half),
            (r"You are the responder", "yes"),
        ],
        latency_s=latency_s,
    )
    return {"user": model, "assistant": model, "meta": model}


# The assistant's reading of its policy (`agents.assistant.read_principle`), as a model without log-probabilities gives it.
_READING = "Under this principle, I keep half and the other player gets half."


def fake_model(latency_s: float) -> ScriptedChatModel:
    """A scripted ultimatum player that sleeps `latency_s` per call."""
    return scripted([(r"You are the proposer", propose_half), (r"You are the responder", "yes")], latency_s=latency_s)


def _society(size: int, episodes: int | None, concurrency: int) -> Any:
    return parse_scenario(
        {
            "name": "bench",
            "concurrency": concurrency,
            "interactions_per_epoch": episodes,
            "society": {"size": size, "norms": [{"norm": "fair", "proportion": 1.0}]},
        },
        "<bench>",
    )


async def time_epoch(scenario: Any, model: ScriptedChatModel) -> float:
    """Seconds from the epoch's pairing to its last finished episode."""
    marks: dict[str, float] = {}
    hooks = ProgressHooks(
        on_epoch_start=lambda *_: marks.setdefault("start", time.perf_counter()),
        on_episode=lambda _: marks.__setitem__("end", time.perf_counter()),
    )
    with tempfile.TemporaryDirectory() as tmp:
        await arun(scenario, out=Path(tmp) / "run", models={"user": model}, hooks=hooks)
    return marks["end"] - marks["start"]


def bench_concurrency(latency_s: float = 0.25, episodes: int = 64, concurrency: int = 32) -> dict[str, float]:
    """Epoch time at `concurrency` and sequentially, against the ideal."""
    calls = 2 * episodes
    waves = calls / concurrency / 2  # each wave of `concurrency` episodes runs a 2-call critical path
    ideal = 2 * latency_s * waves
    concurrent = asyncio.run(time_epoch(_society(2 * episodes, episodes, concurrency), fake_model(latency_s)))
    sequential = asyncio.run(time_epoch(_society(2 * episodes, episodes, 1), fake_model(latency_s)))
    table = Table(title=f"Concurrency: {episodes} episodes, {latency_s * 1000:.0f} ms per call", title_justify="left")
    for column in ("setting", "seconds", "ratio"):
        table.add_column(column, justify="left" if column == "setting" else "right")
    table.add_row(f"ideal (critical path {2 * latency_s:.2f} s x {waves:g})", f"{ideal:.3f}", "1.00")
    table.add_row(
        f"concurrency {concurrency}", f"{concurrent:.3f}", f"{concurrent / ideal:.2f} x ideal (target <= 1.25)"
    )
    table.add_row(
        "sequential",
        f"{sequential:.3f}",
        f"{sequential / concurrent:.1f} x concurrent (expected {calls * latency_s / ideal:.0f})",
    )
    console.print(table)
    return {
        "ideal_s": ideal,
        "concurrent_s": concurrent,
        "sequential_s": sequential,
        "ratio_to_ideal": concurrent / ideal,
        "speedup": sequential / concurrent,
    }


def bench_overhead(size: int = 10_000) -> dict[str, float]:
    """The framework's time per LLM call in an epoch of a `size`-user society.

    The baseline is the scripted model's own time answering those same calls
    (it times itself), measured in the same run.
    """
    model = fake_model(0.0)
    epoch = asyncio.run(time_epoch(_society(size, None, 64), model))
    calls, own = model.calls, model.busy_s
    per_call_ms = (epoch - own) / calls * 1000
    table = Table(title=f"Overhead: one epoch of a {size:,}-user society, scripted model", title_justify="left")
    for column in ("measure", "value"):
        table.add_column(column, justify="left" if column == "measure" else "right")
    table.add_row("LLM calls", f"{calls:,}")
    table.add_row("epoch wall time", f"{epoch:.2f} s")
    table.add_row("model's own time answering them (baseline)", f"{own:.3f} s")
    table.add_row("framework time per call", f"{per_call_ms:.3f} ms (target < 2 ms)")
    table.add_row("epoch / baseline", f"{epoch / own:.1f} x")
    console.print(table)
    return {"calls": calls, "epoch_s": epoch, "model_s": own, "framework_ms_per_call": per_call_ms}


def _throughput(slots: int, requests: int, max_tokens: int) -> float:
    """Generated tokens per second of `requests` calls at once on a server with `slots` slots."""
    from concurrent.futures import ThreadPoolExecutor

    from sandbox.llm.embedded import EmbeddedChatModel, load_server, unload_servers
    from sandbox.llm.embedded_tuning import EmbeddedSettings

    loaded = load_server(EmbeddedChatModel(settings=EmbeddedSettings(slots=slots)).server_settings())

    def one(i: int) -> int:
        request = {
            "messages": [{"role": "user", "content": f"Write a short story about a fox, number {i}."}],
            "max_tokens": max_tokens,
            "temperature": 0.7,
            "seed": i,
        }
        return int(loaded.server.handle_chat_completions(request)["usage"]["completion_tokens"])

    try:
        one(-1)  # warm-up
        started = time.perf_counter()
        with ThreadPoolExecutor(slots) as pool:
            tokens = sum(pool.map(one, range(requests)))
        return tokens / (time.perf_counter() - started)
    finally:
        unload_servers()


def _society_run(scenario: Any, models: dict[str, Any] | None) -> dict[str, Any]:
    """Play `scenario` into a temporary directory; wall time, calls, prompt tokens and answers."""
    import json

    from sandbox.llm.embedded import unload_servers

    unload_servers()  # each setting starts from a cold server: no prompt cached from the run before
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        path = asyncio.run(arun(scenario, out=Path(tmp) / "run", models=models))
        wall = time.perf_counter() - started
        records = [json.loads(line) for line in (path / "transcripts.jsonl").read_text().splitlines()]
        machine = read_json(path / "summary.json").get("embedded_backend")
    unload_servers()
    prompt = sum(r["input_tokens"] for r in records)
    reused = sum(r["prompt_cached_tokens"] for r in records)
    return {
        "wall_s": wall,
        "calls": len(records),
        "prompt_tokens": prompt,
        "reused_tokens": reused,
        "computed_tokens": prompt - reused,
        "machine": machine,
        "answers": {r["call_id"]: r["answer"] for r in records},
    }


# The `make run` scenario, found from the checkout whatever the working directory.
DEFAULT_SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "default.yaml"


def bench_embedded(
    scenario_file: str | Path = DEFAULT_SCENARIO,
    requests: int = 8,
    max_tokens: int = 64,
    slot_counts: tuple[int, ...] = (1, 2, 4),
) -> dict[str, Any]:
    """The `make run` society on the embedded model, the present settings against this machine's choice.

    The present behaviour, measured in the same run: 4 slots, a thread per
    CPU, llama.cpp's prompt cache at its default size and slots chosen by
    prompt similarity. Then generated tokens per second with
    each of `slot_counts` slots (the evidence behind `embedded_tuning.choose_slots`).
    """
    import os

    from sandbox.core.scenario_files import load_scenario
    from sandbox.llm.embedded import EmbeddedChatModel
    from sandbox.llm.embedded_tuning import EmbeddedSettings

    scenario = load_scenario(scenario_file)
    # what the backend did before: 4 slots, a thread per CPU, llama.cpp's default prompt cache (8 GiB)
    present = EmbeddedChatModel(settings=EmbeddedSettings(slots=4, threads=os.cpu_count() or 2, prompt_cache_mib=8192))
    before = _society_run(scenario, {role: present for role in scenario.roles()})
    after = _society_run(scenario, None)  # the scenario's own settings, through its spec, as `sandbox run` does
    compared = len(before["answers"].keys() & after["answers"].keys())  # the same calls, by call id
    same = sum(after["answers"].get(call) == answer for call, answer in before["answers"].items())
    chosen = after["machine"]

    table = Table(
        title=f"Embedded model: the {scenario.name} society ({Path(scenario_file).name}), {after['calls']} calls",
        title_justify="left",
    )
    for column in ("setting", "wall s", "prompt tokens computed", "reused", "calls/min", "ratio"):
        table.add_column(column, justify="left" if column == "setting" else "right")
    for label, figures in (
        (f"present: 4 slots, {present.settings.threads} threads", before),
        (f"tuned: {chosen['slots']} slot(s), {chosen['threads']} threads", after),
    ):
        table.add_row(
            label,
            f"{figures['wall_s']:.1f}",
            f"{figures['computed_tokens']:,} of {figures['prompt_tokens']:,}",
            f"{figures['reused_tokens'] / max(1, figures['prompt_tokens']):.0%}",
            f"{figures['calls'] / figures['wall_s'] * 60:.1f}",
            f"{before['wall_s'] / figures['wall_s']:.2f} x faster" if figures is after else "1.00",
        )
    console.print(table)
    console.print(f"same answers for the same seeds: {same} of {len(before['answers'])} calls")

    rates = {slots: _throughput(slots, requests, max_tokens) for slots in slot_counts}
    throughput = Table(
        title=f"Decoding throughput: {requests} requests of {max_tokens} tokens at once", title_justify="left"
    )
    for column in ("slots", "tokens/s", "ratio"):
        throughput.add_column(column, justify="right")
    for slots, rate in rates.items():
        throughput.add_row(str(slots), f"{rate:.1f}", f"{rate / rates[slot_counts[0]]:.2f}")
    console.print(throughput)
    drop = {"answers"}
    return {
        "present": {k: v for k, v in before.items() if k not in drop},
        "tuned": {k: v for k, v in after.items() if k not in drop},
        "same_answers": same,
        "compared_calls": compared,
        "speedup": before["wall_s"] / after["wall_s"],
        "tokens_per_s": rates,
    }
