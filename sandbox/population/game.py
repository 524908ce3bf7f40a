"""What every population game shares as a plug-in of the engine: its settings, its models, the network, and the
steps a game leaves as they are (no pairing, no separate scoring, no revision)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Generic, cast

from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure

from sandbox.core.run_dir import RunDirectory
from sandbox.engine.generations import GenerationState, Rows
from sandbox.population.settings import PopulationScenarioSettings, SpecT

__all__ = ["ModelOf", "PopulationGame", "SpecT"]

ModelOf = Callable[[str], BaseChatModel]  # a role's model ("user", "judge", ...), built when first asked for


class PopulationGame(ABC, Generic[SpecT]):
    """A population game on the engine (`sandbox.engine.generations.GenerationGame`), for one run of `scenario`:
    `block` is the `population:` block's shared fields, `spec` the game's own settings (`SpecT`).

    `model(role)` gives a role's model through the run's LLM stack (None for a game that calls no model). Used
    as a context manager around the run, for what a game holds open (the Ray actors of a scripted population).
    """

    columns: Mapping[str, Sequence[str]]  # every table, by file name, with its header
    calls_models: ClassVar[bool] = True  # False: scripted strategies, no LLM session is opened
    run_path: Path | None = None  # the run's directory, set before the game is entered: messages name it
    # each finished LLM call's record, for a progress bar; set with run_path. The run's LLM stack feeds it; a game
    # whose calls are made elsewhere (Ray actors) feeds it None for each call made there
    on_call: Callable[[Any], Any] | None = None

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf | None) -> None:
        self.scenario, self.block, self._model = scenario, scenario.population, model
        self.spec = cast(SpecT, scenario.population.game)  # the registry gives each game its own settings

    def model(self, role: str) -> BaseChatModel:
        if self._model is None:
            raise RuntimeError(f"{type(self).__name__} calls no model")
        return self._model(role)

    def __enter__(self) -> PopulationGame[SpecT]:
        return self

    def __exit__(self, *error: Any) -> None:
        return None

    @abstractmethod
    def start(self) -> tuple[Any, Rows]:
        """A new run's population and its first rows (the network's edges, the first norms)."""

    def pair(self, agents: Any, g: int) -> Any:
        return None

    @abstractmethod
    async def play(self, agents: Any, g: int, pairs: Any) -> Any:
        """Play generation `g`'s matches (an LLM game's calls gathered concurrently)."""

    def score(self, agents: Any, g: int, played: Any) -> Any:
        return None

    async def revise(self, agents: Any, g: int, played: Any, scores: Any) -> Any:
        return None

    @abstractmethod
    def record(self, state: GenerationState, seconds: float) -> Rows:
        """Generation `state["generation"]`'s rows by table, from the state its steps left; `seconds` so far."""

    def next_agents(self, state: GenerationState) -> Any:
        return state["agents"]

    def stopped(self, state: GenerationState) -> bool:
        return False

    figure_file: ClassVar[str]  # the figure a finished run writes (its `figure`, as a PNG)

    @abstractmethod
    def figure(self, path: Path) -> Figure:
        """The run's figure, drawn from the tables of its run directory `path` (what `finish` writes as
        `figure_file`)."""

    @staticmethod
    @abstractmethod
    def print_table(path: Path) -> None:
        """Print a finished run's table on the command line (its game's report), and where its results are."""

    @abstractmethod
    def finish(self, run_dir: RunDirectory, models: Mapping[str, BaseChatModel] | None) -> None:
        """Write the summary and figure of a run that played out, and mark it complete."""
