"""The runner: resolve models per role, build the societies, drive the graph, write the results.

Independent runs are threads of one LangGraph checkpointer and run
concurrently under the shared concurrency limit. A failure leaves the run
directory resumable; `resume` continues every unfinished run from its last
checkpoint (finished episodes are never played again) and writes the same
results an uninterrupted run writes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from langchain_core.language_models import BaseChatModel

from agents.guided_member import GuidedMember
from agents.user import NormFollowingUser
from sandbox.base.errors import RunFailedError, UsageError
from sandbox.base.seeding import Branch, generator, seed_node
from sandbox.core import run_dir as layout
from sandbox.core.budget import budget_stop, run_ledgers, set_budget
from sandbox.core.run_dir import RunDirectory, atomic_write_text, default_out, hold, holding
from sandbox.core.scenario import ROLES
from sandbox.core.scenario_files import load_run_scenario
from sandbox.core.summary import write_summary
from sandbox.engine.store import drive as engine_drive
from sandbox.engine.store import open_store, store_tables
from sandbox.llm.accounting import TokenLedger
from sandbox.llm.budget import BudgetExhaustedError
from sandbox.llm.cache import ResponseCache
from sandbox.llm.resolve import ModelStack, model_stack
from sandbox.llm.specs import split_spec
from sandbox.llm.transcript import TranscriptWriter, finalize_transcript
from sandbox.rules.ultimatum import UltimatumPlayer
from sandbox.society.context import SocietyContext
from sandbox.society.graph import build_society_graph
from sandbox.society.plots import save_plots
from sandbox.society.results import episodes_frame, member_payoffs, metrics_frame, summarize
from sandbox.society.scenario import SocietyScenario
from societies.guided_policy import GuidedPolicy
from societies.network import build_network
from societies.population import build_population


@dataclass
class ProgressHooks:
    """Callbacks for progress displays; all optional."""

    on_start: Any = None  # (total_episodes_estimate, already_done, per_epoch_estimate) -> None
    on_epoch_start: Any = None  # (run, epoch, episodes) -> None
    on_episode: Any = None  # (record) -> None
    on_policy: Any = None  # (policy record) -> None
    on_phase: Any = None  # (what, total or None) -> None: a phase before the society plays (solving its guided game)
    on_advance: Any = None  # (n) -> None: that phase advanced


def preflight(scenario: SocietyScenario, models: Mapping[str, BaseChatModel] | None = None) -> None:
    """Check, before anything is written, that every role's backend can be built here.

    The embedded model is joined and verified now (once per machine), so a
    missing part is an input error, not a failure halfway through a run.
    """
    from sandbox.llm.embedded_model import ensure_model_file
    from sandbox.llm.offline import is_offline
    from sandbox.llm.resolve import build_backend

    models = models or {}
    guided = scenario.society.guided
    if guided is not None and guided.policy is not None:
        try:
            GuidedPolicy.load(guided.policy).check_play(guided.play)
        except ValueError as error:
            raise UsageError(f"society.guided.policy: {error}") from None
    for role in scenario.roles():
        if role in models or is_offline():  # a replay calls no model: its answers are recorded
            continue
        spec = getattr(scenario.models, role).spec
        if split_spec(spec)[0] == "embedded" and not split_spec(spec)[1]:
            ensure_model_file()
        else:
            build_backend(spec)  # raises ModelUnavailableError with a fix


def episodes_per_epoch(scenario: SocietyScenario, layer: Any | None = None) -> int:
    """Episodes an epoch plays, for progress bars (exact unless a sparse network limits a matching)."""
    if layer is not None:
        return layer.episodes_per_epoch()
    return scenario.interactions_per_epoch or scenario.society.members() // 2


async def drive(graph: Any, context: SocietyContext, run: int, epochs: int) -> dict[str, Any]:
    """Play run `run` of the society graph to its end from its last checkpoint (a new run from the start); its
    final state. The engine's one resume path (`sandbox.engine.store.drive`), a run a thread of the store."""
    layer = getattr(context, "layer", None)

    def finished(values: Any) -> bool:
        return values.get("epoch", 0) >= epochs and (layer is None or layer.finished(values))

    final = await engine_drive(
        graph,
        f"run-{run}",
        lambda: {"run": run, "epoch": 0, "epochs": epochs, "tasks": [], "episodes": [], "epoch_scores": []},
        context=context,
        finished=finished,
        recursion_limit=5 * epochs + 10,
    )
    assert final is not None
    return final


def _profiles(population: list[Any], guided: list[GuidedMember], layer: Any | None) -> dict[str, dict[str, str]]:
    profiles = {f"user-{u.agent_id}": {"norm": u.norm.name, "manner": u.manner.name} for u in population}
    profiles |= {member.agent_id: {"norm": "guided", "manner": "neutral"} for member in guided}
    return profiles | (layer.profiles() if layer is not None else {})


