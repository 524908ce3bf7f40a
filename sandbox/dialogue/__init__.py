"""Solver-guided dialogue: dialogue games bound to OpenSpiel, solved with CFR, and the paper's metrics.

A dialogue game's actions are instructions (a tone, a day, an argument
style), LLM randomness is a chance node over recorded seeds, and the tree is
expanded once, a level at a time, through the project's LLM layer and cache.

Public modules for other methods: `sandbox.dialogue.scenario` (the dialogue
scenario model) and `sandbox.dialogue.run` (solving a scenario into a run
directory), which SCAI's society uses to solve its solver-guided members'
game inline (`society.guided.solve`).
"""

from __future__ import annotations

from typing import Any

from sandbox.dialogue.expand import Node, Tree, expand
from sandbox.dialogue.game import DialogueGame
from sandbox.dialogue.llm_calls import StackModels
from sandbox.rules.dialogue import ANY, Domain, Message, Outcome, Prompt, Setup

__all__ = [
    "ANY",
    "DialogueGame",
    "Domain",
    "Message",
    "Node",
    "Outcome",
    "Prompt",
    "Setup",
    "Solution",
    "StackModels",
    "Tree",
    "evaluate",
    "expand",
    "solve",
]

# The solver needs OpenSpiel (the `solve` extra); SCAI's society imports this package's scenario module whether or
# not it has solver-guided members, so without OpenSpiel the package imports and only the solver's names are missing.
try:
    from sandbox.dialogue.solve import Solution, evaluate, solve
except ModuleNotFoundError as error:
    if error.name != "pyspiel":
        raise

    def __getattr__(name: str) -> Any:
        if name in {"Solution", "evaluate", "solve"}:
            from sandbox.base.extras import require

            require("solve", what=f"sandbox.dialogue.{name}")
        raise AttributeError(f"module 'sandbox.dialogue' has no attribute {name!r}")
