"""LLM populations at scale: the checks before a large run starts, the command line's bar of calls, and the
benchmark against the loopback server (`sandbox bench population-llm`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from sandbox.cli.runs import app

runner = CliRunner()


def _llm_population(tmp_path: Path, **changes: Any) -> Path:
    data: dict[str, Any] = {
        "name": "scale",
        "population": {
            "agents": 1000,
            "generations": 3,
            "members": [{"strategy": "Always cooperate.", "share": 1.0}],
            "network": {"kind": "ring"},
            "game": {"kind": "matrix", "play": "llm", "turns": 1},
            "revision": {"rule": "imitate"},
        },
    }
    for key, value in changes.items():
        *parents, last = key.split(".")
        node = data
        for parent in parents:
            node = node.setdefault(parent, {})
        node[last] = value
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    "budget, field, words",
    [
        ({"calls": 1999}, "budget.calls", "up to 2,000 calls"),  # a ring of 1,000: 1,000 matches, 2 moves each
        ({"tokens": 1000}, "budget.tokens", "raise budget.tokens or lower population.agents"),
    ],
)
def test_a_population_whose_one_generation_exceeds_the_budget_exits_2_naming_the_field(
    tmp_path: Path, budget: dict[str, int], field: str, words: str
) -> None:
    scenario = _llm_population(tmp_path, budget=budget)
    result = runner.invoke(app, ["run", str(scenario), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert field in said and words in said and str(scenario) in said
    assert not (tmp_path / "out").exists()


def test_a_budget_that_covers_one_generation_is_taken(tmp_path: Path) -> None:
    from sandbox.population.kind import load
    from sandbox.population.scenario import over_budget

    assert over_budget(load(_llm_population(tmp_path, budget={"calls": 2000}))) == []  # it stops, resumable, later


@pytest.mark.parametrize("activation", [0, -0.1, 1.5])
def test_an_activation_outside_0_to_1_exits_2_naming_the_field(tmp_path: Path, activation: float) -> None:
    scenario = _llm_population(tmp_path, **{"population.game.activation": activation})
    result = runner.invoke(app, ["run", str(scenario), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "population.game.activation" in " ".join(result.output.split())
    assert not (tmp_path / "out").exists()


def test_with_an_activation_a_drawn_share_of_the_matches_takes_place_the_same_in_every_run(tmp_path: Path) -> None:
    from sandbox.base.files import read_csv
    from sandbox.population.kind import load
    from sandbox.population.run import run_population
    from tests.test_population_matrix_llm import Members

    scenario = load(
        _llm_population(
            tmp_path, **{"population.agents": 200, "population.generations": 2, "population.game.activation": 0.25}
        )
    )
    runs = [run_population(scenario, tmp_path / f"run{k}", models={"user": Members().model()}) for k in range(2)]
    moves = [read_csv(path / "moves.csv") for path in runs]
    pd_equal = moves[0].equals(moves[1])
    assert pd_equal  # drawn from the seed tree
    for g in (0, 1):
        played = moves[0][moves[0]["generation"] == g]["match"]
        assert 30 <= len(played) <= 70 and played.is_unique  # about a quarter of the ring's 200 matches
    assert set(moves[0][moves[0]["generation"] == 0]["match"]) != set(moves[0][moves[0]["generation"] == 1]["match"])
    generations = read_csv(runs[0] / "generations.csv")
    assert generations["moves"].tolist() == [2 * (moves[0]["generation"] == g).sum() for g in (0, 1)]


def test_the_benchmark_reports_each_run_against_its_concurrency_bound() -> None:
    from sandbox.population.bench.llm import bench_population_llm

    (row,) = bench_population_llm(
        sizes=((200, 1),), games=("matrix",), latency_s=0.02, concurrency=64, with_calls=False
    )
    assert row["calls"] == 400  # a ring of 200: 200 matches of one turn, two moves each
    assert row["bound_s"] == pytest.approx(400 * 0.02 / 64)
    assert row["span_s"] >= row["bound_s"] * 0.9 and row["whole_s"] >= row["span_s"]  # no call beats the latency
    assert row["peak_bytes"] > 0 and 500 < row["transcript_bytes_per_call"] < 5000 and row["cpu_ms_per_call"] > 0
    assert row["store_bytes"] > 0 and 0 < row["imports_s"] < row["first_call_s"] < row["imports_s"] + row["whole_s"]
    assert row["command_ratio"] > row["whole_ratio"]


def test_a_million_agents_play_at_oasis_activation_and_the_benchmark_reads_its_sizes(monkeypatch) -> None:
    from sandbox.base.errors import UsageError
    from sandbox.population.bench.llm import scale_scenario, sizes_asked
    from sandbox.population.scenario import over_budget

    scenario = scale_scenario("matrix", 1_000_000, "openai:bench@http://127.0.0.1:9/v1")
    assert scenario.population.game.activation == 0.01 and not over_budget(scenario)
    assert scale_scenario("naming", 10_000, "openai:bench@http://127.0.0.1:9/v1").population.game.activation == 1
    monkeypatch.setenv("SANDBOX_BENCH_AGENTS", "1000000:2,500")
    assert sizes_asked() == ((1_000_000, 2), (500, 1))
    monkeypatch.setenv("SANDBOX_BENCH_AGENTS", "a million")
    with pytest.raises(UsageError, match="SANDBOX_BENCH_AGENTS"):
        sizes_asked()


@pytest.mark.slow  # over half a minute
def test_llm_members_on_two_ray_actors_write_the_same_tables_and_transcript_as_one_process_and_resume(
    tmp_path: Path,
) -> None:
    import json

    import pandas as pd

    from sandbox.population.kind import load
    from sandbox.population.run import resume_population, run_population
    from sandbox.society.loopback_server import server_process

    class Killed(BaseException):
        pass

    def kill(generation: int) -> None:
        if generation == 0:
            raise Killed

    with (
        server_process(latency_s=0.01, rules="population") as a,
        server_process(latency_s=0.01, rules="population") as b,
    ):
        changes = {
            "population.agents": 60,
            "population.generations": 2,
            "population.game.turns": 2,
            "models": {"user": {"spec": f"openai:bench@{a},{b}", "sampling": {"temperature": 0.7, "max_tokens": 20}}},
        }
        alone = run_population(load(_llm_population(tmp_path, **changes)), tmp_path / "alone")
        on_actors = load(_llm_population(tmp_path, **changes, **{"population.actors": 2}))
        with pytest.raises(Killed):
            run_population(on_actors, tmp_path / "actors", hooks=kill)
        counted: list[Any] = []
        resume_population(tmp_path / "actors", on_call=counted.append)  # the bar of calls, fed from the actors
    _ray_stopped()
    assert counted == [None] * (2 * 60 * 2)  # generation 1's calls, each counted once
    actors = tmp_path / "actors"
    for table in ("moves.csv", "population.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(alone / table), pd.read_csv(actors / table))
    calls = [[json.loads(line) for line in open(path / "transcripts.jsonl")] for path in (alone, actors)]
    assert len(calls[0]) == len(calls[1]) == 2 * 60 * 2 * 2  # every call once, the actors' appended
    assert sorted((c["call_id"], c["answer"]) for c in calls[0]) == sorted(
        (c["call_id"], c["answer"]) for c in calls[1]
    )
    assert {c["endpoint"] for c in calls[1]} == {a, b}  # each actor its share of the pool
    assert not list(actors.glob("transcripts.actor*"))
    usage = json.loads((actors / "actors.json").read_text())
    assert [u["actor"] for u in usage] == [0, 1] and all(u["peak_bytes"] > 0 for u in usage)


def _ray_stopped() -> None:
    """The actors were released after the last generation's play and Ray stopped in a thread of its own: the run
    returned only after that thread's end."""
    import threading

    import ray

    assert not ray.is_initialized()
    assert not [t for t in threading.enumerate() if t.name == "ray-shutdown"]