def _guided_policy(
    run_dir: RunDirectory,
    scenario: SocietyScenario,
    models: Mapping[str, BaseChatModel],
    ledgers: Sequence[Any],
    hooks: ProgressHooks,
) -> GuidedPolicy | None:
    """The guided members' solved policy (an inline game is solved first, into the run's guided/ folder); a solve
    that fails leaves the run failed and resumable."""
    try:
        source = scenario.guided_policy(run_dir, models=models, ledgers=ledgers, hooks=hooks)
        return GuidedPolicy.load(source) if source is not None else None
    except BudgetExhaustedError as error:
        budget_stop(run_dir, [error])  # says so in the status, and how to go on
        raise
    except BaseException as error:
        run_dir.write_status(
            "failed" if isinstance(error, Exception) else "interrupted", error=f"{type(error).__name__}: {error}"
        )
        if not isinstance(error, Exception):
            raise
        raise RunFailedError(
            f"solving the guided members' game failed: {type(error).__name__}: {error}\n"
            f"The run directory is resumable: sandbox resume {run_dir.path}"
        ) from error


def _guided_members(
    scenario: SocietyScenario, policy: GuidedPolicy | None, model: BaseChatModel, run: int
) -> list[GuidedMember]:
    """The run's solver-guided members, the network's nodes after the users."""
    block = scenario.society.guided
    if policy is None or block is None:
        return []
    size = scenario.society.size
    return [
        GuidedMember(
            node,
            policy,
            model,
            int(seed_node(scenario.seed, run, Branch.GUIDED, node).generate_state(1)[0]),
            block.responder,
            block.play,
        )
        for node in range(size, size + block.count)
    ]


async def _execute(
    run_dir: RunDirectory,
    scenario: SocietyScenario,
    models: Mapping[str, BaseChatModel],
    hooks: ProgressHooks,
    ledgers: Sequence[Any] = (),
) -> None:
    ledgers = run_ledgers(run_dir, scenario, ledgers)  # before the transcript opens for this session
    guided_policy = _guided_policy(run_dir, scenario, models, ledgers, hooks)  # an inline game: solved first
    cache = ResponseCache(run_dir / layout.CACHE)
    transcript = TranscriptWriter(run_dir / layout.TRANSCRIPTS)
    # Usage is counted from the finished transcript, so a resumed run counts both sessions' calls.
    stack = model_stack(scenario, cache, [transcript], ledgers)
    role_models = {
        role: stack.for_role(
            role,
            getattr(scenario.models, role).spec,
            getattr(scenario.models, role).sampling.model_dump(),
            given=models.get(role),
        )
        for role in scenario.roles()
    }
    layer = scenario.graph_layer(role_models, on_policy=hooks.on_policy)
    players: dict[int, list[UltimatumPlayer]] = {}
    networks, profiles, agents = {}, {}, []
    for run in range(scenario.runs):
        population = build_population(scenario.society, generator(scenario.seed, run, Branch.POPULATION))
        networks[run] = build_network(
            scenario.society.members(), scenario.society.network, generator(scenario.seed, run, Branch.NETWORK)
        )
        guided = _guided_members(scenario, guided_policy, role_models["user"], run)
        players[run] = [NormFollowingUser(profile, role_models["user"], scenario.game.rules) for profile in population]
        players[run] += guided  # users, then the guided members: both play as `UltimatumPlayer`s
        profiles[run] = _profiles(population, guided, layer)
        agents += [{"run": run, "agent": a, **p} for a, p in profiles[run].items() if layer is None or layer.listed(a)]
    atomic_write_text(run_dir / layout.AGENTS, pd.DataFrame(agents).to_csv(index=False))

    context = SocietyContext(
        scenario=scenario,
        players=players,
        networks=networks,
        layer=layer,
        on_epoch_start=hooks.on_epoch_start or (lambda *_: None),
        on_episode=hooks.on_episode or (lambda *_: None),
        profiles=profiles,
    )
    started = time.time()
    try:
        async with open_store(run_dir.path) as saver:
            graph = build_society_graph(saver, layer=layer)
            if hooks.on_start:
                done = 0
                for run in range(scenario.runs):
                    state = await graph.aget_state({"configurable": {"thread_id": f"run-{run}"}})
                    done += len(state.values.get("episodes", [])) if state.values else 0
                per_epoch = episodes_per_epoch(scenario, layer)
                hooks.on_start(per_epoch * scenario.epochs * scenario.runs, done, per_epoch)
            outcomes = await asyncio.gather(
                *(drive(graph, context, run, scenario.epochs) for run in range(scenario.runs)),
                return_exceptions=True,
            )
    except BaseException as error:  # Ctrl-C, cancellation: say so, then stop as asked
        run_dir.write_status("interrupted", error=f"{type(error).__name__}: {error}")
        raise
    finally:
        transcript.close()
        cache.close()
    failures = [o for o in outcomes if isinstance(o, BaseException)]
    budget_stop(run_dir, failures)
    if failures:
        first = failures[0]
        run_dir.write_status("failed", error=f"{type(first).__name__}: {first}")
        if isinstance(first, (KeyboardInterrupt, asyncio.CancelledError)):
            raise first
        raise RunFailedError(
            f"{len(failures)} of {scenario.runs} runs failed: {type(first).__name__}: {first}\n"
            f"The run directory is resumable: sandbox resume {run_dir.path}"
        ) from first
    _finalize(
        run_dir,
        scenario,
        [o for o in outcomes if isinstance(o, dict)],
        profiles,
        time.time() - started,
        _embedded_backend(stack),
        layer,
    )


