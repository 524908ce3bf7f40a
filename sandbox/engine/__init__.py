"""The one LangGraph engine: every simulation with steps (a society's epochs, a population's generations) runs on a
graph compiled once, checkpointed after every step in the run's SQLite store (`store.sqlite`), and resumed by one
path (`drive`).

* `sandbox.engine.store`: the store (LangGraph's SQLite checkpointer) and `drive`, which plays a thread of a graph
  to its end from its last checkpoint;
* `sandbox.engine.generations`: the generation graph (pair -> play -> score -> revise -> record) and the
  `GenerationGame` contract a population game implements;
* `sandbox.engine.tables`: the CSV tables a step appends to, cut back to their recorded sizes on resume;
* `sandbox.engine.fork_plan` and `sandbox.engine.fork`: a run forked at a step (the checks and each thread's
  checkpoint at the step, then the fork's directory), `sandbox.engine.replay`: a finished run played again offline,
  its tables compared by `sandbox.engine.table_check` (the game's decisions exactly, measured floats within a
  tolerance), `sandbox.engine.branches`: the branches' headline figures side by side (`sandbox fork`, `replay`,
  `compare`).
"""

from sandbox.engine.generations import (
    GenerationGame,
    GenerationState,
    build_generation_graph,
    generations_done,
    run_generations,
)
from sandbox.engine.store import drive, last_state, open_store
from sandbox.engine.tables import Tables

__all__ = [
    "GenerationGame",
    "GenerationState",
    "Tables",
    "build_generation_graph",
    "drive",
    "generations_done",
    "last_state",
    "open_store",
    "run_generations",
]