@pytest.mark.slow  # Ray's start
def test_the_naming_game_on_two_ray_actors_writes_the_same_tables_and_transcript_as_one_process(
    tmp_path: Path,
) -> None:
    import json

    import pandas as pd

    from sandbox.population.kind import load
    from sandbox.population.run import run_population
    from sandbox.society.loopback_server import server_process

    with (
        server_process(latency_s=0.01, rules="population") as a,
        server_process(latency_s=0.01, rules="population") as b,
    ):
        changes = {
            "population.agents": 40,
            "population.generations": 2,
            "population.members": [{"strategy": "llm", "share": 0.9}, {"strategy": "M", "share": 0.1, "fixed": True}],
            "population.network": {"kind": "complete"},
            "population.game": {"kind": "naming", "words": ["Q", "M"], "update": "pairs", "memory": 3},
            "population.revision": {"rule": "memory"},
            "models": {"user": {"spec": f"openai:bench@{a},{b}", "sampling": {"temperature": 0.7, "max_tokens": 20}}},
        }
        alone = run_population(load(_llm_population(tmp_path, **changes)), tmp_path / "alone")
        counted: list[Any] = []
        actors = run_population(
            load(_llm_population(tmp_path, **changes, **{"population.actors": 2})),
            tmp_path / "actors",
            on_call=counted.append,
        )
    _ray_stopped()
    for table in ("interactions.csv", "population.csv", "held.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(alone / table), pd.read_csv(actors / table))
    calls = [[json.loads(line) for line in open(path / "transcripts.jsonl")] for path in (alone, actors)]
    assert len(calls[0]) == len(calls[1]) == len(counted) > 0  # every call once, the actors' appended and counted
    assert [(c["call_id"], c["answer"]) for c in calls[0]] == [(c["call_id"], c["answer"]) for c in calls[1]]
    assert {c["endpoint"] for c in calls[1]} == {a, b}  # each actor its share of the pool
    assert not list(actors.glob("transcripts.actor*"))
    assert [u["actor"] for u in json.loads((actors / "actors.json").read_text())] == [0, 1]


def test_llm_members_on_actors_need_an_endpoint_and_no_budget(tmp_path: Path) -> None:
    for changes, field in (
        ({"population.actors": 2}, "population.actors"),  # the embedded model, by default
        (
            {"population.actors": 2, "budget": {"calls": 100000}, "models": {"user": {"spec": "openai:m@http://a/v1"}}},
            "budget",
        ),
        (
            {"population.actors": 4, "concurrency": 2, "models": {"user": {"spec": "openai:m@http://a/v1"}}},
            "raise concurrency to at least the actors",
        ),
    ):
        scenario = _llm_population(tmp_path, **changes)
        result = runner.invoke(app, ["run", str(scenario), "--out", str(tmp_path / "out")])
        assert result.exit_code == 2, result.output
        assert field in " ".join(result.output.split())
        assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("activation, per_generation", [(1.0, 10), (0.5, 5)])
def test_the_llm_naming_game_in_rounds_of_disjoint_pairs_numbers_every_interaction_once(
    tmp_path: Path, activation: float, per_generation: int
) -> None:
    import pandas as pd

    from sandbox.population.run import run_population
    from tests.test_population_naming import Copier, naming

    scenario = naming(10, 3, stop_at_consensus=False, update="pairs", activation=activation)
    path = run_population(scenario, tmp_path / "run", models={"user": Copier().model()})
    rows = pd.read_csv(path / "interactions.csv")
    assert rows["interaction"].tolist() == list(range(1, len(rows) + 1))  # over the run, across generations
    for _, generation in rows.groupby("generation"):
        assert len(generation) == per_generation  # a complete graph of 10: rounds of 5 disjoint pairs
        for start in range(0, len(generation), 5):
            round_ = generation.iloc[start : start + 5]
            agents = [*round_["a"], *round_["b"]]
            assert len(set(agents)) == len(agents)  # a round's pairs are disjoint
    assert len(rows) == 3 * per_generation


def test_a_generation_in_which_no_match_is_drawn_has_no_illegal_rate(tmp_path: Path) -> None:
    from sandbox.base.files import read_csv, read_json
    from sandbox.population.kind import load
    from sandbox.population.run import run_population
    from tests.test_population_matrix_llm import Members

    changes = {"population.agents": 4, "population.generations": 2, "population.game.activation": 0.001}
    path = run_population(
        load(_llm_population(tmp_path, **changes)), tmp_path / "run", models={"user": Members().model()}
    )
    generations = read_csv(path / "generations.csv")
    assert generations["moves"].tolist() == [0, 0] and generations["illegal_rate"].isna().all()
    assert read_json(path / "summary.json")["illegal_rate"] is None


def test_model_objects_given_to_a_population_on_actors_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    from sandbox.base.errors import UsageError
    from sandbox.population.kind import load
    from sandbox.population.run import run_population
    from tests.test_population_matrix_llm import Members

    changes = {"population.actors": 2, "models": {"user": {"spec": "openai:m@http://127.0.0.1:9/v1"}}}
    with pytest.raises(UsageError, match="population.actors 2: the actors call the scenario's openai: endpoints"):
        run_population(load(_llm_population(tmp_path, **changes)), tmp_path / "out", models={"user": Members().model()})
    assert not (tmp_path / "out").exists()


ASHERY = Path(__file__).parents[1] / "sandbox/examples/scenarios/population"


@pytest.mark.parametrize(
    "item, field",
    [
        ("population.agnets=200", "population.agnets: not a field of the scenario"),
        ("population.agents=1", "population.agents: Input should be greater than or equal to 2"),
        ("population.game.activation=1.5", "population.game.activation"),
        ("population.agents", "--set 'population.agents': write FIELD=VALUE"),
        ("population.agents=[1", "population.agents: Input should be a valid integer"),
    ],
)
def test_a_set_the_scenario_refuses_exits_2_naming_the_field_and_writes_nothing(
    tmp_path: Path, item: str, field: str
) -> None:
    out = tmp_path / "run"
    result = runner.invoke(app, ["run", str(ASHERY / "naming_ashery.yaml"), "--set", item, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert field in " ".join(result.output.split())
    assert "=" not in item or "naming_ashery.yaml (--set)" in result.output  # the file, where the field is its
    assert not out.exists()


def test_ashery_s_files_run_unchanged_at_200_agents_on_an_endpoint(tmp_path: Path) -> None:
    """The scenario and its committed-minority sweep, as shipped, at the press's 200 agents against an
    OpenAI-compatible server (`--model user=openai:MODEL`, sizes by `--set`): every pick legal, the committed
    shares those of 200 agents."""
    import json

    import pandas as pd

    from sandbox.society.loopback_server import server_process

    with server_process(latency_s=0.0, rules="population") as url:
        model = ["--model", f"user=openai:llama-3-70b@{url}"]
        one = [*model, "--set", "population.agents=200", "--set", "population.generations=1"]
        result = runner.invoke(app, ["run", str(ASHERY / "naming_ashery.yaml"), *one, "--out", str(tmp_path / "a")])
        assert result.exit_code == 0, result.output
        sizes = ["--set", "sweep.base.population.agents=200", "--set", "sweep.base.population.generations=1"]
        sweep = [*model, *sizes, "--set", "sweep.seeds=1", "--set", "sweep.workers=2", "--out", str(tmp_path / "s")]
        result = runner.invoke(app, ["run", str(ASHERY / "sweep_naming_llm_committed.yaml"), *sweep])
        assert result.exit_code == 0, result.output
    interactions = pd.read_csv(tmp_path / "a" / "interactions.csv")
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert len(interactions) == 200 and summary["agents"] == 200 and summary["illegal_rate"] == 0.0
    assert interactions[["a", "b"]].stack().nunique() > 150  # pairs drawn among all 200 agents
    calls = [json.loads(line) for line in open(tmp_path / "a" / "transcripts.jsonl")]
    assert len(calls) == 400 and {c["model"] for c in calls} == {f"openai:llama-3-70b@{url}"}
    table = pd.read_csv(tmp_path / "s" / "sweep.csv")
    assert (table["status"] == "complete").all() and list(table["summary.agents"]) == [200] * 7
    assert list(table["summary.committed_share"]) == [0.0, 0.04, 0.085, 0.125, 0.165, 0.21, 0.25]


def test_sandbox_sweep_takes_a_model_and_sets_for_every_run() -> None:
    file = str(ASHERY / "sweep_naming_llm_committed.yaml")
    changes = [
        "--model",
        "user=openai:llama-3-70b",
        "--set",
        "sweep.base.population.agents=200",
        "--set",
        "sweep.seeds=1",
    ]
    result = runner.invoke(app, ["sweep", file, *changes, "--dry-run"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "7 runs" in text and "openai:l" in text  # the model of every run, in the table's narrow column
    assert "84000" in text  # 7 runs x 30 generations x 200 interactions x 2 picks, at most
    result = runner.invoke(app, ["sweep", file, "--model", "judge=openai:x", "--dry-run"])
    assert result.exit_code == 2 and "--model" in result.output


def test_a_sweep_refuses_a_model_or_seed_its_grid_varies(tmp_path: Path) -> None:
    base = str(ASHERY / "naming_ashery.yaml")
    for option, grid in (
        (["--model", "user=openai:x"], {"models.user.spec": ["openai:a"]}),
        (["--seed", "7"], {"seed": [1, 2]}),
    ):
        path = tmp_path / "sweep.yaml"
        path.write_text(yaml.safe_dump({"name": "s", "sweep": {"base": base, "grid": grid}}))
        result = runner.invoke(app, ["run", str(path), *option, "--dry-run"])
        assert result.exit_code == 2 and f"the sweep's grid varies {next(iter(grid))}" in result.output
    result = runner.invoke(app, ["run", str(ASHERY / "sweep_naming_llm_committed.yaml"), "--seed", "7", "--dry-run"])
    assert result.exit_code == 0, result.output  # no seed in its grid: the runs' seeds start at 7


def test_a_million_agents_on_a_complete_network_draw_their_matches_without_listing_its_pairs() -> None:
    from sandbox.population.bench.llm import scale_scenario
    from sandbox.population.games.matrix.llm import LLMMatrixGame
    from sandbox.population.scenario import over_budget

    scenario = scale_scenario("matrix", 1_000_000, "openai:bench@http://127.0.0.1:9/v1")
    block = scenario.population.model_copy(
        update={
            "network": scenario.population.network.model_copy(update={"kind": "complete"}),
            "game": scenario.population.game.model_copy(update={"activation": 2e-8}),
        }
    )
    scenario = scenario.model_copy(update={"population": block})
    assert not over_budget(scenario)
    game = LLMMatrixGame(scenario, lambda role: None)  # type: ignore[arg-type,return-value]
    assert game.edges == 1_000_000 * 999_999 // 2
    drawn = game.pair({"agents": [], "next_id": 0}, 0)
    assert drawn is not None and 9_000 < len(drawn) < 11_000 and drawn == sorted(set(drawn))
    assert drawn == game.pair({"agents": [], "next_id": 0}, 0)  # from the generation's node of the seed tree
    for k in drawn[:50] + drawn[-50:]:
        a, b = game._pair(k)
        assert 0 <= a < b < 1_000_000


def test_the_call_benchmark_measures_the_stack_and_langchain_s_client_in_one_run() -> None:
    from sandbox.population.bench.call_cpu import bench_call_cpu

    figures = bench_call_cpu(calls=200, baseline_calls=50)
    assert figures["calls"] == 200 and figures["baseline_calls"] == 50
    assert figures["stack_ms"] > 0 and figures["baseline_ms"] > 0
    assert figures["stack_calls_per_s"] == pytest.approx(1000 / figures["stack_ms"])
    assert figures["ratio"] == pytest.approx(figures["stack_ms"] / figures["baseline_ms"])
