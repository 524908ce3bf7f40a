"""The network view's data as the browser receives it: compact arrays, not JSON objects.

A `NetworkData` (`sandbox.viewer.sections`) is sent as base64 strings of little-endian typed arrays, which the
browser reads straight into `Uint8Array`, `Uint16Array`, `Uint32Array` and `Float32Array`s (`static/network.js`):
the places as float32, the edges as uint32 pairs, each agent's code at each frame as one byte (two beyond 256
texts), the lineage's changes as int32 quadruples. A 10,000-agent run of 100 generations sends about 1.4 MB.

What would pass `CELLS` (codes: agents x frames) is thinned to evenly spaced frames, the first and the last kept,
and the view says so; the values shown on hover are sent while they fit `VALUES` numbers, else left out (the
view says where they are).
"""

from __future__ import annotations

import base64
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from sandbox.viewer.sections import NetworkData

__all__ = ["CELLS", "EVENTS", "VALUES", "network_json", "thinned"]

CELLS = 2_000_000  # codes sent at most (agents x frames): 2 MB as bytes, 2.7 MB in base64
VALUES = 250_000  # values (payoffs) sent at most (agents x frames): 1 MB as float32
EVENTS = 100_000  # lineage events sent at most: 1.6 MB as int32 quadruples


def _b64(array: npt.NDArray[Any], dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).tobytes()).decode("ascii")


def thinned(frames: int, agents: int, cells: int = CELLS) -> list[int]:
    """The frames sent of `frames` (each of `agents` codes): all that fit `cells`, else evenly spaced ones, the
    first and the last among them.

    >>> thinned(5, 10)
    [0, 1, 2, 3, 4]
    >>> kept = thinned(101, 10_000, 500_000)  # 50 frames fit
    >>> len(kept), kept[:3], kept[-2:]
    (35, [0, 3, 6], [99, 100])
    """
    if frames * agents <= cells or frames <= 2:
        return list(range(frames))
    step = math.ceil((frames - 1) / max(cells // max(agents, 1) - 1, 1))
    kept = list(range(0, frames, step))
    return kept if kept[-1] == frames - 1 else [*kept, frames - 1]


def network_json(data: NetworkData, title: str) -> dict[str, Any]:
    """The section as the browser draws it (`static/network.js`)."""
    frames, agents = data.codes.shape
    kept = thinned(frames, agents)
    notes = list(data.notes)
    if len(kept) < frames:
        every = kept[1] - kept[0]
        notes.append(
            f"{len(kept)} of the {frames} {data.unit}s are shown (about one in {every}), to keep the page small; "
            "the run's tables hold them all"
        )
    codes = data.codes[kept]
    wide = len(data.texts) > 256
    values = None
    if data.values is not None:
        if codes.size <= VALUES:
            values = _b64(np.nan_to_num(data.values[kept].astype(np.float32), nan=np.nan), "<f4")
        else:
            notes.append(
                f"each agent's {data.value_name} is left out of the view above {VALUES:,} values "
                f"({codes.size:,} here); population.csv holds it"
            )
    edges = None if data.edges is None else _b64(np.asarray(data.edges).reshape(-1), "<u4")
    lineage = None
    if data.lineage is not None and len(data.lineage):
        shown = np.isin(data.lineage[:, 0], [data.steps[f] for f in kept])  # changes at the frames shown
        events = np.asarray(data.lineage)[shown]
        if len(events) <= EVENTS:
            lineage = _b64(events.reshape(-1), "<i4")
        else:
            notes.append(
                f"whom each agent took what it holds from is left out above {EVENTS:,} changes "
                f"({len(events):,} here); the run's tables hold it"
            )
    return {
        "type": "network",
        "title": title,
        "caption": data.caption,
        "agents": agents,
        "frames": len(kept),
        "steps": [int(data.steps[f]) for f in kept],
        "unit": data.unit,
        "x": _b64(data.x, "<f4"),
        "y": _b64(data.y, "<f4"),
        "edges": edges,
        "codes": _b64(codes, "<u2" if wide else "u1"),
        "code_bytes": 2 if wide else 1,
        "texts": list(data.texts),
        "group_of": [int(g) for g in data.group_of],
        "groups": list(data.groups),
        "colours": list(data.colours),
        "marked": None if data.marked is None else _b64(data.marked, "u1"),
        "marked_name": data.marked_name,
        "values": values,
        "value_name": data.value_name,
        "notes": notes,
        "parent": data.parent,
        # a fork's agents that differ from the parent's, a bit an agent, each frame's row padded to whole bytes
        "differs": None if data.differs is None else _b64(np.packbits(data.differs[kept], axis=1), "u1"),
        "lineage": lineage,  # int32 quadruples: step, agent, source (-1: none), how (an index of hows)
        "hows": list(data.hows),
    }
