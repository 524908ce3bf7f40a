"""What every LLM population run holds while it plays: the run's cache, transcript, ledgers and model stack, and
what happens when it stops.

`llm_session(run_dir, scenario, ledgers, models)` yields a function that
returns the model of a role (`"user"`, `"judge"`), a given model object
(`models[role]`, for tests and notebooks) or the scenario's spec through the
stack; `on_call`, if given, receives each finished call's record (a
progress bar counts them). On an error the run is marked failed and `RunFailedError` says how to
resume it; on an interrupt (Ctrl-C, a kill, a budget reached) it is marked
interrupted and the interrupt goes on; the transcript and the cache are
closed either way. `finish_llm_run` ends a run that played out: its
summary (with the calls the transcript holds), its figure, its status.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel
from typing_extensions import TypedDict

from sandbox.core import run_dir as layout
from sandbox.core.run_dir import RunDirectory
from sandbox.llm.cache import ResponseCache
from sandbox.llm.record import CallRecord
from sandbox.llm.record import CallSink as Sink
from sandbox.llm.resolve import model_stack
from sandbox.llm.transcript import TranscriptWriter
from sandbox.population.revision.texts import PrincipledAgent

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from sandbox.population.settings import PopulationScenarioSettings

__all__ = ["CallSink", "MemberRow", "finish_llm_run", "listed", "llm_session", "member_row", "model_label"]


@contextmanager
def llm_session(
    run_dir: RunDirectory,
    scenario: PopulationScenarioSettings,
    ledgers: Sequence[object],
    models: Mapping[str, BaseChatModel],
    on_call: Callable[[CallRecord], object] | None = None,
) -> Iterator[Callable[[str], BaseChatModel]]:
    from sandbox.core.budget import run_ledgers, stop_run

    path = run_dir.path
    cache = ResponseCache(path / layout.CACHE)
    transcript = TranscriptWriter(path / layout.TRANSCRIPTS)
    sinks: list[Sink] = [transcript] if on_call is None else [transcript, CallSink(on_call)]
    stack = model_stack(scenario, cache, sinks, run_ledgers(run_dir, scenario, ledgers))

    def model(role: str) -> BaseChatModel:
        config = getattr(scenario.models, role)
        return stack.for_role(role, config.spec, config.sampling.model_dump(), given=models.get(role))

    try:
        yield model
    except BaseException as error:
        stop_run(run_dir, error, "population")
    finally:
        transcript.close()
        cache.close()


class CallSink:
    """A sink of the model stack that hands each finished call's record to `on_call` (a progress bar's counter); an
    error of the hook's own is dropped: a bar must never fail a call."""

    def __init__(self, on_call: Callable[[CallRecord], object]) -> None:
        self.on_call = on_call

    def record(self, call: CallRecord) -> None:
        with contextlib.suppress(Exception):
            self.on_call(call)


def finish_llm_run(
    run_dir: RunDirectory, summary: Mapping[str, object], figure: Callable[[], Figure], name: str
) -> None:
    """Close the transcript and write the summary with `calls` (the calls it holds), then the figure `figure()`
    draws as `name`, then the status complete: the last step of every LLM population run."""
    from sandbox.core.summary import write_summary
    from sandbox.llm.transcript import compact_transcript

    calls = compact_transcript(run_dir.path / layout.TRANSCRIPTS)
    write_summary(run_dir, {**summary, "calls": calls}, kind="population")
    figure().savefig(run_dir.path / name, dpi=120)
    run_dir.write_status("complete")


def summary_head(scenario: PopulationScenarioSettings, game: str) -> dict[str, object]:
    """The first fields of a population run's summary: the scenario's name, its agents and generations, the game."""
    block = scenario.population
    return {"scenario": scenario.name, "agents": block.agents, "generations": block.generations, "game": game}


class MemberRow(TypedDict):
    """The first columns of a principled member's row in population.csv (a game's row adds its own)."""

    generation: int
    agent: int
    name: str
    kind: str
    fixed: bool
    norm: int
    strategy: str


def member_row(generation: int, index: int, agent: PrincipledAgent) -> MemberRow:
    """Those columns of agent `index`."""
    return MemberRow(
        generation=generation,
        agent=index,
        name=agent["name"],
        kind=agent["kind"],
        fixed=agent["fixed"],
        norm=agent["norm"],
        strategy=agent["strategy"],
    )


def model_label(
    scenario: PopulationScenarioSettings, models: Mapping[str, BaseChatModel] | None, role: str = "user"
) -> str:
    """What a summary says played `role`: the scenario's spec, or "given: CLASS" for a model object passed in."""
    given = (models or {}).get(role)
    return getattr(scenario.models, role).spec if given is None else f"given: {type(given).__name__}"


def listed(values: Iterable[float], digits: int = 4) -> list[float | None]:
    """A table's column for a summary: rounded, a missing value (NaN) as None.

    >>> listed([0.123456, float("nan")])
    [0.1235, None]
    """
    return [None if v != v else round(float(v), digits) for v in values]
