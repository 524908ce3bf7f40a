"""The population games' registry: every per-game list of the population kind derives from it.

A game is one folder, `sandbox/population/games/<game>/`, and one `GameEntry` (in the folder's `__init__`): its
`game.kind`, a line on what it is, its settings class, its plug-ins of the engine (which print its table on the
command line and write its summary and figures), the tables its runs write, the headline column of its
`generations.csv`, and the settings a fork after the first generation cannot change. The settings union of the
`population:` block (`sandbox.population.scenario`), the kind's tables, the plug-in a run plays, the command line's
table, `sandbox compare`'s headline and the fork's fixed fields are read from here; no shared module of the kind
names a game.

The games register under the entry-point group `sandbox.population_games` of their distribution, as the kinds do
under `sandbox.kinds` (`sandbox.core.kinds`), so another package adds a game without changing this one (in its
`pyproject.toml`):

    [project.entry-points."sandbox.population_games"]
    mygame = "mypackage.mygame:GAME"

or, for a module that is not packaged, the environment variable `SANDBOX_POPULATION_GAMES=pkg.module:GAME[,...]`.
Both are read once, when the registry is first used (the settings union is built when
`sandbox.population.scenario` is first imported). Every class or function an entry names is a `"module:attribute"`
reference, imported on first use, so listing the games imports none of their plug-ins.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from types import MappingProxyType
from typing import TYPE_CHECKING

from sandbox.core.kinds import resolve

if TYPE_CHECKING:
    from sandbox.population.game import AnyGame
    from sandbox.population.settings import PopulationGameSpec

__all__ = ["ENVIRONMENT", "GROUP", "SHARED_TABLES", "GameEntry", "entry_of", "games", "plugin_for", "spec_classes"]

GROUP = "sandbox.population_games"
ENVIRONMENT = "SANDBOX_POPULATION_GAMES"

# the tables every population run may write, whatever its game: its agents and generations, the network, the calls'
# transcript, and the norm map's (`sandbox.population.norm_map`) of a run whose agents write norm texts
SHARED_TABLES: Mapping[str, str] = MappingProxyType(
    {
        "population": "population.csv",
        "generations": "generations.csv",
        "edges": "edges.csv",
        "held": "held.csv",
        "layout": "layout.csv",
        "clusters": "clusters.csv",
        "norm_clusters": "norm_clusters.csv",
        "cluster_shares": "cluster_shares.csv",
        "norm_diversity": "norm_diversity.csv",
        "transcripts": "transcripts.jsonl",
    }
)


@dataclass(frozen=True)
class GameEntry:
    """One population game: what the kind's shared modules read of it."""

    kind: str
    """The `game.kind` that selects it in a scenario (the name of its folder)."""
    title: str
    """One line on what it is, after which paper (lists, `sandbox kinds`, the docs)."""
    spec: str
    """`"module:Class"`: its settings, a `sandbox.population.settings.PopulationGameSpec` whose `kind` is `kind`."""
    plugins: Mapping[str, str]
    """Its plug-ins of the engine (`sandbox.population.game.PopulationGame`), `"module:Class"` by the name its
    settings' `plugin()` gives (`game` for a game with one; a matrix game's `scripted` and `llm`)."""
    headline: str
    """The column of its `generations.csv` that `sandbox compare` and the viewer's divergence plot draw."""
    tables: Mapping[str, str] = field(default_factory=dict)
    """The tables its runs write besides `SHARED_TABLES`, by name (file names)."""
    fixed: tuple[str, ...] = ()
    """Its settings (fields of `game:`) read when a run starts and then held in its state, which a fork after the
    first generation cannot change."""
    conformance: Mapping[str, str] = field(default_factory=dict)
    """Its conformance cases (`sandbox.population.conformance.GameCase`), `"module:attribute"` by plug-in name: the
    conformance test of the games plays each (every plug-in needs one)."""
    edits: str = ""
    """An example of its fork's state edits (`sandbox fork --set state.PATH=VALUE`), for messages and help."""
    benchmarks: Mapping[str, str] = field(default_factory=dict)
    """Its own benchmarks (`sandbox bench NAME`), `"module:function"` by name."""
    scale: Mapping[str, object] | None = None
    """The `population:` fields (members, network, game, revision) of one generation of LLM members at scale, which
    `sandbox bench population-llm` plays against loopback servers at every size; None: not benchmarked there."""
    scale_on_actors: bool = False
    """Whether that benchmark also plays it on Ray actors (`population.actors`: the games whose matches actors
    play)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "plugins", MappingProxyType(dict(self.plugins)))
        object.__setattr__(self, "tables", MappingProxyType(dict(self.tables)))
        object.__setattr__(self, "benchmarks", MappingProxyType(dict(self.benchmarks)))
        object.__setattr__(self, "conformance", MappingProxyType(dict(self.conformance)))

    def spec_class(self) -> type[PopulationGameSpec]:
        cls: type[PopulationGameSpec] = resolve(self.spec)
        return cls


def _entries() -> list[tuple[str, Callable[[], object]]]:
    """(where it was named, a loader of the entry) for each entry point and each `ENVIRONMENT` reference."""
    found: list[tuple[str, Callable[[], object]]] = [
        (f"entry point {e.name} = {e.value} of group {GROUP}", e.load) for e in metadata.entry_points(group=GROUP)
    ]
    for reference in filter(None, (r.strip() for r in os.environ.get(ENVIRONMENT, "").split(","))):
        found.append((f"{ENVIRONMENT} {reference}", functools.partial(resolve, reference)))
    return found


@functools.cache
def games() -> Mapping[str, GameEntry]:
    """Every registered game by its kind, in the order the entry points list them (the built-in games first)."""
    found: dict[str, GameEntry] = {}
    for where, load in _entries():
        entry = load()
        if not isinstance(entry, GameEntry):
            raise TypeError(f"{where} is {type(entry).__name__}, not a sandbox.population.registry.GameEntry")
        if entry.kind in found and found[entry.kind] != entry:
            raise ValueError(f"{where}: population game {entry.kind!r} is registered twice")
        found[entry.kind] = entry
    return MappingProxyType(found)


def entry_of(kind: str) -> GameEntry:
    """The game registered as `kind` (`KeyError` naming the registered ones)."""
    try:
        return games()[kind]
    except KeyError:
        raise KeyError(f"no population game is registered as {kind!r} (registered: {', '.join(games())})") from None


def spec_classes() -> dict[str, type[PopulationGameSpec]]:
    """Every registered game's settings class, by kind (what the `population:` block's `game:` may be)."""
    return {kind: entry.spec_class() for kind, entry in games().items()}


def plugin_for(spec: PopulationGameSpec) -> type[AnyGame]:
    """The plug-in class that plays the game of settings `spec`."""
    entry, name = entry_of(spec.kind), spec.plugin()
    if name not in entry.plugins:
        raise KeyError(f"population game {spec.kind!r} has no plug-in {name!r} (it has {', '.join(entry.plugins)})")
    cls: type[AnyGame] = resolve(entry.plugins[name])
    return cls
