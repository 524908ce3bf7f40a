"""Shared test doubles: a scripted ultimatum player and small scenarios. No test touches the network."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sandbox.llm.scripted import ScriptedChatModel, scripted
from sandbox.scenario import Scenario, parse_scenario

STAKE = re.compile(r"Split (\d+) (\S+) between")
SHARES = {"selfish": 0.1, "fair": 0.5, "altruistic": 0.9}


def norm_of(messages: list[Any]) -> str:
    system = str(messages[0].content)
    for norm in SHARES:
        if f"Be {norm}" in system:
            return norm
    raise AssertionError(f"no library norm in the system prompt: {system}")


def scripted_propose(messages: list[Any], kwargs: dict[str, Any]) -> str:
    """A proposal that follows the proposer's norm exactly (read from its system prompt)."""
    match = STAKE.search(str(messages[-1].content))
    assert match, "the last message is not a proposal request"
    amount, currency = int(match.group(1)), match.group(2)
    responder = round(amount * SHARES[norm_of(messages)])
    return f"For the {amount} {currency}, the proposer will get {amount - responder}, and the responder will get {responder}."


def scripted_respond(messages: list[Any], kwargs: dict[str, Any]) -> str:
    """Selfish responders reject offers under 20%; everyone else accepts."""
    match = re.search(r"you get (\d+) \S+ .*?and the proposer gets (\d+)", str(messages[-1].content))
    assert match, "the last message is not a decision request"
    mine, theirs = int(match.group(1)), int(match.group(2))
    if norm_of(messages) == "selfish" and mine < 0.2 * (mine + theirs):
        return "no"
    return "yes"


def ultimatum_model(latency_s: float = 0.0) -> ScriptedChatModel:
    return scripted(
        [(r"You are the proposer", scripted_propose), (r"You are the responder", scripted_respond)],
        latency_s=latency_s,
    )


def small_scenario(**changes: Any) -> Scenario:
    data: dict[str, Any] = {
        "name": "small",
        "seed": 3,
        "runs": 2,
        "epochs": 2,
        "concurrency": 8,
        "society": {
            "size": 12,
            "norms": [
                {"norm": "selfish", "proportion": 0.5},
                {"norm": "altruistic", "proportion": 0.25},
                {"norm": "fair", "proportion": 0.25},
            ],
        },
    }
    data.update(changes)
    return parse_scenario(data, "<test>")


@pytest.fixture
def model() -> ScriptedChatModel:
    return ultimatum_model()
