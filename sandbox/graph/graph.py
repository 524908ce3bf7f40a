"""The society graph: pair -> play (one task per episode, concurrently) -> score -> next epoch.

Built by a factory and compiled with the run's checkpointer, so every
superstep (and every finished episode inside one) is saved and a killed run
resumes where it stopped.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from sandbox.graph.context import SocietyContext
from sandbox.graph.nodes import fan_out, next_step, pair, play, score
from sandbox.graph.state import SocietyState


def build_society_graph(checkpointer: Any | None = None) -> Any:
    """Compile the society graph, optionally with a checkpointer."""
    builder = StateGraph(SocietyState, context_schema=SocietyContext)
    builder.add_node("pair", pair)
    builder.add_node("play", play)
    builder.add_node("score", score)
    builder.add_edge(START, "pair")
    builder.add_conditional_edges("pair", fan_out, ["play"])
    builder.add_edge("play", "score")
    builder.add_conditional_edges("score", next_step, {"pair": "pair", "__end__": END})
    return builder.compile(checkpointer=checkpointer)
