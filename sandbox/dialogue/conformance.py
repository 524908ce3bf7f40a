"""The dialogue kind's conformance case (`sandbox.core.conformance`): the instructed ultimatum game of two players,
two messages, solved by CFR, played by a scripted player and classifier (tests only).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.core.conformance import ConformanceCase
from sandbox.llm.scripted import scripted

__all__ = ["CASE", "ULTIMATUM", "style", "ultimatum_model"]

ULTIMATUM = {
    "name": "dialogue-test",
    "seed": 3,
    "concurrency": 8,
    "dialogue": {
        "domain": {"kind": "ultimatum", "amount": 10, "currency": "dollars"},
        "players": ["Alice", "Bob"],
        "instructions": [["generous", "greedy", "any"], ["tough", "lenient", "any"]],
        "max_messages": 2,
        "seeds_per_message": 2,
    },
    "solver": {"iterations": 500},
}


def style(messages: list[Any]) -> str:
    return re.search(r"Style: (\w+)", str(messages[-1].content)).group(1)  # type: ignore[union-attr]


def ultimatum_model(
    proposals: dict[str, int] | None = None,
    accept: Callable[[str, int], bool] | None = None,
    *,
    ignore_instructions: bool = False,
    latency_s: float = 0.0,
) -> Any:
    """A scripted ultimatum player (and classifier): the proposer keeps `proposals[style]` of 10 and makes a remark;
    the responder accepts by `accept(style, offered)`; the classifier names the style from the remark."""
    proposals = proposals or {"generous": 4, "greedy": 9, "any": 5}
    accept = accept or (lambda s, offered: s == "lenient" or offered >= 5 or (s == "any" and offered >= 2))

    def propose(messages: list[Any], kw: dict[str, Any]) -> str:
        s = "any" if ignore_instructions else style(messages)
        keep = proposals.get(s, 5)
        return f"For the 10 dollars, the proposer will get {keep}, and the responder will get {10 - keep}. ({s})"

    def respond(messages: list[Any], kw: dict[str, Any]) -> str:
        s = "any" if ignore_instructions else style(messages)
        offered = int(re.search(r"you get (\d+)", str(messages[-1].content)).group(1))  # type: ignore[union-attr]
        return f"{'yes' if accept(s, offered) else 'no'}. ({s})"

    def classify(messages: list[Any], kw: dict[str, Any]) -> str:
        return re.search(r"\((\w+)\)", str(messages[-1].content)).group(1)  # type: ignore[union-attr]

    return scripted(
        [
            (r"Which one does the message follow", classify),
            (r"Propose your split", propose),
            (r"Do you accept", respond),
        ],
        latency_s=latency_s,
    )


def _scenario(tmp: Path) -> Any:
    from sandbox.core.scenario_files import parse_kind

    return parse_kind("dialogue", ULTIMATUM, "conformance.yaml")


def _hooks(tick: Callable[[], None]) -> Any:
    from sandbox.dialogue.run import SolveHooks

    return SolveHooks(on_advance=lambda n: tick())


def _models() -> dict[str, Any]:
    model = ultimatum_model()
    return {"players": model, "judge": model}


CASE = ConformanceCase(scenario=_scenario, hooks=_hooks, tables=("dialogues.csv", "policy.csv"), models=_models)
