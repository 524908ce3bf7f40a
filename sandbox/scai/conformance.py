"""The society kind's conformance case (`sandbox.core.conformance`): Social Contract AI over 2 runs of 2 epochs in a
society of 16 selfish users, on scripted models (tests only, never a simulation result): users who follow their
norm exactly (read from the system prompt), an assistant whose offer the first keyword of its policy decides, and a
MetaLM that copies the users' mean offer into a policy. The tests use the same doubles.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.core.conformance import ConformanceCase
from sandbox.llm.scripted import ScriptedChatModel, scripted

__all__ = [
    "CASE",
    "POLICY_FOR_SHARE",
    "SHARES",
    "norm_of",
    "proposal_offering",
    "scai_models",
    "scripted_assistant_propose",
    "scripted_meta",
    "scripted_propose",
    "scripted_reading",
    "scripted_respond",
    "ultimatum_model",
]

STAKE = re.compile(r"Split (\d+) (.+?) between")
SHARES = {"selfish": 0.1, "fair": 0.5, "altruistic": 0.9}


def norm_of(messages: list[Any]) -> str:
    system = str(messages[0].content)
    for norm in SHARES:
        if f"Be {norm}" in system:
            return norm
    raise AssertionError(f"no library norm in the system prompt: {system}")


def proposal_offering(messages: list[Any], share: float) -> str:
    """The canonical proposal that offers `share` of the stake asked for in the last message."""
    match = STAKE.search(str(messages[-1].content))
    assert match, "the last message is not a proposal request"
    amount, currency = int(match.group(1)), match.group(2)
    responder = round(amount * share)
    return f"For the {amount} {currency}, the proposer will get {amount - responder}, and the responder will get {responder}."


def scripted_propose(messages: list[Any], kwargs: dict[str, Any]) -> str:
    """A proposal that follows the proposer's norm exactly (read from its system prompt)."""
    return proposal_offering(messages, SHARES[norm_of(messages)])


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


# Social Contract AI: an assistant that reads its policy, a MetaLM that reads the users.
POLICY_SHARES = {"yourself": 0.1, "equally": 0.5, "others": 0.9}
POLICY_FOR_SHARE = {
    0.1: "Look after yourself and keep nearly all.",
    0.5: "Share everything equally with everyone.",
    0.9: "Put others first and give them nearly all.",
}
PROPOSAL = re.compile(r"proposer will get (\d+), and the responder will get (\d+)")


def policy_of(messages: list[Any]) -> str:
    match = re.search(r"Your principle: (.*)", str(messages[0].content))
    assert match, "no policy in the assistant's system prompt"
    return match.group(1)


def assistant_share(policy: str) -> float:
    """The scripted assistant's offer: the first keyword of its policy decides; 0.5 otherwise."""
    for word, share in POLICY_SHARES.items():
        if word in policy:
            return share
    return 0.5


def scripted_reading(messages: list[Any], kwargs: dict[str, Any]) -> str:
    """The reading of a policy (`agents.assistant.read_principle`): the statement of its scripted share."""
    from agents.assistant import STANCES

    policy = re.search(r'Principle: "(.*)"', str(messages[-1].content))
    assert policy, "no principle in the reading's last message"
    kept = 1 - assistant_share(policy.group(1))
    stance = next(s for s in STANCES if s.low <= kept <= s.high)
    return f"Under this principle, {stance.statement}"


def scripted_assistant_propose(messages: list[Any], kwargs: dict[str, Any]) -> str:
    return proposal_offering(messages, assistant_share(policy_of(messages)))


def scripted_meta(messages: list[Any], kwargs: dict[str, Any]) -> str:
    """A MetaLM that copies the users: the mean share users offered among themselves, mapped to a policy."""
    text = str(messages[-1].content)
    users = text.split("Next, analyze")[0]
    shares = [int(r) / (int(p) + int(r)) for p, r in PROPOSAL.findall(users)]
    if not shares:
        return "Revised principle: Share everything equally with everyone."
    mean = sum(shares) / len(shares)
    nearest = min(POLICY_FOR_SHARE, key=lambda s: abs(s - mean))
    return f"Revised principle: {POLICY_FOR_SHARE[nearest]}"


def scai_models(latency_s: float = 0.0) -> dict[str, ScriptedChatModel]:
    """Scripted user, assistant and meta models (tests and benchmarks only)."""
    assistant = scripted(
        [
            (r"explain what a principle means", scripted_reading),
            (r"reason for your proposal", "Because my principle says so."),
            (r"You are the proposer", scripted_assistant_propose),
            (r"You are the responder", "yes"),
        ],
        latency_s=latency_s,
    )
    meta = scripted([(r"extract a principle", scripted_meta)], latency_s=latency_s)
    return {"user": ultimatum_model(latency_s), "assistant": assistant, "meta": meta}


def _scenario(tmp: Path) -> Any:
    from sandbox.core.scenario_files import parse_kind

    data = {
        "name": "scai-conformance",
        "seed": 5,
        "runs": 2,
        "epochs": 2,
        "society": {"size": 16, "norms": [{"norm": "selfish", "proportion": 1.0}]},
        "assistant": {"initial_policy": "Put others first and give them nearly all."},
    }
    return parse_kind("society", data)


def _hooks(tick: Callable[[], None]) -> Any:
    from sandbox.society.runner import ProgressHooks

    return ProgressHooks(on_episode=lambda _: tick())


CASE = ConformanceCase(
    scenario=_scenario,
    hooks=_hooks,
    tables=("episodes.csv", "metrics.csv", "epochs.csv", "policies.jsonl"),
    models=scai_models,
)
