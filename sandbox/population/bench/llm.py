"""`sandbox bench population-llm`: one generation of large LLM populations against loopback servers at a fixed
latency, against the concurrency bound measured in the same run.

Each configuration runs in a child process of its own (so its peak memory and CPU time are its own), against the
project's loopback OpenAI-compatible server (`sandbox.society.loopback_server --rules population`, in processes of
its own) answering the games' prompts with parseable moves after `latency_s`. For each it prints:

* the whole run (`run_population`: the directory made, the generation played, the tables, summary and figure
  written) and the calls' span (the first call's start to the last call's end) against the concurrency bound,
  calls x latency / concurrency: the least time the calls could take;
* the CPU time per call of the run's processes (the driver and its Ray actors: everything the run does, the
  game, the LLM layer, the HTTP client; not the servers');
* peak memory (the child's maximum resident set; each actor's, from the run's `actors.json`) per agent, and the
  transcript's bytes per call;
* the start-up apart: the imports, and the time to the first call (the population and its network built, the
  tables' first rows and the first checkpoint written), with one process;
* the store's size (`store.sqlite`) after the generation.

The servers' answers are timing fixtures, never simulation results. The 100,000-agent configuration plays on two
Ray actors, each with its own server (its share of the pool) and half of the concurrency. A million agents play
with OASIS's activation (`game.activation: 0.01`, about 1% of the matches or interactions a generation, as OASIS
lets about 1% of its agents act a step). `SANDBOX_BENCH_AGENTS=1000000:1,1000000:2` runs other sizes (agents:Ray
actors, comma-separated) in place of the default.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from typing_extensions import TypedDict

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from sandbox.llm.record import CallRecord
    from sandbox.population.scenario import PopulationScenario

__all__ = ["bench_population_llm", "plot_scale", "scale_scenario", "sizes_asked"]

LATENCY_S = 0.2
CONCURRENCY = 64
SIZES = ((1_000, 1), (10_000, 1), (100_000, 2))  # (agents, Ray actors)
ACTIVATED_FROM = 1_000_000  # from this many agents, a generation activates a share of the matches
ACTIVATION = 0.01  # OASIS's: about 1% of a million agents act a step
ACTIVATED_GAMES = (
    "matrix",
    "naming",
)  # the others ask every member first (the donor game's strategies: a million calls)


class Config(TypedDict):
    """A configuration the benchmark runs in a process of its own: the game, its agents and Ray actors, the model's
    spec (the loopback servers) and the concurrency."""

    game: str
    agents: int
    actors: int
    spec: str
    concurrency: int


class Measured(Config):
    """What its process measured: calls, start-up, whole run, the calls' span (None on actors), CPU, peak memory and
    the transcript's size, the driver's and the actors'."""

    calls: int
    imports_s: float
    first_call_s: float | None
    whole_s: float
    span_s: float | None
    cpu_s: float
    peak_bytes: int
    transcript_bytes: int
    store_bytes: int
    actor_peak_bytes: list[int]
    actor_cpu_s: float


class Figures(Measured):
    """Those against the concurrency bound (calls x latency / concurrency), and per call and per agent."""

    bound_s: float
    whole_ratio: float
    command_ratio: float
    span_ratio: float | None
    cpu_ms_per_call: float
    peak_bytes_per_agent: float
    transcript_bytes_per_call: float


def scale_scenario(
    game: str, agents: int, spec: str, *, actors: int = 1, concurrency: int = CONCURRENCY
) -> PopulationScenario:
    """One generation of `agents` LLM members of `game` (a registered game's kind), as its entry's `scale` says (the
    matrix game: the prisoner's dilemma on a ring, one turn; the donor game paired along a ring, two rounds; the
    naming game on a complete graph, N interactions in rounds of disjoint pairs), at temperature 0.7 so that every
    call is distinct, model `spec` as role user; from `ACTIVATED_FROM` agents on, at `game.activation`
    `ACTIVATION`."""
    from sandbox.core.scenario_files import parse_kind
    from sandbox.population.registry import entry_of

    fields = entry_of(game).scale
    if fields is None:
        raise ValueError(f"population game {game!r} has no scale case (GameEntry.scale)")
    if agents >= ACTIVATED_FROM:
        game_fields = fields["game"]
        assert isinstance(game_fields, dict)
        fields = {**fields, "game": {**game_fields, "activation": ACTIVATION}}
    return parse_kind(
        "population",
        {
            "name": f"bench-{game}-{agents}",
            "seed": 0,
            "concurrency": concurrency,
            "models": {"user": {"spec": spec, "sampling": {"temperature": 0.7, "max_tokens": 64}}},
            "population": {"agents": agents, "generations": 1, "actors": actors, **fields},
        },
        "<bench>",
    )


