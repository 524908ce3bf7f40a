"""The society graph: pair -> play (one task per episode, concurrently) -> score -> next epoch.

A layer (`SocietyContext.layer`; Social Contract AI's, `sandbox.scai.layer`)
adds its own nodes around the same epoch nodes: SCAI runs an `init_policy`
node at the start and a `meta` node after every epoch but the last, where
the MetaLM writes the next epoch's policy:

    START -> init_policy -> pair -> play* -> score -> meta -> pair ... -> score -> END

The epoch's nodes are added to one flat graph rather than nested as a
compiled subgraph: the episodes list has an appending reducer, and a nested
graph returns its whole state to the parent, which would append it twice.

Built by a factory and compiled with the run's checkpointer, so every
superstep (each epoch's play tasks, each policy revision) is saved and a
killed run resumes where it stopped.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from sandbox.society.context import GraphLayer, SocietyContext
from sandbox.society.nodes import fan_out, next_step, pair, play, score
from sandbox.society.state import SocietyState


def add_epoch_nodes(builder: StateGraph) -> None:
    """The nodes of one epoch: pair -> play (fan-out) -> score, then the `next_step` router."""
    builder.add_node("pair", pair)
    builder.add_node("play", play)
    builder.add_node("score", score)
    builder.add_conditional_edges("pair", fan_out, ["play"])
    builder.add_edge("play", "score")


def build_society_graph(checkpointer: Any | None = None, *, layer: GraphLayer | None = None) -> Any:
    """Compile the society graph, with a layer's nodes when given, optionally with a checkpointer."""
    builder = StateGraph(layer.state if layer is not None else SocietyState, context_schema=SocietyContext)
    add_epoch_nodes(builder)
    if layer is not None:
        layer.add_nodes(builder)
    else:
        builder.add_edge(START, "pair")
        builder.add_conditional_edges("score", next_step, {"pair": "pair", "__end__": END})
    return builder.compile(checkpointer=checkpointer)
