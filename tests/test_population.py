"""The population kind with scripted strategies: evolutionary game theory's known results, the games'
invariants, resume, and bad input.

The known results (without an LLM): on the prisoner's dilemma, well-mixed payoff imitation fixates on
defection; on Nowak & May's lattice cooperators survive in clusters at b = 1.85 (about 30%, "spatial chaos");
a Barabasi-Albert graph keeps more cooperation than a ring lattice of the same mean degree (Santos & Pacheco
2005). Each is checked over 3 seeds at a reduced size.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sandbox.base.seeding import Branch, generator
from sandbox.cli.runs import app
from sandbox.core.scenario_files import parse_kind
from sandbox.population.games.matrix.dynamics import play
from sandbox.population.games.matrix.scripted import ScriptedMatrixGame
from sandbox.population.games.matrix.strategies import MatchTable, payoff_table
from sandbox.population.network import Neighbours
from sandbox.population.revision.rules import revise
from sandbox.population.run import resume_population, run_population

runner = CliRunner()


def scenario(
    agents: int = 100,
    generations: int = 5,
    *,
    network: dict | None = None,
    b: float = 1.5,
    rule: str = "imitate",
    beta: float = 1.0,
    share_c: float = 0.5,
    seed: int = 0,
    **block: Any,
) -> Any:
    members = block.pop(
        "members",
        [{"strategy": "Cooperator", "share": share_c}, {"strategy": "Defector", "share": round(1 - share_c, 10)}],
    )
    revision = {"rule": rule, "beta": beta, **block.pop("revision", {})}
    return parse_kind(
        "population",
        {
            "name": "pop",
            "seed": seed,
            "population": {
                "agents": agents,
                "generations": generations,
                "members": members,
                "game": {"name": "weak_prisoners_dilemma", "temptation": b},
                "network": network or {"kind": "complete"},
                "revision": revision,
                **block,
            },
        },
    )


def final_cooperators(sc: Any) -> tuple[float, float]:
    """The share of Cooperator agents after the last generation, and among them the mean share of Cooperator
    neighbours (assortment)."""
    setup, block = ScriptedMatrixGame(sc), sc.population
    strategies = setup.start_strategies
    for g in range(block.generations):
        rng = generator(sc.seed, Branch.EPOCH, g)
        outcome = play(strategies, setup.table, setup.neighbours, self_play=block.self_play, mean=False, rng=rng)
        strategies = revise(
            strategies,
            outcome.payoff,
            setup.neighbours,
            rule=block.revision.rule,
            beta=block.revision.beta,
            mutation=0.0,
            pool=setup.pool,
            fixed=setup.fixed,
            rng=rng,
        ).strategies
    cooperators = strategies == 0
    nb = setup.neighbours
    if nb.complete or not cooperators.any():
        return float(cooperators.mean()), float("nan")
    around = [cooperators[nb.indices[nb.indptr[x] : nb.indptr[x + 1]]].mean() for x in np.flatnonzero(cooperators)]
    return float(cooperators.mean()), float(np.mean(around))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_well_mixed_imitation_fixates_on_defection(seed: int) -> None:
    share, _ = final_cooperators(scenario(300, 150, b=1.2, seed=seed))
    assert share == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_on_nowak_and_may_lattice_cooperators_survive_in_clusters(seed: int) -> None:
    grid = {"kind": "grid", "neighbourhood": "moore"}
    share, assortment = final_cooperators(
        scenario(900, 60, network=grid, b=1.85, rule="best", share_c=0.9, self_play=True, seed=seed)
    )
    assert 0.15 <= share <= 0.55  # Nowak & May: about 0.32 in the chaotic regime 1.8 < b < 2
    assert assortment > share + 0.2  # cooperators sit beside cooperators: clusters
    mixed, _ = final_cooperators(scenario(900, 60, b=1.85, rule="best", share_c=0.9, self_play=True, seed=seed))
    assert mixed == 0.0  # the same rule, well mixed: the best scorer is a defector among cooperators


@pytest.mark.parametrize(("rule", "gap"), [("proportional", 0.4), ("imitate", 0.5)])
def test_a_scale_free_graph_keeps_more_cooperation_than_a_ring_of_the_same_mean_degree(rule: str, gap: float) -> None:
    ba = [
        final_cooperators(scenario(300, 150, network={"kind": "barabasi_albert", "m": 2}, rule=rule, seed=s))[0]
        for s in range(3)
    ]
    ring = [
        final_cooperators(scenario(300, 150, network={"kind": "ring_lattice", "k": 4}, rule=rule, seed=s))[0]
        for s in range(3)
    ]
    assert np.mean(ba) - np.mean(ring) >= gap, (ba, ring)


def test_the_match_table_is_the_game_times_the_turns() -> None:
    table = MatchTable(["Cooperator", "Defector", "Tit For Tat"], payoff_table("prisoners_dilemma"), turns=10)
    # prisoner's dilemma (R, S, T, P) = (3, 0, 4, 1)
    assert table.payoff[0, 0] == 30 and table.payoff[0, 1] == 0 and table.payoff[1, 0] == 40
    assert table.payoff[1, 1] == 10
    assert table.payoff[2, 1] == 9 and table.payoff[1, 2] == 13  # TFT is exploited once, then defects
    assert table.cooperation[2, 1] == pytest.approx(0.1) and table.cooperation[2, 0] == 1.0


def test_everyone_cooperating_earns_the_games_maximum() -> None:
    sc = scenario(
        50, 2, network={"kind": "ring_lattice", "k": 4}, share_c=1.0, members=[{"strategy": "Cooperator", "share": 1.0}]
    )
    setup = ScriptedMatrixGame(sc)
    outcome = play(
        setup.start_strategies, setup.table, setup.neighbours, self_play=False, mean=False, rng=np.random.default_rng(0)
    )
    assert np.all(outcome.payoff == 4 * 1.0) and np.all(outcome.cooperation == 1.0)  # 4 neighbours x R = 1


def test_the_complete_graph_shortcut_equals_playing_every_edge() -> None:
    sc = scenario(
        40,
        1,
        members=[
            {"strategy": "Cooperator", "share": 0.3},
            {"strategy": "Defector", "share": 0.3},
            {"strategy": "Tit For Tat", "share": 0.4},
        ],
    )
    setup = ScriptedMatrixGame(sc)
    edges = np.array(np.triu_indices(40, 1)).T
    kwargs = {"self_play": False, "mean": False, "rng": np.random.default_rng(0)}
    fast = play(setup.start_strategies, setup.table, setup.neighbours, **kwargs)
    slow = play(setup.start_strategies, setup.table, Neighbours.from_edges(40, edges), **kwargs)
    np.testing.assert_allclose(fast.payoff, slow.payoff)
    np.testing.assert_allclose(fast.cooperation, slow.cooperation)


def test_fixed_members_never_revise_and_mutation_draws_from_the_members() -> None:
    sc = scenario(
        60, 1, members=[{"strategy": "Cooperator", "share": 0.5, "fixed": True}, {"strategy": "Defector", "share": 0.5}]
    )
    setup = ScriptedMatrixGame(sc)
    outcome = play(
        setup.start_strategies, setup.table, setup.neighbours, self_play=False, mean=False, rng=np.random.default_rng(0)
    )
    new = revise(
        setup.start_strategies,
        outcome.payoff,
        setup.neighbours,
        rule="imitate",
        beta=100.0,
        mutation=1.0,
        pool=setup.pool,
        fixed=setup.fixed,
        rng=np.random.default_rng(1),
    ).strategies
    assert np.array_equal(new[setup.fixed], setup.start_strategies[setup.fixed])
    assert set(new[~setup.fixed]) == {0, 1}  # every free agent mutated, to one of the two members' strategies


@pytest.mark.parametrize("rule", ["imitate", "proportional", "best"])
@pytest.mark.parametrize("network", [{"kind": "ring_lattice", "k": 4}, {"kind": "complete"}])
def test_each_revised_agent_names_the_neighbour_whose_strategy_it_took(rule: str, network: dict[str, Any]) -> None:
    """The lineage the network view shows: an agent that took a strategy
    names a neighbour that held it and scored more (or any under the Fermi rule); one that mutated names none."""
    members = [{"strategy": s, "share": 1 / 3} for s in ("Cooperator", "Defector", "Tit For Tat")]
    sc = scenario(60, 1, members=members, network=network)
    setup = ScriptedMatrixGame(sc)
    start = setup.start_strategies
    payoff = play(
        start, setup.table, setup.neighbours, self_play=False, mean=False, rng=np.random.default_rng(0)
    ).payoff
    kwargs = {"rule": rule, "beta": 1.0, "mutation": 0.3, "pool": setup.pool, "fixed": setup.fixed}
    new, source = revise(start, payoff, setup.neighbours, **kwargs, rng=np.random.default_rng(1))  # type: ignore[arg-type]
    took = np.flatnonzero(source >= 0)
    assert len(took) > 5
    assert np.array_equal(new[took], start[source[took]])  # it holds what its source held
    if network["kind"] != "complete":
        _, indptr, indices = setup.neighbours.csr()
        assert all(source[i] in indices[indptr[i] : indptr[i + 1]] for i in took)
    if rule != "imitate":
        assert (payoff[source[took]] > payoff[took]).all()
    changed = np.flatnonzero(new != start)
    assert set(changed) - set(took)  # some changed by mutation, and name no source


def test_an_extinct_stochastic_strategy_leaves_the_well_mixed_payoffs_finite() -> None:
    sc = scenario(
        30,
        1,
        members=[
            {"strategy": "Cooperator", "share": 0.5},
            {"strategy": "Defector", "share": 0.4},
            {"strategy": "Random", "share": 0.1},
        ],
    )
    setup = ScriptedMatrixGame(sc)
    without_random = np.where(setup.start_strategies == 2, 0, setup.start_strategies)
    outcome = play(
        without_random, setup.table, setup.neighbours, self_play=False, mean=False, rng=np.random.default_rng(0)
    )
    assert np.isfinite(outcome.payoff).all() and np.isfinite(outcome.cooperation).all()


def test_a_stochastic_strategy_plays_each_edge_from_the_seed_tree(tmp_path: Path) -> None:
    members = [{"strategy": "Random", "share": 0.5}, {"strategy": "Tit For Tat", "share": 0.5}]
    sc = parse_kind(
        "population",
        {
            "name": "r",
            "seed": 3,
            "population": {
                "agents": 16,
                "generations": 3,
                "members": members,
                "game": {"name": "prisoners_dilemma", "turns": 5},
                "network": {"kind": "ring"},
            },
        },
    )
    one = pd.read_csv(run_population(sc, tmp_path / "a") / "population.csv")
    two = pd.read_csv(run_population(sc, tmp_path / "b") / "population.csv")
    pd.testing.assert_frame_equal(one, two)
    assert one["payoff"].nunique() > 3  # Random's matches differ from edge to edge


def test_a_killed_run_resumes_to_identical_tables(tmp_path: Path) -> None:
    sc = scenario(100, 8, network={"kind": "small_world", "k": 4, "p": 0.2}, revision={"mutation": 0.05})
    whole = run_population(sc, tmp_path / "whole")

    class Killed(BaseException):
        pass

    def kill(generation: int) -> None:
        if generation == 4:
            raise Killed

    with pytest.raises(Killed):
        run_population(sc, tmp_path / "cut", hooks=kill)
    # the kill may also fall between a generation's rows and its state, even mid-row: a partial generation 5
    with (tmp_path / "cut" / "population.csv").open("a") as handle:
        handle.write("5,0,Cooperator,False,1.0,1.0\n5,1,Coop")
    with (tmp_path / "cut" / "generations.csv").open("a") as handle:
        handle.write("2")
    resume_population(tmp_path / "cut")
    # or in the first generation, before any state: the tables start again
    with pytest.raises(Killed):
        run_population(sc, tmp_path / "first", hooks=lambda g: (_ for _ in ()).throw(Killed()))
    for store in (tmp_path / "first").glob("store.sqlite*"):  # a kill before the first checkpoint was saved
        store.unlink()
    with (tmp_path / "first" / "population.csv").open("a") as handle:
        handle.write("0,0,Def")
    resume_population(tmp_path / "first")
    for cut in (tmp_path / "cut", tmp_path / "first"):
        for table in ("population.csv", "edges.csv"):
            pd.testing.assert_frame_equal(pd.read_csv(whole / table), pd.read_csv(cut / table))
        gens = [pd.read_csv(p / "generations.csv").drop(columns="seconds") for p in (whole, cut)]
        pd.testing.assert_frame_equal(*gens)


def test_a_scripted_run_stopped_by_an_error_or_ctrl_c_is_marked_failed_or_interrupted_and_resumes(
    tmp_path: Path,
) -> None:
    from sandbox.base.errors import RunFailedError
    from sandbox.core.run_dir import run_status

    sc = scenario(30, 3)

    def fail(generation: int) -> None:
        if generation == 1:
            raise ValueError("a bad generation")

    with pytest.raises(RunFailedError, match=f"sandbox resume {tmp_path / 'failed'}"):
        run_population(sc, tmp_path / "failed", hooks=fail)
    status = json.loads((tmp_path / "failed" / "run.json").read_text())
    assert run_status(tmp_path / "failed") == "failed" and "a bad generation" in status["error"], status
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C goes on as it is
        run_population(sc, tmp_path / "stopped", hooks=lambda g: (_ for _ in ()).throw(KeyboardInterrupt()))
    assert run_status(tmp_path / "stopped") == "interrupted"
    for path in (tmp_path / "failed", tmp_path / "stopped"):
        resume_population(path)
        assert run_status(path) == "complete"


def _write(tmp: Path, name: str, data: dict) -> Path:
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"network": {"kind": "hexagonal"}}, "population.network.kind"),
        ({"agents": 50, "network": {"kind": "grid"}}, "grid needs a square number of agents"),
        ({"agents": 10, "network": {"kind": "edges", "edges": [[0, 1], [1, 2]]}}, "fewer than the 10 agents"),
        ({"members": [{"strategy": "Cooperator", "share": 0.5}]}, "sum to 0.5"),
        ({"members": [{"strategy": "Tit For Tot", "share": 1.0}]}, "unknown axelrod strategy 'Tit For Tot'"),
        ({"revision": {"rule": "learn"}}, "population.revision.rule"),
        ({"revision": {"rule": "reflect"}}, "revision.rule reflect rewrites norm texts"),
        (
            {"agents": 4, "network": {"kind": "edges", "edges": [[0, 0], [1, 2], [2, 3], [3, 0]]}},
            "joins an agent to itself",
        ),
        ({"agents": 4, "network": {"kind": "edges", "edges": [[-1, 1], [1, 2], [2, 3]]}}, "names agent -1"),
        ({"game": {"name": "bach_or_stravinsky"}}, "not symmetric"),
        (
            {
                "agents": 9,
                "members": [{"strategy": "Cooperator", "share": 0.95}, {"strategy": "Defector", "share": 0.05}],
            },
            "population.members[1].share: 0.05 of 9 agents rounds to no agent",
        ),
        ({"game": {"name": "prisoner_dilemma"}}, "population.game"),
        (
            {"agents": 5000, "network": {"kind": "complete"}, "members": [{"strategy": "Random", "share": 1.0}]},
            "at most 2000 agents",
        ),
    ],
)
def test_bad_input_exits_2_naming_the_field_and_writes_nothing(tmp_path: Path, change: dict, field: str) -> None:
    base = yaml.safe_load(Path("scenarios/population/pd_grid_nowak_may.yaml").read_text())
    base["population"] = {**base["population"], **change}
    path = _write(tmp_path, "bad", base)
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(path), "--out", str(out)])
    text = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert str(path) in text and field in text, result.output
    assert not out.exists()


def test_the_cli_runs_and_resumes_a_population(tmp_path: Path) -> None:
    data = yaml.safe_load(Path("scenarios/population/pd_well_mixed.yaml").read_text())
    data["population"] = {**data["population"], "agents": 50, "generations": 3}
    path = _write(tmp_path, "small", data)
    result = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "run"), "--seed", "4"])
    assert result.exit_code == 0, result.output
    assert "cooperation" in result.output and (tmp_path / "run" / "cooperation.png").is_file()
    assert len(pd.read_csv(tmp_path / "run" / "population.csv")) == 150
    again = runner.invoke(app, ["resume", str(tmp_path / "run")])
    assert again.exit_code == 0, again.output


def test_mutation_alone_drifts_and_spares_the_fixed(tmp_path: Path) -> None:
    data = {
        "name": "drift",
        "seed": 2,
        "population": {
            "agents": 200,
            "generations": 5,
            "game": {"name": "weak_prisoners_dilemma", "temptation": 1.5},
            "members": [
                {"strategy": "Cooperator", "share": 0.5, "fixed": True},
                {"strategy": "Defector", "share": 0.5},
            ],
            "network": {"kind": "ring_lattice", "k": 4},
            "revision": {"rule": "mutate", "mutation": 0.2},
        },
    }
    path = run_population(parse_kind("population", data), tmp_path / "run")
    population = pd.read_csv(path / "population.csv")
    assert (population[population["fixed"]]["strategy"] == "Cooperator").all()
    free = population[~population["fixed"]]
    last = free[free["generation"] == 4]["strategy"].value_counts(normalize=True)
    # a free agent mutates with probability 0.2 to a strategy drawn from the two: p_C <- 0.1 + 0.8 p_C from 0, so
    # 0.295 after 4 revisions (100 free agents: a standard deviation of 0.046); no imitation moves it
    assert 0.1 < last.get("Cooperator", 0) < 0.5


def test_an_edge_list_file_is_read_relative_to_the_scenario(tmp_path: Path) -> None:
    from sandbox.core.scenario_files import load_scenario

    scenario = load_scenario("scenarios/population/pd_karate_club.yaml")
    assert len(scenario.population.network.edges) == 78  # Zachary's karate club
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "g.txt").write_text("# a square\n0 1\n1 2 0.5\n2 3\n\n3 0  # the last\n")
    data = {
        "name": "sq",
        "population": {
            "agents": 4,
            "generations": 2,
            "members": [{"strategy": "Cooperator", "share": 1.0}],
            "network": {"kind": "edges", "edges_file": "g.txt"},
        },
    }
    (folder / "s.yaml").write_text(yaml.safe_dump(data))
    path = run_population(load_scenario(folder / "s.yaml"), tmp_path / "run")
    assert sorted(map(tuple, pd.read_csv(path / "edges.csv").to_numpy().tolist())) == [(0, 1), (0, 3), (1, 2), (2, 3)]
    assert "edges_file" not in (path / "scenario.yaml").read_text()  # the run holds the edges themselves


@pytest.mark.parametrize(
    ("network", "words"),
    [
        ({"kind": "edges", "edges_file": "missing.txt"}, "population.network.edges_file"),
        ({"kind": "edges", "edges_file": "bad.txt"}, "line 2 is not two agent numbers"),
        ({"kind": "ring", "edges_file": "g.txt"}, "is read with kind edges"),
    ],
)
def test_a_bad_edge_list_file_exits_2_naming_the_field(tmp_path: Path, network: dict, words: str) -> None:
    (tmp_path / "bad.txt").write_text("0 1\n1 two\n")
    (tmp_path / "g.txt").write_text("0 1\n")
    data = {
        "name": "x",
        "population": {
            "agents": 4,
            "generations": 2,
            "members": [{"strategy": "Cooperator", "share": 1.0}],
            "network": network,
        },
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["run", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert words in " ".join(result.output.split()) and str(tmp_path / "s.yaml") in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "scenario, model, words",
    [
        ("pd_grid_nowak_may.yaml", "user=embedded", "no member of this population calls a model"),
        ("donor_small.yaml", "judge=embedded", "ROLE user or all"),  # no judge_play: no judge is asked
        ("donor_small.yaml", "assistant=embedded", "ROLE user or all"),
        ("donor_judged_small.yaml", "meta=embedded", "ROLE user, judge or all"),
        ("govsim_small.yaml", "meta=embedded", "ROLE user or all"),
        ("ultimatum_small.yaml", "judge=embedded", "ROLE user, assistant, meta or all"),
    ],
)
def test_a_model_for_a_role_the_game_does_not_read_exits_2(
    tmp_path: Path, scenario: str, model: str, words: str
) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", f"scenarios/population/{scenario}", "--out", str(out), "--model", model])
    assert result.exit_code == 2, result.output
    assert "--model" in result.output and words in " ".join(result.output.split()), result.output
    assert not out.exists()


def test_a_model_for_a_role_the_game_reads_is_taken() -> None:
    from sandbox.population.kind import load, overrides

    judged = overrides(load("scenarios/population/donor_judged_small.yaml"), models=["judge=openai:m", "user=openai:u"])
    assert (judged.models.judge.spec, judged.models.user.spec) == ("openai:m", "openai:u")
    every = overrides(load("scenarios/population/ultimatum_small.yaml"), models=["all=openai:x"])
    assert {every.models.user.spec, every.models.assistant.spec, every.models.meta.spec} == {"openai:x"}


def test_a_member_rounding_to_no_agent_is_refused_by_a_new_run_but_an_old_run_still_loads(tmp_path: Path) -> None:
    from sandbox.base.errors import ScenarioError
    from sandbox.population.kind import load

    data = yaml.safe_load(Path("scenarios/population/pd_well_mixed.yaml").read_text())
    data["population"] = {
        **data["population"],
        "agents": 9,
        "generations": 2,
        "members": [{"strategy": "Cooperator", "share": 0.95}, {"strategy": "Defector", "share": 0.05}],
    }
    path = _write(tmp_path, "tiny", data)
    scenario = load(path)  # a run directory made before the check holds such a scenario: it loads
    with pytest.raises(ScenarioError, match=r"members\[1\]\.share: 0.05 of 9 agents rounds to no agent"):
        run_population(scenario, tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_run_the_hand_written_loops_checkpointed_is_refused_with_exit_2_and_left_as_it_was(tmp_path: Path) -> None:
    killed = run_population(scenario(50, 3), tmp_path / "old", hooks=lambda g: None)
    (killed / "state.json").write_text('{"generation": 1}')  # the checkpoint of the loops before the engine
    for store in killed.glob("store.sqlite*"):
        store.unlink()
    before = {p.name: p.read_bytes() for p in killed.iterdir() if p.is_file()}
    result = runner.invoke(app, ["resume", str(killed)])
    assert result.exit_code == 2, result.output
    assert "older sandbox" in result.output and "state.json" in result.output
    assert {p.name: p.read_bytes() for p in killed.iterdir() if p.is_file()} == before


def test_the_axelrod_catalogue_is_the_installed_librarys() -> None:
    """Validation reads axelrod's strategies from the shipped catalogue; it must list what the installed library
    has (names, classes and the stochastic classifier), else `python -m sandbox.population.games.matrix.strategies` rewrites it."""
    from sandbox.population.games.matrix.strategies import CATALOGUE, catalogue_from_axelrod, strategy_class

    shipped = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    assert shipped == catalogue_from_axelrod()
    assert strategy_class("Tit For Tat").__name__ == "TitForTat"
    assert strategy_class("TitForTat").name == "Tit For Tat"


def test_axelrod_classifies_every_strategy_the_same_with_its_sources_read_once() -> None:
    """`import_axelrod` keeps `inspect.getsource`'s answers for the import's length: every strategy, transformed ones
    included, is classified (the match attributes it uses, and its whole classifier) as with the library's own reads,
    and the library's `inspect.getsource` is back afterwards."""
    import inspect

    from sandbox.population.games.matrix.strategies import _sources_read_once, import_axelrod

    read = inspect.getsource
    axl = import_axelrod()
    assert inspect.getsource is read

    def classified() -> dict[str, object]:
        players = [cls() for cls in axl.all_strategies]  # each made now: transformed ones re-read their sources
        return {
            p.__class__.__name__: (sorted(axl.Classifiers["makes_use_of"](p)), repr(sorted(p.classifier.items())))
            for p in players
        }

    with _sources_read_once():
        once = classified()
        assert inspect.getsource is not read
    assert inspect.getsource is read
    assert once == classified()
    assert any(uses for uses, _ in once.values())  # some strategies use match attributes (the game, the length)