def _child(config: Config) -> Measured:
    """Run one configuration in this process; its figures."""
    import resource

    started = time.perf_counter()
    from sandbox.population.run import run_population

    imports = time.perf_counter() - started
    scenario = scale_scenario(
        config["game"], config["agents"], config["spec"], actors=config["actors"], concurrency=config["concurrency"]
    )
    span = {"first": float("inf"), "last": 0.0, "calls": 0}

    def on_call(record: CallRecord | None) -> None:  # with one process, never None (a call made on an actor)
        if record is None:
            return
        now = time.perf_counter()
        span["first"] = min(span["first"], now - record.latency_s)
        span["last"] = now
        span["calls"] += 1

    with tempfile.TemporaryDirectory() as tmp:
        cpu, wall = time.process_time(), time.perf_counter()
        path = run_population(scenario, Path(tmp) / "run", on_call=on_call if config["actors"] == 1 else None)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        summary = json.loads((path / "summary.json").read_text())
        transcript = (path / "transcripts.jsonl").stat().st_size
        store = (path / "store.sqlite").stat().st_size
        actors = json.loads((path / "actors.json").read_text()) if (path / "actors.json").is_file() else []
    calls = int(summary["calls"])
    return Measured(
        **config,
        calls=calls,
        imports_s=imports,
        first_call_s=span["first"] - started if span["calls"] else None,
        whole_s=wall,
        span_s=span["last"] - span["first"] if span["calls"] else None,
        cpu_s=cpu,
        peak_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        transcript_bytes=transcript,
        store_bytes=store,
        actor_peak_bytes=[a["peak_bytes"] for a in actors],
        actor_cpu_s=sum(a["cpu_s"] for a in actors),
    )


