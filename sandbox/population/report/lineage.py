"""Whom each agent took what it holds from: the lineage the network view shows on hover.

A run records it where its revision copies another agent:

* `revisions.csv` (the LLM games that revise norm texts: donor, ultimatum, LLM matrix members): every revision
  with its rule, its partner (by name) and its outcome (`copied`, `new`, `duplicate`, `same`, `kept`, `illegal`);
* `lineage.csv` (the scripted matrix game): each agent whose strategy changed, and the agent it took it from
  (`sandbox.population.revision.rules.revise`).

`lineage_of_run` reads either as events: at the revision after generation g, agent i's change, how it came
(`copied`, `new by reflect`, ...) and its source agent (-1: none, its own writing). The other games record no
source (the naming game's hearers learn many names a generation; commons fishers copy no one): the view says which
neighbours held the new label the generation before.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = ["LINEAGE", "Lineage", "lineage_of_run"]

LINEAGE = "lineage.csv"
CHANGES = ("copied", "new", "duplicate")  # the outcomes of revisions.csv that change what an agent holds


@dataclass(frozen=True)
class Lineage:
    """Events: at the revision after `generations[e]`, agent `agents[e]` changed what it holds, as `hows[how[e]]`
    says, from agent `sources[e]` (-1: none)."""

    generations: npt.NDArray[np.int64]
    agents: npt.NDArray[np.int64]
    sources: npt.NDArray[np.int64]
    how: npt.NDArray[np.int64]
    hows: list[str]

    def __len__(self) -> int:
        return len(self.agents)


def _names(run: Path) -> dict[tuple[int, str], int]:
    """Each (generation, agent name)'s index, from population.csv (empty where it names no agent)."""
    file = run / "population.csv"
    if not file.is_file() or not {"generation", "agent", "name"} <= set(pd.read_csv(file, nrows=0).columns):
        return {}
    table = pd.read_csv(file, usecols=["generation", "agent", "name"], dtype={"name": str}, keep_default_na=False)
    return dict(zip(zip(table["generation"].astype(int), table["name"]), table["agent"].astype(int)))


def _from_revisions(run: Path) -> Lineage:
    table = pd.read_csv(run / "revisions.csv", dtype={"partner": str, "rule": str}, keep_default_na=False)
    table = table[table["outcome"].isin(CHANGES)]
    names = _names(run)
    hows: dict[str, int] = {}
    how, sources = [], []
    for g, rule, partner, outcome in zip(table["generation"], table["rule"], table["partner"], table["outcome"]):
        seen = " (a text seen before)" if outcome == "duplicate" else ""
        text = "copied" if outcome == "copied" else f"wrote a new norm (rule: {rule}){seen}"
        how.append(hows.setdefault(text, len(hows)))
        sources.append(names.get((int(g), partner), -1) if partner else -1)
    return Lineage(
        table["generation"].to_numpy(np.int64),
        table["agent"].to_numpy(np.int64),
        np.array(sources, dtype=np.int64),
        np.array(how, dtype=np.int64),
        list(hows),
    )


def _from_lineage(run: Path) -> Lineage:
    from sandbox.base.files import read_csv

    table = read_csv(run / LINEAGE)
    n = len(table)
    return Lineage(
        table["generation"].to_numpy(np.int64),
        table["agent"].to_numpy(np.int64),
        table["source"].to_numpy(np.int64),
        np.zeros(n, dtype=np.int64),
        ["copied"],
    )


def lineage_of_run(run: Path | str) -> Lineage | None:
    """The run directory's lineage events (`Lineage`); None where it records none."""
    run = Path(run)
    if (run / LINEAGE).is_file():
        return _from_lineage(run)
    if (run / "revisions.csv").is_file():
        return _from_revisions(run)
    return None
