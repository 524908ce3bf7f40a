"""An LLM population's matches (the matrix game's) or pairs (a round of the naming game's) played on Ray actors, each
with its share of the endpoint pool.

As the scripted engine does (`sandbox.population.actors.lifecycle`) and as AgentSociety
groups agents (arXiv 2502.08691), the generation's matches are cut into
`population.actors` contiguous blocks; each block is played by a Ray actor of
its own, with its own event loop and LLM stack: its share of the run's
`concurrency` (the run's total stays the scenario's) and of the user model's
endpoints (actor k takes every `actors`-th URL of `openai:MODEL@URL1,URL2,...`,
all of them when there are fewer URLs than actors). Every actor answers from,
and writes to, the run's one response cache (SQLite in WAL mode takes writers
from several processes), so a resumed or replayed run finds every call; each
writes its own transcript (`transcripts.actor<k>.jsonl`, and its notes), which
the run's end appends to the run's transcript before compacting it. After each
generation `actors.json` says each actor's peak memory and CPU seconds. While the
actors play, the driver asks them every `PROGRESS_S` how many calls they have
finished and hands each new one to the run's `on_call` (the command line's bar
of calls). The calls
are seeded as in one process, so the tables are the same for any number of
actors against a deterministic server.

Only what an actor cannot share is refused before a run starts
(`PopulationScenario`): a model that is not an `openai:` endpoint (each actor
would load its own embedded model), and a budget (each process keeps its own
ledger: a cap would not hold across them).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sandbox.base.collector import during_run
from sandbox.base.jobs import gather_jobs, jobs_ahead
from sandbox.core import run_dir as layout
from sandbox.population.actors.lifecycle import TIMEOUT_VARIABLE, actor_timeout_s, answers_of, kill_actors, ray_started

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from ray import ObjectRef

    from sandbox.llm.record import CallRecord
    from sandbox.population.settings import PopulationScenarioSettings

ACTORS = "actors.json"  # each actor's peak memory and CPU seconds, after the last generation it played
PROGRESS_S = 0.5  # how often the driver asks the actors for their finished calls, where it counts them

__all__ = [
    "ACTORS",
    "LLMActorBlocks",
    "MakeMembers",
    "PlayMatch",
    "actor_transcript",
    "endpoint_share",
    "merge_actor_transcripts",
]

T = TypeVar("T")  # what an actor answers
M = TypeVar("M")  # the game's players (the matrix game's `Members`, the naming game's `Players`)
R = TypeVar("R")  # what a match gives (the matrix game's turns, the naming game's two picks)
# the game's players, made from the scenario and the user model
MakeMembers = Callable[["PopulationScenarioSettings", "BaseChatModel"], M]
# a match played by them: (members, agents, g, k, a, b) to what it gives (the matrix game's `play_match`, the naming
# game's `play_pair`); an agent's record is the game's own, opaque here
PlayMatch = Callable[[M, Any, int, int, int, int], Awaitable[R]]


def actor_transcript(run: Path, k: int) -> Path:
    """Where actor `k` writes its transcript in run directory `run`."""
    return run / f"{Path(layout.TRANSCRIPTS).stem}.actor{k}.jsonl"


def endpoint_share(spec: str, k: int, actors: int) -> str:
    """Actor `k`'s share of an `openai:MODEL@URL1,URL2?OPTIONS` spec: every `actors`-th URL from the k-th, or all of
    them when there are fewer URLs than actors (then each actor takes its share of each endpoint's limits:
    `per_endpoint`, `requests_per_minute`, `tokens_per_minute`, where set).

    >>> endpoint_share("openai:m@http://a/v1,http://b/v1,http://c/v1?per_endpoint=8", 1, 2)
    'openai:m@http://b/v1?per_endpoint=8'
    >>> endpoint_share("openai:m@http://a/v1?per_endpoint=8", 1, 2)  # both actors on one endpoint: 4 calls each
    'openai:m@http://a/v1?per_endpoint=4'
    >>> endpoint_share("openai:m@http://a/v1?requests_per_minute=600&structured=vllm", 0, 2)  # 300 a minute each
    'openai:m@http://a/v1?requests_per_minute=300&structured=vllm'
    """
    from urllib.parse import parse_qsl

    from sandbox.llm.endpoints import parse_endpoints

    body = spec.removeprefix("openai:")
    parsed = parse_endpoints(body)
    head, _, options = body.partition("?")
    if len(parsed.urls) >= actors:
        urls = ",".join(parsed.urls[k::actors])
        return f"openai:{parsed.model}@{urls}" + (f"?{options}" if options else "")
    shared = []  # the actors share each endpoint: so do they its limits
    for key, value in parse_qsl(options, keep_blank_values=True):
        if key == "per_endpoint":
            value = str(max(1, int(value) // actors))
        elif key in ("requests_per_minute", "tokens_per_minute"):
            value = f"{float(value) / actors:g}"
        shared.append(f"{key}={value}")
    return f"openai:{head}" + (f"?{'&'.join(shared)}" if shared else "")


class _LLMBlock(Generic[M, R]):
    """One actor: the scenario, its share of the pool and concurrency, the run directory it writes to, and the game's
    players: `members(scenario, model)` makes what `match(members, agents, g, k, a, b)` plays a match with."""

    def __init__(
        self, scenario: dict[str, Any], k: int, actors: int, run: str, members: MakeMembers[M], match: PlayMatch[M, R]
    ) -> None:
        from sandbox.core.scenario_files import parse_kind

        data = dict(scenario)
        data["concurrency"] = max(1, int(data.get("concurrency", 8)) // actors)
        user = dict(data["models"]["user"])
        user["spec"] = endpoint_share(user["spec"], k, actors)
        data["models"] = {**data["models"], "user": user}
        self.scenario = parse_kind("population", data, f"<actor {k}>")
        self.k, self.run = k, Path(run)
        self.members, self.match = members, match
        self.calls = 0  # finished calls, over the actor's life (read from another thread: `calls_done`)

    def ready(self) -> int:
        return self.k

    def calls_done(self) -> int:
        return self.calls

    def _count(self, _: CallRecord) -> None:
        self.calls += 1

    def usage(self) -> dict[str, float]:
        """This actor's process: its peak resident memory (bytes) and CPU seconds so far."""
        import resource

        own = resource.getrusage(resource.RUSAGE_SELF)
        return {"actor": self.k, "peak_bytes": own.ru_maxrss * 1024, "cpu_s": own.ru_utime + own.ru_stime}

    def play(self, agents: Mapping[int, Any], g: int, matches: list[list[int]]) -> list[R]:
        """Each match of the block ([k, a, b]): its turns, as `match` gives them (`agents`: those the matches
        involve, by index)."""
        from sandbox.llm.cache import ResponseCache
        from sandbox.llm.resolve import model_stack
        from sandbox.llm.transcript import TranscriptWriter
        from sandbox.population.llm_session import CallSink

        cache = ResponseCache(self.run / layout.CACHE)
        transcript = TranscriptWriter(actor_transcript(self.run, self.k))
        try:
            stack = model_stack(self.scenario, cache, [transcript, CallSink(self._count)])
            config = self.scenario.models.user
            members = self.members(self.scenario, stack.for_role("user", config.spec, config.sampling.model_dump()))

            async def block() -> list[R]:
                return await gather_jobs(
                    matches,
                    lambda m: self.match(members, agents, g, *m),
                    limit=jobs_ahead(self.scenario.concurrency, calls_per_job=2),
                )

            with during_run():  # the block's agents and records are frozen from the collector's full collections
                return asyncio.run(block())
        finally:
            transcript.close()
            cache.close()


