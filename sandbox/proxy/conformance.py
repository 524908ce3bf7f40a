"""The proxy kind's conformance case (`sandbox.core.conformance`): a labeling run of 8 ultimatum items, judged by a
scripted judge (tests only) that knows the user's rule when the prompt states it and says Yes to everything without.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from sandbox.core.conformance import ConformanceCase
from sandbox.llm.scripted import ScriptedReply, scripted

__all__ = ["CASE", "ITEM", "last_offer", "reply", "rule_judge"]

ITEM = re.compile(
    r"P1 proposes a split of \$([\d.]+) for P1 and \$([\d.]+) for P2\. P2 rejected this offer\.[^\n]*(\n[^\n]*)?$"
)


def last_offer(messages: list[Any]) -> tuple[float, float]:
    match = ITEM.search(str(messages[-1].content))
    assert match, "the prompt does not end with the test item"
    return float(match[1]), float(match[2])


def reply(yes: bool, p_yes: float) -> ScriptedReply:
    """A yes/no answer with log-probabilities: P(Yes) = p_yes, P(No) = 0.9 - p_yes (0.1 left for other tokens)."""
    top = {"Yes": math.log(p_yes), "No": math.log(0.9 - p_yes), "The": math.log(0.1)}
    return ScriptedReply(
        "Yes" if yes else "No", ({"token": "Yes" if yes else "No", "logprob": top["Yes" if yes else "No"], "top": top},)
    )


def rule_judge(messages: list[Any], kwargs: dict[str, Any]) -> ScriptedReply | str:
    """Knows the rule when it is stated (examples or a description); says Yes to everything without one."""
    if "desirable outcome is defined" not in str(messages[-1].content):
        return reply(True, 0.6)
    p1, p2 = last_offer(messages)
    reject = p2 / (p1 + p2) < 0.3
    return reply(reject, 0.85 if reject else 0.2)


def _scenario(tmp: Path) -> Any:
    from sandbox.core.scenario_files import parse_kind

    block = {"task": "ultimatum", "objective": {"name": "reject_below_share", "threshold": 0.3}, "test_items": 8}
    return parse_kind("proxy", {"name": "proxy-conformance", "seed": 5, "proxy": block})


def _hooks(tick: Any) -> Any:
    from sandbox.proxy.label_steps import LabelHooks

    return LabelHooks(on_item=tick)


CASE = ConformanceCase(
    scenario=_scenario,
    hooks=_hooks,
    tables=("labels.csv", "accuracy.csv"),
    models=lambda: {"judge": scripted([(r"Ultimatum", rule_judge)])},
)
