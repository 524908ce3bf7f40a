"""Python's cyclic garbage collector during a run (`during_run`).

A run holds a large live state for its whole length: the imported modules, the population, the network, every
call's records and the tables. CPython's full collection (generation 2) walks every object the collector tracks, so
it gets slower as that state grows, and it stops the event loop while it walks: measured on a 10,000-agent LLM
population (20,000 calls at concurrency 64), 16 full collections took 2.4 s of CPU, up to 220 ms each, while 64
answers waited; at a million agents, 2.7 s. Most of what they walk is alive and stays alive.

`during_run` freezes what is alive when the run starts (`gc.freeze`: the collector no longer walks it; reference
counting still frees it), and again after each full collection (what survived one is the run's live state). A
full collection then walks only what was made since the last one. The cost: a reference cycle that was frozen and
dies later is not collected until the run ends (`gc.unfreeze` hands everything back), which is why only the
survivors of a full collection are frozen, never young objects.

The engine runs every thread of a run inside `during_run`; the command line runs its whole command inside one
(`keep=True`), from before its imports of the run's modules (five full collections, 0.4 s, at 10,000 agents) to
its end, and leaves its objects frozen: the process ends, and its last collection then skips them too (0.5 s less
at 10,000 agents). Nested blocks (the engine's inside the command's, a sweep's runs, a chain's steps) share the
outermost one's freezing.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["during_run"]

_DEPTH = [0]


def _freeze_survivors(phase: str, info: dict[str, Any]) -> None:
    if phase == "stop" and info["generation"] == 2:
        gc.freeze()


@contextmanager
def during_run(*, keep: bool = False) -> Iterator[None]:
    """Freeze what is alive now and what survives each full collection until the block ends (see the module);
    `keep`: leave it frozen then (the process is about to end)."""
    _DEPTH[0] += 1
    outermost = _DEPTH[0] == 1
    if outermost:
        gc.freeze()
        gc.callbacks.append(_freeze_survivors)
    try:
        yield
    finally:
        _DEPTH[0] -= 1
        if outermost:
            gc.callbacks.remove(_freeze_survivors)
            if not keep:
                gc.unfreeze()