class LLMActorBlocks(Generic[M, R]):
    """The population's Ray actors; called with (agents, g, matches as [k, a, b]) it returns every match's turns in
    order, as the play in one process does (`members`, `match`: the game's players, module-level so that Ray sends
    them by name). A context manager: the actors (and a Ray started here) stop on exit."""

    def __init__(
        self,
        scenario: PopulationScenarioSettings,
        actors: int,
        run: Path,
        members: MakeMembers[M],
        match: PlayMatch[M, R],
        *,
        timeout_s: float | None = None,
        on_call: Callable[[CallRecord | None], object] | None = None,
    ) -> None:
        import ray

        self.timeout_s = actor_timeout_s() if timeout_s is None else timeout_s
        self.run, self.on_call, self._counted = run, on_call, 0
        self._started = ray_started(actors)
        self._actors: list[Any] = []  # `_LLMBlock` handles: Ray types a handle's methods as Never, so none is typed
        self._starting: list[Any] = []
        try:
            remote = ray.remote(_LLMBlock).options(num_cpus=1, max_concurrency=2)  # a second thread: calls_done
            data = scenario.model_dump(mode="json")
            self._actors = [remote.remote(data, k, actors, str(run), members, match) for k in range(actors)]
            # waited for with the first block: the actors start (about a second, on cores of their own) while this
            # process builds the population
            self._starting = [actor.ready.remote() for actor in self._actors]
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def __call__(self, agents: Sequence[Any], g: int, matches: list[list[int]]) -> list[R]:
        if not self._actors:
            raise RuntimeError("the actors were released: they play no more blocks")
        starting, self._starting = self._starting, []
        if starting:
            self._get(starting, "its start")
        size = -(-len(matches) // len(self._actors))
        blocks = [matches[i * size : (i + 1) * size] for i in range(len(self._actors))]
        # each actor is sent the agents its matches involve, not the population (a million agents at activation
        # 0.01: about 20,000 each)
        parts = [
            actor.play.remote({x: agents[x] for _, *pair in block for x in pair}, g, block)
            for block, actor in zip(blocks, self._actors)
        ]
        if self.on_call is not None:
            self._follow(parts, self.on_call)
        played = [turns for part in self._get(parts, f"its block of generation {g}'s matches") for turns in part]
        usage = self._get([actor.usage.remote() for actor in self._actors], "its report of its memory and CPU")
        (self.run / ACTORS).write_text(json.dumps(usage, indent=1) + "\n")
        return played

    def _follow(self, parts: list[ObjectRef[list[R]]], on_call: Callable[[CallRecord | None], object]) -> None:
        """Until the blocks are played (or the actors' time is up: `_get` then says so), every `PROGRESS_S` hand
        `on_call` a None for each call the actors finished since the last look; a failed look is skipped."""
        import time

        import ray

        pending, deadline = list(parts), time.monotonic() + self.timeout_s
        while True:
            if pending:
                _, pending = ray.wait(pending, num_returns=len(pending), timeout=PROGRESS_S)
            with contextlib.suppress(Exception):
                done = sum(ray.get([a.calls_done.remote() for a in self._actors], timeout=self.timeout_s))
                for _ in range(done - self._counted):
                    on_call(None)
                self._counted = max(self._counted, done)
            if not pending or time.monotonic() > deadline:
                return

    def _get(self, refs: list[ObjectRef[T]], step: str) -> list[T]:
        return answers_of(
            refs,
            self.timeout_s,
            lambda k: (
                f"Ray actor {k + 1} of {len(refs)} did not finish {step} within {self.timeout_s:g} s "
                f"({TIMEOUT_VARIABLE}); the run stops and its actors are killed. It can be resumed with `sandbox "
                f"resume {self.run}` (the calls made are in its cache)"
            ),
        )

    def __enter__(self) -> LLMActorBlocks[M, R]:
        return self

    def release(self) -> None:
        """Kill the actors, and stop a Ray started here in a thread of its own (`stop_ray(wait=False)`): for a run
        whose actors have played their last block and which still writes its tables (`ray_stopped` waits for it)."""
        actors, self._actors, started, self._started = self._actors, [], self._started, False
        kill_actors(actors, started, wait=False)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if kind is None:
            self.release()
        else:  # a run that failed or was stopped leaves no Ray behind
            actors, self._actors, started, self._started = self._actors, [], self._started, False
            kill_actors(actors, started)


def merge_actor_transcripts(run: Path) -> None:
    """Append every actor's transcript and notes to the run's, each file then removed (a run killed in between finds
    what is left at its next end): the run's end compacts the whole (`compact_transcript`)."""
    from sandbox.llm import moves
    from sandbox.llm.transcript import end_line

    main = run / layout.TRANSCRIPTS
    notes = moves.notes_path(main)
    suffix = re.escape(moves.notes_path(Path("x.jsonl")).name[1:])  # actor k's notes: transcripts.actor<k>.parsed.jsonl
    for pattern, target in ((rf"{main.stem}\.actor\d+\.jsonl", main), (rf"{main.stem}\.actor\d+{suffix}", notes)):
        for part in sorted(p for p in run.iterdir() if re.fullmatch(pattern, p.name)):
            end_line(target)
            with target.open("ab") as out, part.open("rb") as handle:
                while chunk := handle.read(1 << 22):
                    out.write(chunk)
            end_line(target)
            part.unlink()
