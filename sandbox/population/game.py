"""What every population game shares as a plug-in of the engine: its settings, its models, the network, the
steps a game leaves as they are (no pairing, no separate scoring, no revision), and its typed state.

A game's state between its steps is plain data (the engine checkpoints it), typed by the game: its population (what
`start` gives and `next_agents` hands the next generation), its pairs, what its play gave, its scores and its
revision, each a `TypedDict` (a plain dict, so the checkpoint reads back what was written) or a list of them; the
plug-in names them as its base's type arguments, `PopulationGame[Spec, Agents, Played, Pairs, Scores, Revised]`
(the last three default to None: a game without that step). A fork's state edit is validated against the game's
population type (`check_agents`). A table's rows are named records (`typing.NamedTuple`), from which the table
takes its header (`columns_of`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Generic, Protocol, cast, get_args, get_origin

from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure
from pydantic import TypeAdapter, ValidationError
from typing_extensions import TypeVar

from sandbox.core.run_dir import RunDirectory
from sandbox.engine.generations import GenerationState, Rows
from sandbox.llm.record import CallRecord
from sandbox.population.settings import PopulationScenarioSettings, SpecT

__all__ = ["AnyGame", "Generation", "ModelOf", "PopulationGame", "SpecT", "columns_of"]

ModelOf = Callable[[str], BaseChatModel]  # a role's model ("user", "judge", ...), built when first asked for

AgentsT = TypeVar("AgentsT")  # the population as a generation starts (the state's `agents`)
PlayedT = TypeVar("PlayedT")  # what the generation's play gave (`play`)
PairsT = TypeVar("PairsT", default=None)  # who meets whom (`pair`)
ScoresT = TypeVar("ScoresT", default=None)  # the generation's scores (`score`)
RevisedT = TypeVar("RevisedT", default=None)  # the revision's result (`revise`)


class _Record(Protocol):
    _fields: ClassVar[tuple[str, ...]]


def columns_of(row: type[_Record]) -> tuple[str, ...]:
    """A table's header: the fields of its row record."""
    return row._fields


@dataclass(frozen=True)
class Generation(Generic[AgentsT, PlayedT, PairsT, ScoresT, RevisedT]):
    """A generation's state as its game types it (`PopulationGame.generation`): what `record` reads."""

    g: int
    agents: AgentsT
    played: PlayedT
    pairs: PairsT
    scores: ScoresT
    revised: RevisedT


class PopulationGame(ABC, Generic[SpecT, AgentsT, PlayedT, PairsT, ScoresT, RevisedT]):
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
    on_call: Callable[[CallRecord | None], object] | None = None

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf | None) -> None:
        self.scenario, self.block, self._model = scenario, scenario.population, model
        self.spec = cast(SpecT, scenario.population.game)  # the registry gives each game its own settings

    @classmethod
    def agents_type(cls) -> type[object]:
        """The type of the game's population (its base's `AgentsT` argument), for checking a state edit."""
        for base in getattr(cls, "__orig_bases__", ()):
            origin = get_origin(base)
            if isinstance(origin, type) and issubclass(origin, PopulationGame):
                found: type[object] = get_args(base)[1]
                return found
        for parent in cls.__mro__[1:]:
            if parent is not PopulationGame and issubclass(parent, PopulationGame):
                return parent.agents_type()
        return object  # not named: anything

    @classmethod
    def check_agents(cls, agents: object, name: str) -> None:
        """`ValueError` naming the edited path `name` and the field where `agents` (a population after a fork's
        state edit) is not of the game's population type."""
        try:
            TypeAdapter(cls.agents_type()).validate_python(agents, strict=True)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ValueError(f"state.{name}: {where or 'the population'}: {first['msg']}") from None

    def generation(self, state: GenerationState) -> Generation[AgentsT, PlayedT, PairsT, ScoresT, RevisedT]:
        """The state as this game types it (the engine holds it as plain data)."""
        return Generation(
            state["generation"],
            cast(AgentsT, state.get("agents")),
            cast(PlayedT, state.get("played")),
            cast(PairsT, state.get("pairs")),
            cast(ScoresT, state.get("scores")),
            cast(RevisedT, state.get("revised")),
        )

    def model(self, role: str) -> BaseChatModel:
        if self._model is None:
            raise RuntimeError(f"{type(self).__name__} calls no model")
        return self._model(role)

    def __enter__(self) -> PopulationGame[SpecT, AgentsT, PlayedT, PairsT, ScoresT, RevisedT]:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        return None

    @abstractmethod
    def start(self) -> tuple[AgentsT, Rows]:
        """A new run's population and its first rows (the network's edges, the first norms)."""

    def pair(self, agents: AgentsT, g: int) -> PairsT:
        return cast(PairsT, None)

    @abstractmethod
    async def play(self, agents: AgentsT, g: int, pairs: PairsT) -> PlayedT:
        """Play generation `g`'s matches (an LLM game's calls gathered concurrently)."""

    def score(self, agents: AgentsT, g: int, played: PlayedT) -> ScoresT:
        return cast(ScoresT, None)

    async def revise(self, agents: AgentsT, g: int, played: PlayedT, scores: ScoresT) -> RevisedT:
        return cast(RevisedT, None)

    @abstractmethod
    def record(self, state: GenerationState, seconds: float) -> Rows:
        """Generation `state["generation"]`'s rows by table, from the state its steps left; `seconds` so far."""

    def next_agents(self, state: GenerationState) -> AgentsT:
        return cast(AgentsT, state["agents"])

    def held(self, agents: AgentsT) -> Sequence[str] | None:
        """What each agent of `agents` holds, one label an agent (a scripted strategy's name, a name of the naming
        game, an LLM agent's norm text): the network view colours the agents by it (`sandbox.population.held`).
        None: nothing to draw. Called on the first population and on each generation's next one."""
        return None

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


AnyGame = PopulationGame[Any, Any, Any]  # a plug-in of any game (the registry's), whatever its state
