"""The population kind's steps (`sandbox.core.steps.Steps`): a step is a generation; a fork may change the revision,
the game's settings, the models and the number of generations at any generation, and edit the population's state
(`state.PATH`, a path into what the game holds between generations; each game's entry gives an example,
`GameEntry.edits`, and its plug-in's `edit_state` what it makes of one); the members, their shares, the network and
the seed build the population at generation 0, so only a fork at 0 changes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from sandbox.core.steps import StateEdit, Steps, set_path
from sandbox.population.registry import games

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.graph.state import CompiledStateGraph

    from sandbox.engine.generations import GenerationState
    from sandbox.population.scenario import PopulationScenario

__all__ = ["STEPS"]


def _graph(checkpointer: BaseCheckpointSaver[str], scenario: object) -> CompiledStateGraph[GenerationState]:
    from sandbox.engine.generations import build_generation_graph

    return build_generation_graph(checkpointer)


def _edit(values: Mapping[str, object], name: str, value: object, scenario: PopulationScenario) -> StateEdit:
    """`state.NAME=VALUE`: the value at path NAME in the population's state set (to a value of the same type), or
    what the game's own `edit_state` makes of it (a norm text: a norm of its own, in its norms); either way checked
    against the game's typed population."""
    from sandbox.population.registry import plugin_for

    agents = values.get("agents")
    if not isinstance(agents, dict | list):
        raise ValueError(
            "this game holds its population packed (scripted strategies); change the members at generation 0"
        )
    plugin = plugin_for(scenario.population.game)
    own = getattr(plugin, "edit_state", None)
    if own is not None:
        generation = values.get("generation", 0)
        edit = own(agents, name, value, generation if isinstance(generation, int) else 0)
    else:
        edit = StateEdit({"agents": set_path(agents, name, value, same_type=True)})
    plugin.check_agents(edit.update["agents"], name)  # the edited population is still of the game's type
    return edit


def series(path: Path) -> pd.DataFrame:
    """The run's headline figure per generation (generations.csv's first headline column)."""
    from sandbox.base.files import read_csv

    table = read_csv(Path(path) / "generations.csv")
    headlines = [entry.headline for entry in games().values()]  # a run's generations.csv has its game's
    column = next((c for c in headlines if c in table.columns), None)
    if column is None:
        return pd.DataFrame(columns=["step", "run", "figure", "value"])
    return pd.DataFrame(
        {"step": table["generation"], "run": 0, "figure": column.replace("_", " "), "value": table[column]}
    )


STEPS = Steps(
    unit="generation",
    key="generation",
    count="population.generations",
    count_key="generations",
    threads=lambda scenario: ["population"],
    graph=_graph,
    stopped_key="stopped",
    redo="revise",
    fixed=(
        "seed",
        "population.agents",
        "population.members",
        "population.network",
        "population.game.kind",
        "population.revision.check",
        # each game's own (GameEntry.fixed): the matrix and naming games' play; the naming game's words (the
        # agents' names: committed words, memories, a scripted game's inventories) and prepared agents
        *sorted({f"population.game.{name}" for entry in games().values() for name in entry.fixed}),
    ),
    edit=_edit,
    edits="state.PATH into the population's state, e.g. "
    + ", ".join(f"{entry.edits} ({kind})" for kind, entry in games().items() if entry.edits),
    series=series,
)