def _embedded_backend(stack: ModelStack) -> dict[str, int] | None:
    """The slots and threads the embedded model ran with, as this machine resolved them (None if unused)."""
    from sandbox.llm.embedded import EmbeddedChatModel
    from sandbox.llm.offline import is_offline

    if is_offline():  # a replay ran no model (and the model file may not be on this machine)
        return None
    for backend in stack.backends():
        if isinstance(backend, EmbeddedChatModel):
            return backend.server_settings().machine()
    return None


def _finalize(
    run_dir: RunDirectory,
    scenario: SocietyScenario,
    states: list[dict[str, Any]],
    profiles: dict[int, dict[str, dict[str, str]]],
    seconds: float,
    embedded_backend: dict[str, int] | None = None,
    layer: Any | None = None,
) -> None:
    records = [episode for state in states for episode in state.get("episodes", [])]
    episodes = episodes_frame(records, profiles)
    metrics = metrics_frame(episodes)
    transcript = finalize_transcript(run_dir / layout.TRANSCRIPTS)
    usage = TokenLedger.from_transcript(transcript).totals()
    summary = summarize(episodes, scenario=scenario.model_dump(mode="json"), usage=usage)
    if embedded_backend is not None:  # the scenario may leave slots and threads to the machine: say what ran
        summary["embedded_backend"] = embedded_backend
    atomic_write_text(run_dir / layout.EPISODES, episodes.to_csv(index=False))
    atomic_write_text(run_dir / layout.METRICS, metrics.to_csv(index=False))
    atomic_write_text(run_dir / layout.PAYOFFS, member_payoffs(episodes).to_csv(index=False))
    write_summary(run_dir, summary, kind="society")
    with store_tables(run_dir.path) as db:
        episodes.to_sql("episodes", db, if_exists="replace", index=False)
        metrics.to_sql("metrics", db, if_exists="replace", index=False)
    save_plots(episodes, run_dir.path, title=scenario.name)
    if layer is not None:
        summary[layer.name] = layer.finalize(run_dir, episodes, states)
        write_summary(run_dir, summary, kind="society")
    status = run_dir.status()
    run_dir.write_status("complete", seconds=round(status.get("seconds", 0.0) + seconds, 3))


async def arun(
    scenario: SocietyScenario,
    *,
    out: str | Path | None = None,
    models: Mapping[str, BaseChatModel] | None = None,
    hooks: ProgressHooks | None = None,
    ledgers: Sequence[Any] = (),
) -> Path:
    """Run `scenario` into a new run directory and return its path.

    Args:
        scenario: A validated scenario.
        out: The run directory (must not exist or be empty); default `runs/<name>-<timestamp>`.
        models: Model objects per role, used instead of the scenario's specs
            (how tests pass a scripted model).
        hooks: Progress callbacks.
        ledgers: Budget ledgers beyond the run's own `scenario.budget` (a sweep's).

    Raises:
        UsageError, ModelUnavailableError: before anything is written.
        RunFailedError: the run stopped; its directory is resumable.
        BudgetExhaustedError: a budget's cap was reached; the run stopped cleanly and is resumable.
    """
    models = dict(models or {})
    unknown = sorted(set(models) - set(ROLES))
    if unknown:
        raise UsageError(f"unknown roles in models: {', '.join(unknown)}")
    path = Path(out) if out is not None else default_out(scenario)
    RunDirectory.check_new(path)
    preflight(scenario, models)
    with hold(path):
        run_dir = RunDirectory.create(path, scenario)
        await _execute(run_dir, scenario, models, hooks or ProgressHooks(), ledgers)
    return path


@holding
async def aresume(
    path: str | Path,
    *,
    models: Mapping[str, BaseChatModel] | None = None,
    hooks: ProgressHooks | None = None,
    budget: Any = None,
    ledgers: Sequence[Any] = (),
) -> Path:
    """Continue an interrupted (or budget-stopped) run from its last checkpoints and write its results.

    `budget` replaces the run's `budget` (a higher cap, to finish a run a cap stopped); it is written into the
    run's `scenario.yaml`, since it changes what the run may spend, not what it does.
    """
    run_dir = RunDirectory.open(path)
    scenario = load_run_scenario(run_dir.path)
    if budget is not None:
        scenario = scenario.model_copy(update={"budget": budget})
    preflight(scenario, models)  # before the new cap is written: a run that cannot start is left as it was
    if budget is not None:
        set_budget(run_dir, budget)
    run_dir.write_status("running")
    await _execute(run_dir, scenario, dict(models or {}), hooks or ProgressHooks(), ledgers)
    return run_dir.path
