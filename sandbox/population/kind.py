"""The population kind: generations of play and revision on a network (`population:` block).

Registered under the entry-point group `sandbox.kinds`; importing this module
imports nothing else of the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox.kinds import RunKind, by_option

__all__ = ["POPULATION"]


def run(scenario: Any, out: Path | str | None = None, *, models: Any = None, hooks: Any = None, ledgers: Any = ()) -> Path:
    """Play the population's generations (`sandbox.population.run.run_population`); scripted members call no
    model."""
    from sandbox.population.run import run_population

    return run_population(scenario, out, hooks=hooks, models=models, ledgers=ledgers)


def resume(path: Path | str, *, models: Any = None, hooks: Any = None, ledgers: Any = ()) -> Path:
    """Play the generations an interrupted population run had left."""
    from sandbox.population.run import resume_population

    return resume_population(path, hooks=hooks, models=models, ledgers=ledgers)


def overrides(scenario: Any, *, source: str = "<command line>", seed: int | None = None) -> Any:
    """`sandbox run --seed`."""
    from sandbox.scenario_file import parse_kind

    data = scenario.model_dump(mode="json")
    if seed is not None:
        data["seed"] = seed
    return parse_kind("population", data, source)


def describe(scenario: Any, *, source: str = "<scenario>") -> str:
    p = scenario.population
    if p.game.kind == "donor":
        return (f"donor-game population of {p.agents} agents, {p.generations} generations, the top "
                f"{p.revision.survivors:.0%} survive; members {scenario.models.user.spec} as role user")  # fmt: skip
    members = ", ".join(f"{m.strategy} {m.share:.0%}" + (" (fixed)" if m.fixed else "") for m in p.members)
    return (f"population of {p.agents} agents on a {p.network.kind} network, {p.generations} generations of "
            f"{p.game.name}, revision {p.revision.rule}; {members}")  # fmt: skip


def dry_run(scenario: Any) -> Any:
    """Scripted members call no model (an empty estimate); a donor-game population's calls, counted from its rules:
    the strategies written (every `llm` member, then the new agents of each generation) and one donation per donor
    and round, first asks only (an unreadable answer is asked again, up to `game.retries` times)."""
    import pandas as pd

    columns = ["role", "calls", "cache_hits", "prompt_tokens", "max_answer_tokens"]
    p = scenario.population
    if p.game.kind != "donor":
        return pd.DataFrame([], columns=columns)
    from sandbox.population.scenario import member_counts

    counts = member_counts([m.share for m in p.members], p.agents)
    llm = sum(n for m, n in zip(p.members, counts) if m.strategy == "llm")
    fixed = sum(n for m, n in zip(p.members, counts) if m.fixed)
    replaced = max(0, p.agents - max(fixed, round(p.agents * p.revision.survivors)))
    rounds = p.agents if p.game.pairing == "notebook" else p.agents - 1
    donations = p.generations * p.game.games * rounds * (p.agents // 2)
    strategies = llm + replaced * (p.generations - 1)
    answer, spec = scenario.models.user.sampling.max_tokens, scenario.models.user.spec
    return pd.DataFrame([{"role": "user (strategies)", "model": spec, "calls": strategies, "cache_hits": 0,
                          "prompt_tokens": 600 * strategies, "max_answer_tokens": answer * strategies},
                         {"role": "user (donations)", "model": spec, "calls": donations, "cache_hits": 0,
                          "prompt_tokens": 700 * donations, "max_answer_tokens": answer * donations}],
                        columns=[*columns[:1], "model", *columns[1:]])  # fmt: skip


def cli_run(scenario: Any, out: Path | None, *, source: str = "<scenario>") -> Path:
    """`sandbox run` of a population under a progress bar, then its table."""
    from sandbox.population.commands import with_progress, generations_table
    from sandbox.population.run import run_population

    path = with_progress(scenario.population.generations, 0,
                         lambda hooks: run_population(scenario, out, hooks=hooks))  # fmt: skip
    generations_table(path)
    return path


def cli_resume(path: Path, *, max_calls: int | None = None, max_tokens: int | None = None,
               max_cost: float | None = None, **options: Any) -> None:  # fmt: skip
    """`sandbox resume` of a population run (the `--max-*` options raise an LLM population's budget)."""
    from sandbox.files import read_json
    from sandbox.population.commands import with_progress, generations_table
    from sandbox.population.run import STATE, resume_population
    from sandbox.run_budget import raise_budget
    from sandbox.scenario_file import load_run_scenario

    by_option(options, (), f"{path}, a population run")
    raise_budget(path, calls=max_calls, tokens=max_tokens, usd=max_cost)
    total = load_run_scenario(path).population.generations
    done = read_json(Path(path) / STATE)["generations_done"] if (Path(path) / STATE).is_file() else 0
    generations_table(with_progress(total, done, lambda hooks: resume_population(path, hooks=hooks)))


POPULATION = RunKind(
    name="population",
    block="population",
    precedence=50,
    title="a population scenario",
    description="Emergent norms: every agent revises its own strategy each generation (payoff imitation by the "
    "Fermi rule, Nowak & May's best neighbour, mutation) on a network; scripted axelrod strategies.",
    model="sandbox.population.scenario:PopulationScenario",
    run="sandbox.population.kind:run",
    resume="sandbox.population.kind:resume",
    overrides="sandbox.population.kind:overrides",
    run_options=("seed",),
    describe="sandbox.population.kind:describe",
    dry_run="sandbox.population.kind:dry_run",
    cli_run="sandbox.population.kind:cli_run",
    cli_resume="sandbox.population.kind:cli_resume",
    tables={"population": "population.csv", "generations": "generations.csv", "edges": "edges.csv",
            "donations": "donations.csv", "norms": "norms.csv", "transcripts": "transcripts.jsonl"},
    benchmarks={"population": "sandbox.population.bench:bench_population"},
    example="scenarios/population/pd_grid_nowak_may.yaml",
    budget=True,
)
