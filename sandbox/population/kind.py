"""The population kind: generations of play and revision on a network (`population:` block).

Registered under the entry-point group `sandbox.kinds`; importing this module imports only the games' registry
(`sandbox.population.registry`, which names each game's tables) of the package.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox.core.kinds import GivenModels, Ledgers, RunKind
from sandbox.population.registry import SHARED_TABLES, games

if TYPE_CHECKING:
    import pandas as pd

    from sandbox.population.run import Hook
    from sandbox.population.scenario import PopulationScenario


__all__ = ["POPULATION", "load"]

EDGES_FILE = "edges_file"


def load(path: Path | str, data: Mapping[str, object] | None = None) -> PopulationScenario:
    """A population file, with `network: {kind: edges, edges_file: FILE}` read in: FILE (relative to the scenario
    file) holds one edge a line, two agent numbers apart (networkx's edge-list format; `#` starts a comment). The
    resolved scenario written to a run holds the edges themselves. `data`: the scenario's fields written inside
    `path` (a sweep's base) instead of read from it."""
    from sandbox.base.errors import ScenarioError
    from sandbox.base.files import read_yaml
    from sandbox.core.scenario_files import parse_kind

    data = read_yaml(path) if data is None else data
    population = data.get("population")
    network = population.get("network") if isinstance(population, dict) else None
    if isinstance(network, dict) and EDGES_FILE in network:
        field = f"population.network.{EDGES_FILE}"
        if network.get("kind", "edges") != "edges" or "edges" in network:
            raise ScenarioError(str(path), [(field, "is read with kind edges and no `edges` list")])
        source = Path(path).parent / str(network.pop(EDGES_FILE))
        try:
            network["edges"] = _read_edges(source)
        except (OSError, ValueError) as error:
            raise ScenarioError(str(path), [(field, f"{source}: {error}")]) from None
        network["kind"] = "edges"
    return parse_kind("population", data, str(path))


def _read_edges(path: Path) -> list[list[int]]:
    """The edges of an edge-list file: `a b` a line (anything after them, such as a weight, is ignored)."""
    edges = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        try:
            edges.append([int(words[0]), int(words[1])])
        except (IndexError, ValueError):
            raise ValueError(f"line {number} is not two agent numbers: {line.strip()!r}") from None
    if not edges:
        raise ValueError("no edge in the file")
    return edges


def run(
    scenario: PopulationScenario,
    out: Path | str | None = None,
    *,
    models: GivenModels = None,
    hooks: Hook = None,
    ledgers: Ledgers = (),
) -> Path:
    """Play the population's generations (`sandbox.population.run.run_population`); scripted members call no
    model."""
    from sandbox.population.run import run_population

    return run_population(scenario, out, hooks=hooks, models=models, ledgers=ledgers)


def resume(path: Path | str, *, models: GivenModels = None, hooks: Hook = None, ledgers: Ledgers = ()) -> Path:
    """Play the generations an interrupted population run had left."""
    from sandbox.population.run import resume_population

    return resume_population(path, hooks=hooks, models=models, ledgers=ledgers)


def overrides(
    scenario: PopulationScenario,
    *,
    source: str = "<command line>",
    seed: int | None = None,
    models: list[str] | None = None,
) -> PopulationScenario:
    """`sandbox run --seed K --model ROLE=SPEC`, ROLE a role the game reads (`PopulationGameSpec.roles`): user, the
    LLM members; judge, the judge of play against norm (the donor game with judge_play); assistant and meta, the
    ultimatum population's SCAI assistant and MetaLMs; or all of them."""
    from sandbox.base.errors import ScenarioError
    from sandbox.core.scenario_files import model_overrides, parse_kind

    data = scenario.model_dump(mode="json")
    if seed is not None:
        data["seed"] = seed
    roles = scenario.population.game.roles(scenario.population)
    if models and not roles:
        raise ScenarioError(
            source,
            [
                (
                    "--model",
                    "no member of this population calls a model (scripted strategies, fixed or committed members)",
                )
            ],
        )
    model_overrides(data, models, roles, source)
    return parse_kind("population", data, source)


def describe(scenario: PopulationScenario, *, source: str = "<scenario>") -> str:
    return scenario.population.game.describe(scenario)


def dry_run(scenario: PopulationScenario) -> pd.DataFrame:
    """The calls a run will make, counted from the game's rules (`PopulationGameSpec.calls`): first asks only (an
    unreadable answer is asked again, up to the game's `retries`); scripted members call no model (an empty
    estimate)."""
    import pandas as pd

    rows = [
        {
            "role": c.role,
            "model": c.model.spec,
            "calls": c.calls,
            "cache_hits": 0,
            "prompt_tokens": c.prompt_tokens * c.calls,
            "max_answer_tokens": (c.answer_tokens or c.model.sampling.max_tokens) * c.calls,
        }
        for c in scenario.population.game.calls(scenario)
    ]
    return pd.DataFrame(rows, columns=["role", "model", "calls", "cache_hits", "prompt_tokens", "max_answer_tokens"])


def cli_run(scenario: PopulationScenario, out: Path | None, *, source: str = "<scenario>") -> Path:
    """`sandbox run` of a population under a progress bar, then its table."""
    from sandbox.population.report.cli import generations_table, with_progress
    from sandbox.population.run import run_population

    path = with_progress(
        scenario.population.generations,
        0,
        lambda hooks, on_call: run_population(scenario, out, hooks=hooks, source=source, on_call=on_call),
        calls=_expected_calls(scenario),
    )
    generations_table(path)
    return path


def cli_resume(path: Path, **options: object) -> None:
    """`sandbox resume` of a population run (the `--max-*` options raise an LLM population's budget)."""
    from sandbox.core.budget import resume_options
    from sandbox.core.scenario_files import load_run_scenario
    from sandbox.engine.generations import generations_done
    from sandbox.population.report.cli import generations_table, with_progress
    from sandbox.population.run import resume_population

    resume_options(path, options, f"{path}, a population run")
    scenario = load_run_scenario(path)
    total = scenario.population.generations
    done = generations_done(path)
    left = _expected_calls(scenario) * (total - done) // max(1, total)
    generations_table(
        with_progress(
            total, done, lambda hooks, on_call: resume_population(path, hooks=hooks, on_call=on_call), calls=left
        )
    )


def _expected_calls(scenario: PopulationScenario) -> int:
    """The LLM calls a run is expected to make (`dry_run`'s first asks; 0 for scripted members): the total of the
    command line's bar of calls."""
    return sum(c.calls for c in scenario.population.game.calls(scenario))


def requires(scenario: PopulationScenario) -> list[str]:
    """The extras its game needs (`PopulationGameSpec.extras`: axelrod, the population extra, for a matrix game's
    scripted strategies); Ray (the scale extra) when the matches are played by actors (`population.actors`)."""
    block = scenario.population
    return block.game.extras(block) + (["scale"] if block.actors > 1 else [])


POPULATION = RunKind(
    name="population",
    block="population",
    precedence=50,
    title="a population scenario",
    requires="sandbox.population.kind:requires",
    description="Emergent norms: every agent revises its own norm each generation on a network. Games: "
    + "; ".join(f"{kind}, {entry.title[0].lower()}{entry.title[1:]}" for kind, entry in games().items())
    + ".",
    model="sandbox.population.scenario:PopulationScenario",
    load="sandbox.population.kind:load",
    run="sandbox.population.kind:run",
    resume="sandbox.population.kind:resume",
    overrides="sandbox.population.kind:overrides",
    run_options=("seed", "models"),
    describe="sandbox.population.kind:describe",
    dry_run="sandbox.population.kind:dry_run",
    cli_run="sandbox.population.kind:cli_run",
    cli_resume="sandbox.population.kind:cli_resume",
    tables={**SHARED_TABLES, **{name: file for entry in games().values() for name, file in entry.tables.items()}},
    benchmarks={
        "population": "sandbox.population.bench.scripted:bench_population",
        "population-actors": "sandbox.population.bench.scripted:bench_population_actors",
        "population-llm": "sandbox.population.bench.llm:bench_population_llm",
        "llm-calls": "sandbox.population.bench.call_cpu:bench_call_cpu",
        "network-view": "sandbox.population.bench.network_view:bench_network_view",
        "norm-map": "sandbox.population.bench.norm_map:bench_norm_map",
        **{name: function for entry in games().values() for name, function in entry.benchmarks.items()},
    },
    steps="sandbox.population.steps:STEPS",
    conformance="sandbox.population.conformance:CASE",
    example="scenarios/population/pd_grid_nowak_may.yaml",
    view="sandbox.population.report.view:view",
    result="sandbox.population.result:PopulationResult",
    # the run list's figures: each game's outcome first (the ones its summary holds are shown), then its size
    headline=(
        "final_cooperation",
        "final_committed_share",
        "final_dominant_share",
        "consensus_per_agent",
        "final_contribution",
        "survival_months",
        "total_gain",
        "donation_slope_per_generation",
        "norm_clusters",
        "illegal_rate",
        "agents",
    ),
    budget=True,
)
