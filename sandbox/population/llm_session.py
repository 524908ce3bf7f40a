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
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.language_models import BaseChatModel

from sandbox.core import run_dir as layout
from sandbox.core.run_dir import RunDirectory
from sandbox.llm.cache import ResponseCache
from sandbox.llm.resolve import model_stack
from sandbox.llm.transcript import TranscriptWriter

__all__ = ["CallSink", "finish_llm_run", "listed", "llm_session", "model_label"]


@contextmanager
def llm_session(
    run_dir: RunDirectory,
    scenario: Any,
    ledgers: Sequence[Any],
    models: Mapping[str, BaseChatModel],
    on_call: Callable[[Any], Any] | None = None,
) -> Iterator[Callable[[str], BaseChatModel]]:
    from sandbox.core.budget import run_ledgers, stop_run

    path = run_dir.path
    cache = ResponseCache(path / layout.CACHE)
    transcript = TranscriptWriter(path / layout.TRANSCRIPTS)
    sinks: list[Any] = [transcript] if on_call is None else [transcript, CallSink(on_call)]
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

    def __init__(self, on_call: Callable[[Any], Any]) -> None:
        self.on_call = on_call

    def record(self, call: Any) -> None:
        with contextlib.suppress(Exception):
            self.on_call(call)


def finish_llm_run(run_dir: RunDirectory, summary: dict[str, Any], figure: Callable[[], Any], name: str) -> None:
    """Close the transcript and write the summary with `calls` (the calls it holds), then the figure `figure()`
    draws as `name`, then the status complete: the last step of every LLM population run."""
    from sandbox.core.summary import write_summary
    from sandbox.llm.transcript import compact_transcript

    calls = compact_transcript(run_dir.path / layout.TRANSCRIPTS)
    write_summary(run_dir, {**summary, "calls": calls}, kind="population")
    figure().savefig(run_dir.path / name, dpi=120)
    run_dir.write_status("complete")


def summary_head(scenario: Any, game: str) -> dict[str, Any]:
    """The first fields of a population run's summary: the scenario's name, its agents and generations, the game."""
    block = scenario.population
    return {"scenario": scenario.name, "agents": block.agents, "generations": block.generations, "game": game}


def member_columns(generation: int, index: int, agent: Mapping[str, Any]) -> list[Any]:
    """The first columns of a member's row in population.csv: generation, index, name, kind, fixed, norm, strategy."""
    return [generation, index, *(agent[k] for k in ("name", "kind", "fixed", "norm", "strategy"))]


def model_label(scenario: Any, models: Mapping[str, BaseChatModel] | None, role: str = "user") -> str:
    """What a summary says played `role`: the scenario's spec, or "given: CLASS" for a model object passed in."""
    given = (models or {}).get(role)
    return getattr(scenario.models, role).spec if given is None else f"given: {type(given).__name__}"


def listed(values: Any, digits: int = 4) -> list[float | None]:
    """A table's column for a summary: rounded, a missing value (NaN) as None.

    >>> listed([0.123456, float("nan")])
    [0.1235, None]
    """
    return [None if v != v else round(float(v), digits) for v in values]
