"""The nodes Social Contract AI adds to the society graph (through `sandbox.scai.layer`): the first policy, and the meta step.

Policies are versioned by the epoch they are played in: version k guides the
assistant through epoch k. Version 0 is given or drawn from a seeded list;
version k+1 is written by the MetaLM from epoch k's interactions (or a longer
window) and version k. Each record keeps the evidence (episode ids) and a
word diff against the previous version.
"""

from __future__ import annotations

import difflib
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from agents.assistant import library_policies
from agents.meta import Interaction
from sandbox.graph.context import SocietyContext
from sandbox.graph.state import SocietyState
from sandbox.llm.contracts import CallInfo
from sandbox.seeding import Branch, generator, seed_node

# The assistant's agent id; two copies that meet are `assistant-0` and `assistant-1`.
ASSISTANT = "assistant"
COPIES = (f"{ASSISTANT}-0", f"{ASSISTANT}-1")


def word_diff(old: str, new: str) -> str:
    """A word diff in git's style: `[-removed-]` and `{+added+}`; empty when equal.

    >>> word_diff("Always help others.", "Always help yourself.")
    'Always help [-others.-] {+yourself.+}'
    """
    if old == new:
        return ""
    a, b = old.split(), new.split()
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(" ".join(a[i1:i2]))
        if op in ("delete", "replace"):
            out.append("[-" + " ".join(a[i1:i2]) + "-]")
        if op in ("insert", "replace"):
            out.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(out)


def _policy_record(run: int, version: int, policy: str, **fields: Any) -> dict[str, Any]:
    return {"run": run, "version": version, "epoch": version, "policy": policy, "source": "meta",
            "legal": True, "evidence": [], "diff": "", "answer": None, "illegal_answers": 0, **fields}  # fmt: skip


def init_policy(state: SocietyState, runtime: Runtime[SocietyContext]) -> dict[str, Any]:
    """Version 0: the scenario's initial policy, or one drawn (seeded, per run) from the list."""
    ctx = runtime.context
    config = ctx.scenario.assistant
    assert config is not None, "init_policy runs only in scenarios with an assistant"
    run = state["run"]
    if config.prompt == "none":  # a distilled student: no policy, now or later
        record = _policy_record(run, 0, "", source="none")
        ctx.layer.on_policy(record)
        return {"policies": [record]}
    if config.initial_policy is not None:
        policy = config.initial_policy
    else:
        choices = list(config.initial_policies or library_policies())
        policy = choices[int(generator(ctx.scenario.seed, run, Branch.POLICY).integers(len(choices)))]
    record = _policy_record(run, 0, policy, source="initial")
    ctx.layer.on_policy(record)
    return {"policies": [record]}


def _observed(episode: dict[str, Any]) -> Interaction:
    """An episode as the MetaLM reads it: the proposal as said, and the decision (or the illegal answer)."""
    if episode["decision"] is not None:
        response: str | None = episode["decision"]
    elif episode["proposal_legal"]:
        response = f"{episode['response']} (not a legal answer)"
    else:
        response = None
    proposal = episode["proposal"] if episode["proposal_legal"] else f"{episode['proposal']} (not a legal proposal)"
    return Interaction(
        episode=episode["episode"],
        proposer_is_assistant=str(episode["proposer"]).startswith(ASSISTANT),
        responder_is_assistant=str(episode["responder"]).startswith(ASSISTANT),
        proposal=proposal,
        response=response,
        offered_share=episode["offered_share"],
        decision=episode["decision"],
    )


def evidence(state: SocietyState, runtime: Runtime[SocietyContext]) -> list[Interaction]:
    """The interactions the MetaLM reads before writing the policy of epoch `state["epoch"]`.

    The window's episodes (the last `history_epochs` epochs, or all), shuffled
    with the run's seeded generator and cut to `max_interactions`.
    """
    ctx = runtime.context
    config = ctx.scenario.assistant
    assert config is not None
    epoch = state["epoch"]
    first = 0 if config.history_epochs == 0 else epoch - config.history_epochs
    episodes = sorted(
        (e for e in state["episodes"] if first <= e["epoch"] < epoch), key=lambda e: (e["epoch"], e["index"])
    )
    rng = generator(ctx.scenario.seed, state["run"], Branch.META, epoch)
    order = rng.permutation(len(episodes))[: config.max_interactions]
    return [_observed(episodes[i]) for i in order]


def _attempt_seeds(root: int, run: int, epoch: int, attempts: int) -> list[int]:
    node = seed_node(root, run, Branch.META, epoch)
    return [int(np.random.SeedSequence(node.entropy, spawn_key=(*node.spawn_key, a)).generate_state(1)[0])
            for a in range(attempts)]  # fmt: skip


async def meta(state: SocietyState, runtime: Runtime[SocietyContext]) -> dict[str, Any]:
    """The MetaLM writes the policy of the coming epoch from the observed interactions and the last policy."""
    ctx = runtime.context
    assert ctx.layer is not None and ctx.scenario.assistant is not None
    run, epoch = state["run"], state["epoch"]
    previous = state["policies"][-1]
    if ctx.scenario.assistant.prompt == "none":  # no policy to revise: the MetaLM is not asked
        record = _policy_record(run, epoch, "", source="none")
        ctx.layer.on_policy(record)
        return {"policies": [record]}
    observed = evidence(state, runtime)
    call = CallInfo(role="meta", agent="meta", run=run, epoch=epoch - 1, episode=f"r{run}-policy{epoch}", step="revise")
    revision = await ctx.layer.meta.revise(
        previous["policy"],
        observed,
        seeds=_attempt_seeds(ctx.scenario.seed, run, epoch, ctx.layer.meta.max_reasks + 1),
        call=call,
    )
    policy = revision.policy if revision.policy is not None else previous["policy"]
    record = _policy_record(
        run,
        epoch,
        policy,
        legal=revision.policy is not None,
        evidence=[i.episode for i in observed],
        diff=word_diff(previous["policy"], policy),
        answer=revision.answer,
        illegal_answers=revision.illegal_answers,
    )
    ctx.layer.on_policy(record)
    return {"policies": [record]}