def test_validation_and_dry_runs_do_not_import_axelrod() -> None:
    """`sandbox validate` and `--dry-run` of a scripted matrix population never import axelrod (11 to 20 s of CPU):
    a child process whose `import axelrod` fails does both, and tells a stochastic strategy and refuses an unknown
    one from the catalogue alone."""
    import subprocess
    import sys

    code = """
import builtins, sys
real_import = builtins.__import__
def no_axelrod(name, *args, **kwargs):
    if name.split(".")[0] == "axelrod":
        raise AssertionError("axelrod imported")
    return real_import(name, *args, **kwargs)
builtins.__import__ = no_axelrod  # any import of axelrod fails (what the extra's check finds stays installed)
from typer.testing import CliRunner
from sandbox.cli.runs import app
r = CliRunner()
for args in (["validate", "scenarios/population/pd_grid_nowak_may.yaml"],
             ["run", "scenarios/population/pd_well_mixed.yaml", "--dry-run"]):
    result = r.invoke(app, args)
    assert result.exit_code == 0, result.output
from sandbox.population.games.matrix.strategies import is_stochastic, strategy
assert is_stochastic("Random") and not is_stochastic("Tit For Tat")
try:
    strategy("Tit For Tot")
except ValueError as error:
    assert "did you mean 'Tit For Tat'" in str(error), error
else:
    raise AssertionError("an unknown strategy passed")
print("no axelrod")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no axelrod" in done.stdout


def test_every_registered_game_has_settings_of_its_kind_and_a_concrete_plugin_for_each_play() -> None:
    """The registry lists the built-in games; each names settings whose kind is its own, the `game:` union takes
    them all, and each of its plug-ins implements every step of the engine's graph (an abstract one cannot be made);
    a matrix game's settings choose its scripted or its LLM plug-in."""
    import inspect
    import typing

    from sandbox.core.kinds import resolve
    from sandbox.population.game import PopulationGame
    from sandbox.population.games.matrix.llm import LLMMatrixGame
    from sandbox.population.games.matrix.scripted import ScriptedMatrixGame
    from sandbox.population.games.matrix.spec import MatrixSpec
    from sandbox.population.registry import games, plugin_for
    from sandbox.population.scenario import GameSpec

    assert {"matrix", "donor", "naming", "commons", "ultimatum"} <= set(games())
    union = [typing.get_args(member)[0] for member in typing.get_args(typing.get_args(GameSpec)[0])]
    assert union == [entry.spec_class() for entry in games().values()]
    for kind, entry in games().items():
        assert typing.get_args(entry.spec_class().model_fields["kind"].annotation) == (kind,)
        for reference in entry.plugins.values():
            player = resolve(reference)
            assert issubclass(player, PopulationGame) and not inspect.isabstract(player), reference
    assert plugin_for(MatrixSpec(play="llm")) is LLMMatrixGame
    assert plugin_for(MatrixSpec()) is ScriptedMatrixGame
