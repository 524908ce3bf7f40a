"""The population kind: generations of play and revision on a network (`population:` block).

Registered under the entry-point group `sandbox.kinds`; importing this module
imports nothing else of the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox.kinds import RunKind, by_option

__all__ = ["POPULATION", "load"]

EDGES_FILE = "edges_file"


def load(path: Path | str) -> Any:
    """A population file, with `network: {kind: edges, edges_file: FILE}` read in: FILE (relative to the scenario
    file) holds one edge a line, two agent numbers apart (networkx's edge-list format; `#` starts a comment). The
    resolved scenario written to a run holds the edges themselves."""
    from sandbox.errors import ScenarioError
    from sandbox.files import read_yaml
    from sandbox.scenario_file import parse_kind

    data = read_yaml(path)
    network = data.get("population", {}).get("network") if isinstance(data.get("population"), dict) else None
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


def run(scenario: Any, out: Path | str | None = None, *, models: Any = None, hooks: Any = None, ledgers: Any = ()) -> Path:
    """Play the population's generations (`sandbox.population.run.run_population`); scripted members call no
    model."""
    from sandbox.population.run import run_population

    return run_population(scenario, out, hooks=hooks, models=models, ledgers=ledgers)


def resume(path: Path | str, *, models: Any = None, hooks: Any = None, ledgers: Any = ()) -> Path:
    """Play the generations an interrupted population run had left."""
    from sandbox.population.run import resume_population

    return resume_population(path, hooks=hooks, models=models, ledgers=ledgers)


def overrides(scenario: Any, *, source: str = "<command line>", seed: int | None = None,
              models: list[str] | None = None) -> Any:  # fmt: skip
    """`sandbox run --seed K --model ROLE=SPEC` (ROLE user, the LLM members; judge, the judge of play against
    norm; assistant and meta, the ultimatum population's SCAI assistant and the MetaLMs)."""
    from sandbox.scenario_file import model_overrides, parse_kind

    data = scenario.model_dump(mode="json")
    if seed is not None:
        data["seed"] = seed
    model_overrides(data, models, ("user", "judge", "assistant", "meta"), source)
    return parse_kind("population", data, source)


def describe(scenario: Any, *, source: str = "<scenario>") -> str:
    p = scenario.population
    if p.game.kind == "naming":
        committed = [f"{m.share:.0%} committed to {m.strategy}" for m in p.members if m.strategy != "llm"]
        prepared = f", memories prepared with {p.game.prepared}" if p.game.prepared else ""
        return (f"naming-game population of {p.agents} agents on a {p.network.kind} network, at most "
                f"{p.generations} x {p.agents} interactions, {len(p.game.words)} words{prepared}"
                f"{'; ' + ', '.join(committed) if committed else ''}; members {scenario.models.user.spec} as role "
                "user")  # fmt: skip
    if p.game.kind == "matrix" and p.game.play == "llm":
        how = ("each member rewrites its principle from its matches" if p.revision.rule == "reflect" else
               f"each member imitates a better neighbour (Fermi, beta {p.revision.beta:g})")
        return (f"{p.game.name} population of {p.agents} LLM members on a {p.network.kind} network, {p.generations} "
                f"generations of {p.game.turns}-turn matches, {how}; members {scenario.models.user.spec} as role "
                "user")  # fmt: skip
    if p.game.kind == "ultimatum":
        members = ", ".join(f"{m.strategy if len(m.strategy) < 20 else m.strategy[:17] + '...'} {m.share:.0%}"
                            + (" (fixed)" if m.fixed else "") for m in p.members)  # fmt: skip
        how = ("each member's MetaLM rewrites its principle" if p.revision.rule == "reflect" else
               f"each member imitates a better neighbour (Fermi, beta {p.revision.beta:g})")
        return (f"ultimatum-game population of {p.agents} agents on a {p.network.kind} network, {p.generations} "
                f"generations, {how}; {members}; members {scenario.models.user.spec} as role user, MetaLM "
                f"{scenario.models.meta.spec}")  # fmt: skip
    if p.game.kind == "commons":
        fixed = [f"{m.share:.0%} always asking {m.strategy} tons" for m in p.members if m.strategy != "llm"]
        talk = f"talk up to {p.game.talk_steps} steps" if p.game.talk else "no talk"
        hint = ", universalization hint" if p.game.universalization else ""
        return (f"GovSim fishery of {p.agents} fishers, lake of {p.game.capacity} tons, {p.generations} months, "
                f"{talk}{hint}{'; ' + ', '.join(fixed) if fixed else ''}; fishers {scenario.models.user.spec} as "
                "role user")  # fmt: skip
    if p.game.kind == "donor":
        how = {"select": f"the top {p.revision.survivors:.0%} survive",
               "reflect": "each agent reflects on its play and rewrites its strategy",
               "imitate": f"each agent imitates a better neighbour (Fermi, beta {p.revision.beta:g}, {p.revision.adopt})",
               "mutate": f"strategies rewritten freely with probability {p.revision.mutation:g}"}[p.revision.rule]
        judged = f"; judge {scenario.models.judge.spec} reads play against norm" if p.judge_play else ""
        return (f"donor-game population of {p.agents} agents on a {p.network.kind} network, {p.generations} "
                f"generations, {how}; members {scenario.models.user.spec} as role user{judged}")  # fmt: skip
    members = ", ".join(f"{m.strategy} {m.share:.0%}" + (" (fixed)" if m.fixed else "") for m in p.members)
    graph = "an edge-list" if p.network.kind == "edges" else f"a {p.network.kind}"
    actors = f", played on {p.actors} Ray actors" if p.actors > 1 else ""
    return (f"population of {p.agents} agents on {graph} network, {p.generations} generations of "
            f"{p.game.name}, revision {p.revision.rule}; {members}{actors}")  # fmt: skip


def dry_run(scenario: Any) -> Any:
    """Scripted members call no model (an empty estimate); a donor-game population's calls, counted from its rules,
    first asks only (an unreadable answer is asked again, up to `game.retries` times): the strategies written
    (every `llm` member, then each generation's new agents under select), one donation per donor and round (at most
    one per pair of a maximal matching on a network), and the revisions between generations (reflect: every agent
    not fixed; imitate with merge and mutate: at most that many, as they fall by chance)."""
    import pandas as pd

    from sandbox.population.scenario import member_counts

    columns = ["role", "calls", "cache_hits", "prompt_tokens", "max_answer_tokens"]
    p = scenario.population
    if p.game.kind == "naming":  # two picks an interaction, N interactions a generation (fewer: committed agents)
        calls = 2 * p.agents * p.generations
        return pd.DataFrame([{"role": "user (picks, first asks, at most)", "model": scenario.models.user.spec, "calls": calls,
                              "cache_hits": 0, "prompt_tokens": 350 * calls,
                              "max_answer_tokens": scenario.models.user.sampling.max_tokens * calls}],
                            columns=[*columns[:1], "model", *columns[1:]])  # fmt: skip
    if p.game.kind == "commons":  # at most: every month played, every chat to its last step
        llm = p.agents - sum(n for m, n in zip(p.members, member_counts([m.share for m in p.members], p.agents))
                             if m.strategy != "llm")  # fmt: skip
        months, spec, answer = p.generations, scenario.models.user.spec, scenario.models.user.sampling.max_tokens
        rows = [("user (harvests, first asks)", llm * months, 700)]
        if p.game.talk:
            rows += [("user (chat, at most)", (p.game.talk_steps - 1) * months, 1200),
                     ("user (chat summaries and limits)", 2 * months, 800)]  # fmt: skip
            rows += [("user (notes)", 2 * llm * months, 800)] if p.game.notes else []
        return pd.DataFrame([{"role": role, "model": spec, "calls": calls, "cache_hits": 0,
                              "prompt_tokens": tokens * calls, "max_answer_tokens": answer * calls}
                             for role, calls, tokens in rows], columns=[*columns[:1], "model", *columns[1:]])  # fmt: skip
    if p.game.kind == "matrix" and p.game.play == "llm":  # two moves a turn, every edge a match; reflections
        from sandbox.population.dynamics import network_of

        _, neighbours = network_of(p.agents, p.network, scenario.seed)
        edges = p.agents * (p.agents - 1) // 2 if neighbours.complete else len(neighbours.edges)
        fixed = sum(n for m, n in zip(p.members, member_counts([m.share for m in p.members], p.agents)) if m.fixed)
        reflections = (p.agents - fixed) * (p.generations - 1) if p.revision.rule == "reflect" else 0
        config = scenario.models.user
        rows = [("user (moves)", 2 * edges * p.game.turns * p.generations, 300),
                ("user (reflections)", reflections, 600)]
        return pd.DataFrame([{"role": role, "model": config.spec, "calls": calls, "cache_hits": 0,
                              "prompt_tokens": tokens * calls, "max_answer_tokens": config.sampling.max_tokens * calls}
                             for role, calls, tokens in rows], columns=[*columns[:1], "model", *columns[1:]])  # fmt: skip
    if p.game.kind == "ultimatum":  # first asks; a scored reading (and a guided or rule responder) reads the principle
        # with five calls per member's move (cache hits after the first, as the reading's seed is the principle's)
        counts = member_counts([m.share for m in p.members], p.agents)
        fixed = sum(n for m, n in zip(p.members, counts) if m.fixed)
        assistant = sum(n for m, n in zip(p.members, counts) if m.strategy == "assistant")
        from sandbox.population.dynamics import network_of

        _, neighbours = network_of(p.agents, p.network, scenario.seed)
        edges = p.agents * (p.agents - 1) // 2 if neighbours.complete else len(neighbours.edges)
        episodes = 2 * edges * p.game.rounds * p.generations
        revisions = (assistant if p.revision.rule == "imitate" else p.agents - fixed) * (p.generations - 1)
        learners = (p.agents - fixed) / p.agents  # members' share of the proposals and the decisions
        readings = 5 * episodes * learners * ((p.game.reading == "scored") + (p.game.responder != "paper"))
        rows = [("user and assistant (moves, first asks)", 2 * episodes, 400, scenario.models.user),
                ("user and assistant (principle readings, at most)", round(readings), 500, scenario.models.user),
                ("meta (revisions, first asks)", revisions, 1500, scenario.models.meta)]
        return pd.DataFrame([{"role": role, "model": config.spec, "calls": calls, "cache_hits": 0,
                              "prompt_tokens": tokens * calls, "max_answer_tokens": config.sampling.max_tokens * calls}
                             for role, calls, tokens, config in rows], columns=[*columns[:1], "model", *columns[1:]])  # fmt: skip
    if p.game.kind != "donor":
        return pd.DataFrame([], columns=columns)

    counts = member_counts([m.share for m in p.members], p.agents)
    llm = sum(n for m, n in zip(p.members, counts) if m.strategy == "llm")
    fixed = sum(n for m, n in zip(p.members, counts) if m.fixed)
    rounds = {"notebook": p.agents, "round_robin": p.agents - 1, "network": p.game.rounds or p.agents}[p.game.pairing]
    donations = p.generations * p.game.games * rounds * (p.agents // 2)
    strategies, revisions = llm, 0
    if p.revision.rule == "select":
        strategies += max(0, p.agents - max(fixed, round(p.agents * p.revision.survivors))) * (p.generations - 1)
    elif p.revision.rule == "reflect" or p.revision.mutation or p.revision.adopt == "merge":
        revisions = (p.agents - fixed) * (p.generations - 1)
    answer, spec = scenario.models.user.sampling.max_tokens, scenario.models.user.spec
    rows = [("user (strategies)", strategies, 600), ("user (donations)", donations, 700)]
    if revisions:
        rows.append((f"user ({p.revision.rule}, at most)" if p.revision.rule != "reflect" or p.revision.mutation
                     else "user (reflect)", revisions, 1200))  # fmt: skip
    if p.judge_play:  # one verdict per agent and generation (an agent that made no move as donor is not asked)
        rows.append(("judge (fidelity, at most)", p.agents * p.generations, 500))
    specs = {"judge": scenario.models.judge.spec}
    return pd.DataFrame([{"role": role, "model": specs.get(role.split()[0], spec), "calls": calls, "cache_hits": 0,
                          "prompt_tokens": tokens * calls,
                          "max_answer_tokens": (4 if role.startswith("judge") else answer) * calls}  # a yes or no
                         for role, calls, tokens in rows], columns=[*columns[:1], "model", *columns[1:]])  # fmt: skip


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
    from sandbox.population.run import resume_population
    from sandbox.population.tables import STATE
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
    description="Emergent norms: every agent revises its own strategy each generation on a network: scripted axelrod "
    "strategies by payoff imitation (Fermi rule, Santos & Pacheco, Nowak & May's best neighbour, mutation); LLM "
    "agents in Vallinder & Hughes' donor game by selection, reflection, imitation or mutation of their texts; the naming "
    "game (Ashery et al.) and GovSim's fishery (Piatti et al.) among LLM agents; the ultimatum game among members "
    "who follow and revise principles, with SCAI's fixed users and assistant as members.",
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
    tables={"population": "population.csv", "generations": "generations.csv", "edges": "edges.csv",
            "donations": "donations.csv", "interactions": "interactions.csv", "norms": "norms.csv",
            "revisions": "revisions.csv", "talk": "talk.csv", "notes": "notes.csv",
            "episodes": "episodes.csv", "moves": "moves.csv",
            "transcripts": "transcripts.jsonl"},
    benchmarks={"population": "sandbox.population.bench:bench_population",
                "population-actors": "sandbox.population.bench:bench_population_actors",
                "fidelity": "sandbox.population.fidelity:bench_fidelity"},
    example="scenarios/population/pd_grid_nowak_may.yaml",
    budget=True,
)