def _run_child(config: Config) -> Measured:
    done = subprocess.run(
        [sys.executable, "-m", "sandbox.population.bench.llm", json.dumps(config)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the benchmark's run of {config} failed:\n{done.stderr[-3000:]}")
    measured: Measured = json.loads(done.stdout.strip().splitlines()[-1])
    return measured


def sizes_asked(default: tuple[tuple[int, int], ...] = SIZES) -> tuple[tuple[int, int], ...]:
    """The (agents, actors) sizes `SANDBOX_BENCH_AGENTS` names (`1000000:1,1000000:2`), else `default`.

    >>> import os; os.environ["SANDBOX_BENCH_AGENTS"] = "1000000:1, 10000"
    >>> sizes_asked()
    ((1000000, 1), (10000, 1))
    >>> del os.environ["SANDBOX_BENCH_AGENTS"]
    """
    import os

    from sandbox.base.errors import UsageError

    asked = os.environ.get("SANDBOX_BENCH_AGENTS", "").strip()
    if not asked:
        return default
    sizes = []
    for item in asked.split(","):
        agents, _, actors = item.strip().partition(":")
        if not agents.isdigit() or not (actors or "1").isdigit() or int(agents) < 2 or int(actors or 1) < 1:
            raise UsageError(f"SANDBOX_BENCH_AGENTS: {item.strip()!r} is not AGENTS or AGENTS:ACTORS (1000000:2)")
        sizes.append((int(agents), int(actors or 1)))
    return tuple(sizes)


def bench_population_llm(
    sizes: tuple[tuple[int, int], ...] | None = None,
    games: tuple[str, ...] | None = None,
    latency_s: float = LATENCY_S,
    concurrency: int = CONCURRENCY,
    *,
    with_calls: bool = True,
) -> list[Figures]:
    """One generation of each game (`games`: every registered game with a scale case, by default) at each (agents,
    actors) size (`sizes`: `sizes_asked()`) (on actors: the games whose entries say so) against loopback servers at `latency_s`; the figures of
    each run, printed as a table; then (`with_calls`) `sandbox bench llm-calls`'s table, the framework's CPU per call
    at 0 ms beside LangChain's own client."""
    from sandbox.population.registry import games as registered
    from sandbox.society.loopback_server import server_process

    entries = registered()
    sizes = sizes_asked() if sizes is None else sizes
    games = tuple(kind for kind, entry in entries.items() if entry.scale is not None) if games is None else games

    rows: list[Figures] = []
    with ExitStack() as stack:
        servers = [stack.enter_context(server_process(latency_s=latency_s, rules="population")) for _ in range(2)]
        for game in games:
            for agents, actors in sizes:
                if actors > 1 and not entries[game].scale_on_actors:
                    continue  # only some games' matches are played by actors
                if agents >= ACTIVATED_FROM and game not in ACTIVATED_GAMES:
                    continue
                urls = ",".join(servers[:actors]) if actors > 1 else servers[0]
                config = Config(
                    game=game, agents=agents, actors=actors, spec=f"openai:bench@{urls}", concurrency=concurrency
                )
                measured = _run_child(config)
                bound = measured["calls"] * latency_s / concurrency
                span = measured["span_s"]
                rows.append(
                    Figures(
                        **measured,
                        bound_s=bound,
                        whole_ratio=measured["whole_s"] / bound,
                        command_ratio=(measured["imports_s"] + measured["whole_s"]) / bound,
                        span_ratio=None if span is None else span / bound,
                        cpu_ms_per_call=1000 * (measured["cpu_s"] + measured["actor_cpu_s"]) / measured["calls"],
                        peak_bytes_per_agent=(measured["peak_bytes"] + sum(measured["actor_peak_bytes"])) / agents,
                        transcript_bytes_per_call=measured["transcript_bytes"] / measured["calls"],
                    )
                )
    _print(rows, latency_s, concurrency)
    if with_calls:
        from sandbox.population.bench.call_cpu import bench_call_cpu

        bench_call_cpu()  # the framework's CPU per call at 0 ms, apart from any game's
    return rows


def _print(rows: list[Figures], latency_s: float, concurrency: int) -> None:
    """One column per configuration, one row per measure."""
    table = Table(
        title=f"One generation of LLM populations against loopback servers at {1000 * latency_s:.0f} ms, "
        f"concurrency {concurrency} (bound: calls x latency / concurrency)",
        title_justify="left",
    )
    table.add_column("measure")
    for r in rows:
        on = f" on {r['actors']} actors" if r["actors"] > 1 else ""
        table.add_column(f"{r['game']}, {r['agents']:,} agents{on}", justify="right")
    measures = [
        ("calls", lambda r: f"{r['calls']:,}"),
        ("concurrency bound", lambda r: f"{r['bound_s']:.1f} s"),
        (
            "calls' span (vs bound)",
            lambda r: "n/a (actors)" if r["span_ratio"] is None else f"{r['span_s']:.1f} s ({r['span_ratio']:.2f}x)",
        ),
        ("whole run (vs bound)", lambda r: f"{r['whole_s']:.1f} s ({r['whole_ratio']:.2f}x)"),
        (
            "whole, imports included (vs bound)",
            lambda r: f"{r['imports_s'] + r['whole_s']:.1f} s ({r['command_ratio']:.2f}x)",
        ),
        ("CPU per call (all run processes)", lambda r: f"{r['cpu_ms_per_call']:.3f} ms"),
        (
            "peak memory: driver (each actor)",
            lambda r: (
                f"{r['peak_bytes'] / 2**20:.0f} MB"
                + (
                    f" ({', '.join(f'{b / 2**20:.0f}' for b in r['actor_peak_bytes'])} MB)"
                    if r["actor_peak_bytes"]
                    else ""
                )
            ),
        ),
        (
            "peak memory per agent (all processes)",
            lambda r: f"{(r['peak_bytes'] + sum(r['actor_peak_bytes'])) / r['agents'] / 1024:.1f} KB",
        ),
        ("transcript per call", lambda r: f"{r['transcript_bytes_per_call']:,.0f} B"),
        ("store", lambda r: f"{r['store_bytes'] / 2**20:,.1f} MB"),
        ("start-up: imports", lambda r: f"{r['imports_s']:.1f} s"),
        (
            "start-up: to the first call",
            lambda r: "n/a (actors)" if r["first_call_s"] is None else f"{r['first_call_s']:.1f} s",
        ),
    ]
    for name, cell in measures:
        table.add_row(name, *(cell(r) for r in rows))
    Console().print(table)


def plot_scale(rows: list[Figures]) -> Figure:
    """The benchmark's figure: against the agents (log scale), each game's whole run and calls' span as multiples
    of the concurrency bound, with the issue's targets (1.2 and 1.05) dotted (left); its peak memory per agent, all
    processes together (right)."""
    import pandas as pd
    from matplotlib.figure import Figure

    frame = pd.DataFrame(rows)
    fig = Figure(figsize=(10, 4))
    left, right = fig.subplots(1, 2)
    for i, (game, group) in enumerate(frame.groupby("game", sort=False)):
        group = group.sort_values("agents")
        colour = f"C{i}"
        left.plot(group["agents"], group["whole_ratio"], "-o", color=colour, label=f"{game}: whole run")
        spans = group.dropna(subset=["span_ratio"])
        left.plot(spans["agents"], spans["span_ratio"], "--o", color=colour, label=f"{game}: calls' span")
        right.plot(group["agents"], group["peak_bytes_per_agent"] / 1024, "-o", color=colour, label=game)
    for target in (1.2, 1.05):
        left.axhline(target, color="#888888", linestyle=":", linewidth=1)
    left.set_ylabel("multiple of the concurrency bound")
    right.set_ylabel("peak memory per agent (KB)")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("agents (one generation)")
        ax.legend(fontsize=8)
    right.set_yscale("log")
    fig.suptitle("LLM populations against loopback servers: time and memory", fontsize=10)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    print(json.dumps(_child(json.loads(sys.argv[1]))))
