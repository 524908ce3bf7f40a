"""The LangGraph state machines of the sandbox (built by factories, never at import time)."""

from sandbox.graph.context import SocietyContext
from sandbox.graph.graph import build_society_graph
from sandbox.graph.state import SocietyState

__all__ = ["SocietyContext", "SocietyState", "build_society_graph"]
