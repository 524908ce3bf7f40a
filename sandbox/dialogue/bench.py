"""`sandbox bench dialogue`: expanding a dialogue tree a level at a time, against one call at a time.

A fake model at a fixed latency answers every prompt and seed with a new
message; the target (issue 13) is an expansion of depth d in at most 1.3 x d
x the latency when the concurrency limit is above the widest level.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from langchain_core.messages import HumanMessage
from rich.console import Console
from rich.table import Table

from sandbox.dialogue.expand import expand
from sandbox.dialogue.game import DialogueGame
from sandbox.dialogue.llm_calls import StackModels
from sandbox.llm.resolve import ModelStack
from sandbox.llm.scripted import ScriptedChatModel
from sandbox.rules.dialogue import Outcome, Prompt, Setup

console = Console()


class _Talk:
    """A bench-only dialogue domain: free talk to a fixed depth, paid nothing (the tree's shape is all that counts)."""

    name = "talk"
    zero_sum = False

    def message(self, setup: Any, speaker: int, instruction: str, dialogue: tuple[Any, ...]) -> Prompt:
        said = " / ".join(m.text for m in dialogue)
        return Prompt((HumanMessage(f"talk after [{said}] style {instruction}"),))

    def over(self, setup: Any, dialogue: tuple[Any, ...]) -> None:
        return None

    def payoffs(self, setup: Any, dialogue: tuple[Any, ...]) -> Outcome:
        return Outcome((0.0, 0.0))

    def payoff_range(self) -> tuple[float, float]:
        return (0.0, 0.0)


def _talk_expansion(depth: int, latency_s: float, concurrency: int, concurrent: bool) -> tuple[float, Any]:
    def answer(messages: list[Any], kwargs: dict[str, Any]) -> str:
        return f"{len(str(messages[-1].content))}-{kwargs.get('seed')}"  # every prompt and seed a new message

    model = ScriptedChatModel(rules=[(r"talk after", answer)], latency_s=latency_s)
    stack = ModelStack(cache=None, sinks=[], concurrency=concurrency)
    setup = Setup(("A", "B"), ({}, {}))
    game = DialogueGame(_Talk(), (setup,), (("calm", "any"), ("calm", "any")), depth, (1, 2))
    started = time.perf_counter()
    tree = asyncio.run(expand(game, StackModels(stack.for_role("players", "", {}, given=model)), concurrent=concurrent))
    return time.perf_counter() - started, tree


def bench_dialogue(latency_s: float = 0.05, depth: int = 4, concurrency: int = 512) -> dict[str, float]:
    """Expanding a dialogue tree of `depth` levels: a level at a time, concurrently, against one call at a time.

    The target (issue 13): with the concurrency limit above the widest level, expansion takes at most
    1.3 x depth x latency.
    """
    concurrent_s, tree = _talk_expansion(depth, latency_s, concurrency, True)
    sequential_s, _ = _talk_expansion(depth, latency_s, concurrency, False)
    calls = tree.calls["messages"]
    ideal = depth * latency_s
    table = Table(
        title=f"Dialogue tree expansion: depth {depth}, {calls} messages (widest level "
        f"{4**depth}), {latency_s * 1000:.0f} ms per call, limit {concurrency}",
        title_justify="left",
    )
    for column in ("setting", "seconds", "ratio"):
        table.add_column(column, justify="left" if column == "setting" else "right")
    table.add_row("ideal (depth x latency)", f"{ideal:.3f}", "1.00")
    table.add_row(
        "a level at a time, concurrently",
        f"{concurrent_s:.3f}",
        f"{concurrent_s / ideal:.2f} x depth x latency (target <= 1.3)",
    )
    table.add_row("one call at a time", f"{sequential_s:.3f}", f"{sequential_s / concurrent_s:.1f} x concurrent")
    console.print(table)
    return {
        "ideal_s": ideal,
        "concurrent_s": concurrent_s,
        "sequential_s": sequential_s,
        "calls": calls,
        "ratio_to_ideal": concurrent_s / ideal,
        "speedup": sequential_s / concurrent_s,
    }
