"""The society kind's steps (`sandbox.core.steps.Steps`): a step is an epoch of every independent run; a fork may
change the users' norms and manners, the game, the assistant's revision and the models, the number of epochs at any
epoch, and edit the assistant's policy (`state.policy=TEXT`: the policy played from the fork's epoch on, in every
run); the size of the society, its network, the seed, the runs and the assistant's first policy are read when a run
starts, so only a fork at epoch 0 changes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from sandbox.core.steps import StateEdit, Steps

__all__ = ["STEPS"]


def _graph(checkpointer: Any, scenario: Any) -> Any:
    from sandbox.society.graph import build_society_graph

    roles = dict.fromkeys(scenario.roles())  # the layer's nodes and routes, no model called
    return build_society_graph(checkpointer, layer=scenario.graph_layer(roles))


def _edit(values: Mapping[str, Any], name: str, value: Any, scenario: Any) -> StateEdit:
    """`state.policy=TEXT`: the assistant's policy from the fork's epoch on (the last version replaced)."""
    from langgraph.types import Overwrite

    from sandbox.base.words import word_diff

    if name != "policy":
        raise ValueError("a society run takes one state edit: state.policy=TEXT (the assistant's policy)")
    policies = list(values.get("policies") or [])
    if not policies:
        raise ValueError("this society has no assistant, so no policy to edit")
    if not isinstance(value, str) or not value.strip():
        raise ValueError("the policy is a text")
    if len(policies) <= int(values.get("epoch", 0)):
        raise ValueError(
            f"at epoch {values.get('epoch')} the run has played its epochs: the policy of the next is written by the "
            "MetaLM when the run goes on; set it by forking at an epoch the run played"
        )
    last = policies[-1]
    before = policies[-2]["policy"] if len(policies) > 1 else ""
    edited = {
        **last,
        "policy": value,
        "source": "fork",
        "evidence": [],
        "answer": None,
        "diff": word_diff(before, value),
    }
    return StateEdit({"policies": Overwrite([*policies[:-1], edited])})


def series(path: Path) -> pd.DataFrame:
    """Per run and epoch, the assistant's mean offered share as proposer (a society with no assistant: the users')."""
    from sandbox.base.files import read_csv

    episodes = read_csv(Path(path) / "episodes.csv")
    legal = episodes[episodes["proposal_legal"].astype(bool)]
    assistant = legal[legal["interaction"] == "assistant-proposer"]
    chosen, figure = (assistant, "assistant offered share") if len(assistant) else (legal, "offered share")
    frame = chosen.assign(offered_share=pd.to_numeric(chosen["offered_share"], errors="coerce"))
    means = frame.groupby(["run", "epoch"], as_index=False)["offered_share"].mean()
    return pd.DataFrame(
        {"step": means["epoch"], "run": means["run"], "figure": figure, "value": means["offered_share"]}
    )


STEPS = Steps(
    unit="epoch",
    key="epoch",
    count="epochs",
    count_key="epochs",
    threads=lambda scenario: [f"run-{run}" for run in range(scenario.runs)],
    graph=_graph,
    fixed=(
        "seed",
        "runs",
        "society.size",
        "society.network",
        "society.guided",
        "assistant.initial_policy",
        "assistant.initial_policies",
        "assistant.prompt",
        "assistant.oracle",
    ),
    edit=_edit,
    closing=("final-propose",),
    later=("evaluation.csv",),
    edits="state.policy=TEXT (the assistant's policy from the fork's epoch on)",
    series=series,
)
