"""The generation graph: every population runs on it, one generation a pass, checkpointed after every step (a finished
generation but the last is pruned to its boundary, `sandbox.engine.pruned_store`).

    START -> pair -> play -> score -> revise -> record -> pair ... -> record -> END

A population game (`GenerationGame`) supplies what each step does; the engine runs the steps, saves the state
after each in the run's store, writes the game's rows to its tables in `record` (cut back first to the sizes the
state holds, so a step run again after a kill writes its rows once), and calls the progress hook. Every node works
on the whole population at once (a scripted population's vectorised play is one step, never one per agent); an
LLM game's calls within a step are gathered concurrently through the LLM layer.

The state is plain data (numbers, strings, lists, dicts: no numpy arrays, no tuples kept as such), so the
checkpointer stores it without custom types and a resumed run reads back exactly what was written. What a step
hands the next lives in the state only until `record` has written the generation (`pairs`, `played`, `scores`,
`revised` are cleared then), so the store holds one generation's work at a time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypedDict

import numpy as np
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from sandbox.engine.pruned_store import GenerationStore
from sandbox.engine.store import drive, interrupts_as_errors, last_state, open_store
from sandbox.engine.tables import Row, Tables

__all__ = [
    "GenerationContext",
    "GenerationGame",
    "GenerationState",
    "Rows",
    "build_generation_graph",
    "generations_done",
    "run_generations",
]

THREAD = "population"
# by table: its rows (sequences, or records by column), or an int array; rows may come from a generator, which the
# table's write consumes (a million agents' rows written as they are made, never held all at once)
Rows = Mapping[str, Iterable[Row] | np.ndarray]


class GenerationState(TypedDict, total=False):
    """The state of a population between steps.

    Attributes:
        generation: The generation being played (0-based); equals `generations` when done.
        generations: Generations to play.
        agents: The game's population as the generation starts (its own plain data).
        pairs: Who meets whom this generation (`GenerationGame.pair`).
        played: What the generation's play gave (`GenerationGame.play`).
        scores: The generation's scores (`GenerationGame.score`).
        revised: The next generation's agents and the revision's records (`GenerationGame.revise`).
        tables: Each table's size in bytes after the last recorded generation.
        seconds: Seconds the generation's steps have taken so far (a step run again after a kill counts again).
        stopped: The game ended before its last generation (a consensus, a collapse).
    """

    generation: int
    generations: int
    agents: Any
    pairs: Any
    played: Any
    scores: Any
    revised: Any
    tables: dict[str, int]
    seconds: float
    stopped: bool


class GenerationGame(Protocol):
    """What a population game supplies the engine: its tables, a new run's population, and each step of a
    generation. `g` is the generation; every argument and result is plain data (it is checkpointed).

    A step never changes its arguments in place (it copies what it changes): they are the state the last
    checkpoint holds, which LangGraph may still be writing while the next step runs."""

    columns: Mapping[str, Sequence[str]]  # every table the run writes, by file name, with its header

    def start(self) -> tuple[Any, Rows]:
        """A new run's population and its first rows (the network's edges, the first norms)."""

    def pair(self, agents: Any, g: int) -> Any:
        """Who meets whom in generation `g`."""

    async def play(self, agents: Any, g: int, pairs: Any) -> Any:
        """Play generation `g`'s matches (an LLM game's calls gathered concurrently)."""

    def score(self, agents: Any, g: int, played: Any) -> Any:
        """The generation's scores."""

    async def revise(self, agents: Any, g: int, played: Any, scores: Any) -> Any:
        """The revision after generation `g`: what `next_agents` and `record` read (the last generation's too, for
        a game whose revision writes rows; a game with none returns its agents)."""

    def record(self, state: GenerationState, seconds: float) -> Rows:
        """Generation `state["generation"]`'s rows by table, from the state its steps left; `seconds` so far."""

    def next_agents(self, state: GenerationState) -> Any:
        """The population the next generation starts from."""

    def stopped(self, state: GenerationState) -> bool:
        """Whether the run ends after this generation although generations are left (a consensus, a collapse)."""


@dataclass
class GenerationContext:
    """What stays fixed while a population runs: its game, its tables, the progress hook."""

    game: GenerationGame
    tables: Tables
    on_generation: Callable[[int], Any] = field(default=lambda g: None)


