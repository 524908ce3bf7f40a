"""What each agent holds, generation by generation: the table the network view colours the agents by.

Every population game says what an agent holds (`PopulationGame.held`): a scripted strategy's name, the naming
game's name (or `several`, or `none`), an LLM agent's norm text. The run records it for the first population and
after every generation in `held.csv`, one row a generation:

    generation  -1 for the population a run starts with, then g for the population after generation g
    labels      the distinct labels of the row, as a JSON list, in the order the agents first hold them
    held        each agent's label as its index in `labels`: little-endian uint16, base64-encoded

so that 10,000 agents take about 27 KB a generation and the row stays one CSV line. `read_held` gives the whole
table as arrays (one code per agent and generation, against one list of labels), and `held_frame` as a long
table (generation, agent, label) for pandas.

The rows are written by the engine's `record` step with the game's other tables (`with_held`), so a resumed run
writes them once and a fork cuts them back with the rest.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import pandas as pd

from sandbox.engine.generations import THREAD, GenerationGame, GenerationState, Rows
from sandbox.engine.store import last_state

__all__ = ["HELD", "HELD_COLUMNS", "Held", "held_frame", "held_row", "read_held", "with_held"]

HELD = "held.csv"
HELD_COLUMNS = ("generation", "labels", "held")
MAX_LABELS = 65_535  # a generation's distinct labels that a uint16 code holds


def held_row(generation: int, labels: Sequence[str]) -> tuple[int, str, str]:
    """A row of `held.csv`: each agent's label (`labels[i]` for agent i), coded against the generation's distinct
    labels.

    >>> held_row(0, ["B", "A", "B"])
    (0, '["B", "A"]', 'AAABAAAA')
    """
    distinct: dict[str, int] = {}
    codes = np.fromiter((distinct.setdefault(str(label), len(distinct)) for label in labels), np.uint16, len(labels))
    if len(distinct) > MAX_LABELS:
        raise ValueError(f"generation {generation}: {len(distinct):,} distinct labels, more than {MAX_LABELS:,}")
    packed = base64.b64encode(codes.astype("<u2").tobytes()).decode("ascii")
    return generation, json.dumps(list(distinct), ensure_ascii=False), packed


@dataclass(frozen=True)
class Held:
    """A run's `held.csv` as arrays: `codes[f, i]` is agent i's label (an index of `labels`) at row f, the
    population after generation `generations[f]` (-1: the first one)."""

    generations: npt.NDArray[np.int64]
    labels: list[str]
    codes: npt.NDArray[np.uint16]

    @property
    def agents(self) -> int:
        return int(self.codes.shape[1]) if self.codes.ndim == 2 else 0

    def at(self, generation: int) -> list[str]:
        """Each agent's label after `generation` (KeyError: no such row)."""
        rows = np.flatnonzero(self.generations == generation)
        if not len(rows):
            raise KeyError(f"held.csv has no row for generation {generation}")
        return [self.labels[c] for c in self.codes[rows[0]].tolist()]

    def shares(self) -> pd.DataFrame:
        """Each label's share of the agents by generation (a row a generation, a column a label)."""
        counts = np.zeros((len(self.generations), len(self.labels)))
        for f, row in enumerate(self.codes):
            counts[f] = np.bincount(row, minlength=len(self.labels))
        return pd.DataFrame(
            counts / max(self.agents, 1),
            index=pd.Index(self.generations, name="generation"),
            columns=self.labels,
        )


def read_held(path: Path | str) -> Held:
    """The table `held.csv` of the run directory `path` (or the file itself) as arrays, every row's codes mapped
    to one list of labels (in the order they first appear). FileNotFoundError: a run that recorded none (made
    before the table existed)."""
    file = Path(path)
    file = file / HELD if file.is_dir() else file
    table = pd.read_csv(file, dtype={"labels": str, "held": str}, keep_default_na=False)
    index: dict[str, int] = {}
    rows = []
    for labels, packed in zip(table["labels"], table["held"]):
        own = np.array([index.setdefault(label, len(index)) for label in json.loads(labels)], dtype=np.uint16)
        codes = np.frombuffer(base64.b64decode(packed), dtype="<u2")
        rows.append(own[codes] if len(own) else codes.astype(np.uint16))
    width = len(rows[0]) if rows else 0
    codes = np.stack(rows).astype(np.uint16) if rows else np.zeros((0, width), dtype=np.uint16)
    return Held(table["generation"].to_numpy(dtype=np.int64), list(index), codes)


def held_frame(path: Path | str) -> pd.DataFrame:
    """`held.csv` as a long table: generation, agent, label (one row an agent and generation)."""
    held = read_held(path)
    frames, agents = held.codes.shape if held.codes.ndim == 2 else (0, 0)
    labels = np.array(held.labels, dtype=object)
    return pd.DataFrame(
        {
            "generation": np.repeat(held.generations, agents),
            "agent": np.tile(np.arange(agents), frames),
            "label": labels[held.codes.ravel()] if held.labels else np.array([], dtype=object),
        }
    )


class _Holds(GenerationGame, Protocol):
    def held(self, agents: Any) -> Sequence[str] | None: ...


class _WithHeld:
    """A game whose rows gain `held.csv`'s (`with_held`); everything else is the game's."""

    def __init__(self, game: _Holds) -> None:
        self.game = game
        self.columns: Mapping[str, Sequence[str]] = {**game.columns, HELD: HELD_COLUMNS}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.game, name)

    def start(self) -> tuple[Any, Rows]:
        agents, rows = self.game.start()
        return agents, self._with(rows, -1, agents)

    def record(self, state: GenerationState, seconds: float) -> Rows:
        rows = self.game.record(state, seconds)
        return self._with(rows, state["generation"], self.game.next_agents(state))

    def _with(self, rows: Rows, generation: int, agents: Any) -> Rows:
        labels = self.game.held(agents)
        return rows if labels is None else {**rows, HELD: [held_row(generation, labels)]}


def with_held(game: _Holds, folder: Path, resuming: bool) -> GenerationGame:
    """`game` recording what each agent holds (`held.csv`) beside its own tables; the game as it is when it holds
    nothing to draw (`held` gives None) or when a run being resumed began without the table."""
    if resuming and not (folder / HELD).is_file() and last_state(folder, THREAD) is not None:
        return game  # a replay resumes into an empty folder, and records the table
    return _WithHeld(game)
