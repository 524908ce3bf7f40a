"""A population run: its game's generations on the one engine (`sandbox.engine.generations`), resumable after a
kill, then the game's summary and figure.

Run directory (beside each game's tables, `sandbox.population.games`):
    scenario.yaml       the resolved scenario; resume reads it
    run.json            status and timings
    store.sqlite        the engine's checkpoints (LangGraph's SQLite checkpointer): the population after every
                        step of every generation, and the tables' sizes after each recorded generation (resume
                        cuts the tables back to them)
    summary.json        headline figures
    edges.csv           the interaction network (a, b), empty for a complete one
    held.csv            what each agent holds (its strategy, name or norm) at the start and after every
                        generation, coded compactly (`sandbox.population.held`): the network view's colours
    layout.csv          each agent's place in the network view, computed the first time it is drawn
                        (`sandbox.population.report.layout`)

Each generation draws from its own node of the seed tree, and an LLM game's calls come back from the run's
cache, so a run resumed after a kill writes the same tables as one that was not killed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from sandbox.core.kinds import GivenModels, Ledgers
from sandbox.core.run_dir import RunDirectory, default_out, hold, holding
from sandbox.core.scenario_files import load_run_scenario
from sandbox.engine.generations import run_generations
from sandbox.llm.record import CallRecord
from sandbox.population.held import with_held
from sandbox.population.registry import plugin_for
from sandbox.population.scenario import PopulationScenario, empty_members, over_budget

__all__ = ["resume_population", "run_population"]

Hook = Callable[[int], object] | None  # receives each finished generation's number
CallHook = Callable[[CallRecord | None], object] | None  # each finished LLM call's record (None: made on an actor)
OLD_STATE = "state.json"  # what the hand-written loops before the engine checkpointed


def _play(
    run_dir: RunDirectory,
    scenario: PopulationScenario,
    hooks: Hook,
    models: Mapping[str, BaseChatModel] | None,
    ledgers: Ledgers,
    on_call: CallHook = None,
    *,
    resuming: bool = False,
) -> Path:
    """Play (or go on with) the run with its game's plug-in, then write its summary and figure."""
    from sandbox.base.sync import run_sync
    from sandbox.population.llm_session import llm_session

    kind = plugin_for(scenario.population.game)
    with contextlib.ExitStack() as stack:
        if kind.calls_models:
            model = stack.enter_context(llm_session(run_dir, scenario, ledgers, models or {}, on_call))
        else:
            model = None
            stack.enter_context(_scripted_session(run_dir))
        game = kind(scenario, model)
        game.run_path, game.on_call = run_dir.path, on_call
        stack.enter_context(game)
        played = with_held(game, run_dir.path, resuming)
        run_sync(run_generations(run_dir.path, played, scenario.population.generations, on_generation=hooks))
    try:
        game.finish(run_dir, models)
    finally:
        if scenario.population.actors > 1:  # the actors' Ray may still be stopping
            from sandbox.population.actors.lifecycle import ray_stopped

            ray_stopped()
    return run_dir.path


@contextlib.contextmanager
def _scripted_session(run_dir: RunDirectory) -> Iterator[None]:
    """What a scripted run does when it stops, as an LLM run does (`llm_session`): on an error it is marked failed
    and `RunFailedError` says how to resume it (an actor's timeout already says so, and goes on as it is); on an
    interrupt (Ctrl-C, a kill) it is marked interrupted and the interrupt goes on."""
    from sandbox.base.errors import RunFailedError
    from sandbox.core.budget import stop_run

    try:
        yield
    except RunFailedError as error:
        run_dir.write_status("failed", error=f"{type(error).__name__}: {error}")
        raise
    except BaseException as error:
        stop_run(run_dir, error, "population")


def _check_actors(scenario: PopulationScenario, models: GivenModels) -> None:
    """Refuse before anything is written (`UsageError`), where the run uses actors: a bad `SANDBOX_ACTOR_TIMEOUT_S`,
    and model objects given for LLM members, which the actors could not use (they call the scenario's endpoints)."""
    block = scenario.population
    if block.actors > 1:
        from sandbox.base.errors import UsageError
        from sandbox.population.actors.lifecycle import actor_timeout_s

        actor_timeout_s()
        given = sorted(set(models or {}) & set(block.game.roles(block)))
        if given:
            raise UsageError(
                f"population.actors {block.actors}: the actors call the scenario's openai: endpoints, not the model "
                f"objects given for {', '.join(given)}; set population.actors 1 to use them"
            )


def run_population(
    scenario: PopulationScenario,
    out: Path | str | None = None,
    *,
    hooks: Hook = None,
    models: GivenModels = None,
    ledgers: Ledgers = (),
    source: str = "<scenario>",
    on_call: CallHook = None,
) -> Path:
    """Play a population scenario into a new run directory (`out`, or `runs/<name>-<time>`); `models`: model
    objects by role for LLM members (`{"user": model}`), instead of the scenario's specs; `on_call`: receives each
    finished LLM call's record (the command line's bar of calls). A member whose share
    rounds to no agent, or a population whose one generation needs more calls or tokens than the budget allows
    (`over_budget`), is refused (`ScenarioError` naming `source`, the scenario's file), and nothing is written."""
    from sandbox.base.errors import ScenarioError

    problems = empty_members(scenario.population) + over_budget(scenario)
    if problems:
        raise ScenarioError(source, problems)
    _check_actors(scenario, models)
    path = Path(out) if out is not None else default_out(scenario)
    RunDirectory.check_new(path)
    with hold(path):
        return _play(RunDirectory.create(path, scenario), scenario, hooks, models, ledgers, on_call)


@holding
def resume_population(
    path: Path | str,
    *,
    hooks: Hook = None,
    models: GivenModels = None,
    ledgers: Ledgers = (),
    on_call: CallHook = None,
) -> Path:
    """Play the generations a killed population run had left; the tables end as an uninterrupted run's."""
    from sandbox.base.errors import UsageError

    if (Path(path) / OLD_STATE).is_file():  # refused before anything is written, so that the old version can finish it
        raise UsageError(
            f"{path} was made by an older sandbox (its checkpoint is {OLD_STATE}, not the engine's store); this one "
            "cannot resume it: finish it with the version that started it, or run the scenario again"
        )
    run_dir = RunDirectory.open(path)
    scenario = load_run_scenario(path)
    _check_actors(scenario, models)
    run_dir.write_status("running")
    return _play(run_dir, scenario, hooks, models, ledgers, on_call, resuming=True)