def _timed(state: GenerationState, started: float, **update: Any) -> dict[str, Any]:
    return {**update, "seconds": state.get("seconds", 0.0) + time.perf_counter() - started}


def pair(state: GenerationState, runtime: Runtime[GenerationContext]) -> dict[str, Any]:
    started = time.perf_counter()
    return _timed(state, started, pairs=runtime.context.game.pair(state["agents"], state["generation"]))


async def play(state: GenerationState, runtime: Runtime[GenerationContext]) -> dict[str, Any]:
    started = time.perf_counter()
    played = await runtime.context.game.play(state["agents"], state["generation"], state["pairs"])
    return _timed(state, started, played=played)


def score(state: GenerationState, runtime: Runtime[GenerationContext]) -> dict[str, Any]:
    started = time.perf_counter()
    return _timed(
        state, started, scores=runtime.context.game.score(state["agents"], state["generation"], state["played"])
    )


async def revise(state: GenerationState, runtime: Runtime[GenerationContext]) -> dict[str, Any]:
    started = time.perf_counter()
    revised = await runtime.context.game.revise(state["agents"], state["generation"], state["played"], state["scores"])
    return _timed(state, started, revised=revised)


def record(state: GenerationState, runtime: Runtime[GenerationContext]) -> dict[str, Any]:
    """Write the generation's rows (after cutting the tables back to the sizes the state holds) and move on."""
    ctx, g = runtime.context, state["generation"]
    rows = ctx.game.record(state, state.get("seconds", 0.0))  # the seconds of the generation's steps
    sizes = ctx.tables.append(state["tables"], rows)
    stopped = ctx.game.stopped(state)
    following = ctx.game.next_agents(state)
    ctx.on_generation(g)
    return {
        "generation": g + 1,
        "agents": following,
        "pairs": None,
        "played": None,
        "scores": None,
        "revised": None,
        "tables": sizes,
        "seconds": 0.0,
        "stopped": stopped,
    }


def next_generation(state: GenerationState) -> Literal["pair", "__end__"]:
    """Router: another generation, or the end (all played, or the game stopped)."""
    return "__end__" if finished(state) else "pair"


def finished(state: Mapping[str, Any]) -> bool:
    return bool(state.get("stopped")) or state["generation"] >= state["generations"]


def build_generation_graph(checkpointer: Any | None = None) -> Any:
    """Compile the generation graph, optionally with a checkpointer."""
    builder = StateGraph(GenerationState, context_schema=GenerationContext)
    for name, node in (("pair", pair), ("play", play), ("score", score), ("revise", revise), ("record", record)):
        builder.add_node(name, node)
    builder.add_edge(START, "pair")
    builder.add_edge("pair", "play")
    builder.add_edge("play", "score")
    builder.add_edge("score", "revise")
    builder.add_edge("revise", "record")
    builder.add_conditional_edges("record", next_generation, {"pair": "pair", "__end__": END})
    return builder.compile(checkpointer=checkpointer)


async def run_generations(
    folder: Path, game: GenerationGame, generations: int, *, on_generation: Callable[[int], Any] | None = None
) -> None:
    """Play (or go on with) the population of the run in `folder` to its end.

    A new run writes its tables' headers and first rows (`game.start()`) before the first checkpoint; a run with
    a checkpoint goes on from it, its tables cut back to the sizes the checkpoint recorded.
    """
    tables = Tables(folder, game.columns)

    def start() -> GenerationState:
        agents, rows = game.start()
        return {
            "generation": 0,
            "generations": generations,
            "agents": agents,
            "tables": tables.start(rows),
            "seconds": 0.0,
            "stopped": False,
        }

    context = GenerationContext(game, tables, on_generation or (lambda g: None))
    with interrupts_as_errors():
        async with open_store(folder, GenerationStore) as saver:  # a checkpoint a finished generation
            graph = build_generation_graph(saver)
            await drive(
                graph,
                THREAD,
                start,
                context=context,
                finished=finished,
                recursion_limit=5 * generations + 10,
                final=False,
            )


def generations_done(folder: Path | str) -> int:
    """How many generations the population run in `folder` has recorded (0 before its first checkpoint)."""
    state = last_state(folder, THREAD)
    return int(state.get("generation", 0)) if state else 0
