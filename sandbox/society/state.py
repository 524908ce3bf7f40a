"""What changes while a society runs: the state of one run's graph.

Everything here is plain data (ints, strings, lists, dicts), so LangGraph's
checkpointer stores it without custom types, and a resumed run reads back
exactly what was written.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


class SocietyState(TypedDict, total=False):
    """The state of one independent run.

    Attributes:
        run: Index of the run.
        epoch: The epoch being played (0-based); equals `epochs` when done.
        epochs: Epochs to play.
        tasks: The episodes of the current epoch, as drawn by the pair node.
        episodes: Records of every episode played so far (appended by play nodes).
        epoch_scores: One summary per finished epoch (appended by the score node).

    A graph layer extends it with its own keys (SCAI: `sandbox.scai.layer.ScaiState`).
    """

    run: int
    epoch: int
    epochs: int
    tasks: list[dict[str, Any]]
    episodes: Annotated[list[dict[str, Any]], operator.add]
    epoch_scores: Annotated[list[dict[str, Any]], operator.add]
