"""Forks and replays (issue 51): a run forked at a step keeps the parent's steps before it, runs on with its
changes, and costs only the calls the changes cause; a finished run replays offline to identical tables; bad input
exits 2 and writes nothing. The kinds' conformance (a fork without change is identical and costs no call, for every
kind that checkpoints steps) is in tests/test_conformance.py. Scripted models only: never a simulation result.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

import sandbox
from sandbox.cli.runs import app
from sandbox.core import kinds
from sandbox.core.run_dir import hold
from sandbox.core.steps import forks_of, lineage, parse_changes
from sandbox.engine.replay import replay_run
from sandbox.population.run import run_population
from tests.test_population_naming import Copier, naming

runner = CliRunner()


def _case(name: str) -> Any:
    return kinds.resolve(kinds.get(name).conformance)


def _transcript(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (path / "transcripts.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def society(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("society")
    case = _case("society")
    return sandbox.run(case.scenario(tmp), out=tmp / "parent", models=case.models()).path


@pytest.fixture(scope="module")
def population(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("population")
    case = _case("population")
    return sandbox.run(case.scenario(tmp), out=tmp / "parent").path


def test_changes_are_read_as_yaml_and_a_text_with_a_colon_stays_text() -> None:
    assert parse_changes(["a.b=2", "c=[1, 2]", "state.policy=Share: equally.", "d=fair"]) == {
        "a.b": 2,
        "c": [1, 2],
        "state.policy": "Share: equally.",
        "d": "fair",
    }


def test_a_policy_reset_at_an_epoch_plays_from_that_epoch_and_costs_only_its_calls(
    society: Path, tmp_path: Path
) -> None:
    case = _case("society")
    models = case.models()
    share = "Share everything equally with everyone."
    fork = sandbox.fork(society, at=1, changes={"state.policy": share}, out=tmp_path / "fork", models=models)
    policies = fork.table("policies")
    assert list(policies[policies["run"] == 0]["policy"]) == [policies["policy"].iloc[0], share]
    episodes, parent = fork.table("episodes"), pd.read_csv(society / "episodes.csv")
    pd.testing.assert_frame_equal(episodes[episodes["epoch"] == 0], parent[parent["epoch"] == 0])  # the parent's
    offers = episodes[(episodes["epoch"] == 1) & (episodes["interaction"] == "assistant-proposer")]["offered_share"]
    assert (offers.astype(float).round(1) == 0.5).all()  # the scripted assistant offers half under the new policy
    made = [r for r in _transcript(fork.path) if not r["cache_hit"] and (r["epoch"] or 0) >= 1]
    users_only = set(episodes[episodes["interaction"] == "user-user"]["episode"])
    assert made and not any(r["episode"] in users_only for r in made)  # only games with the assistant changed
    assert sum(m.calls for m in models.values()) == len({r["call_id"] for r in made})
    assert fork.summary["lineage"][0]["changes"] == {"state.policy": share} and fork.summary["lineage"][0]["at"] == 1
    assert forks_of(society)[-1] == fork.path.resolve() or forks_of(society)[-1] == fork.path


def test_more_epochs_from_the_end_extend_a_finished_run(society: Path, tmp_path: Path) -> None:
    case = _case("society")
    fork = sandbox.fork(society, at=2, changes={"epochs": 3}, out=tmp_path / "more", models=case.models())
    episodes = fork.table("episodes")
    assert sorted(episodes["epoch"].unique()) == [0, 1, 2]
    final = [r for r in _transcript(fork.path) if r["step"] == "final-propose"]
    assert final and {r["epoch"] for r in final} == {2}  # the parent's final proposals (epoch 1) are not kept


def test_a_population_forked_with_a_new_revision_keeps_its_first_generations(population: Path, tmp_path: Path) -> None:
    fork = sandbox.fork(
        population, at=3, changes={"population.revision.beta": 5.0, "population.generations": 8}, out=tmp_path / "f"
    )
    mine, parent = (
        fork.table("generations").drop(columns="seconds"),
        pd.read_csv(population / "generations.csv").drop(columns="seconds"),
    )
    pd.testing.assert_frame_equal(mine.iloc[:3], parent.iloc[:3])
    assert len(mine) == 8 and not mine.iloc[3:6].reset_index(drop=True).equals(parent.iloc[3:6].reset_index(drop=True))
    assert len(pd.read_csv(fork.path / "population.csv")) == 8 * 64


def test_one_agent_committed_from_a_generation_on_in_the_naming_game(tmp_path: Path) -> None:
    """A state edit: agent 3 committed to X from generation 2 (the scripted copier; no consensus stop)."""
    parent = run_population(
        naming(agents=6, generations=4, stop_at_consensus=False), tmp_path / "p", models={"user": Copier().model()}
    )
    copier = Copier()
    fork = sandbox.fork(
        parent, at=2, changes={"state.agents.3.committed": "X"}, out=tmp_path / "f", models={"user": copier.model()}
    )
    population = fork.table("population")
    assert (population[(population["generation"] >= 2) & (population["agent"] == 3)]["committed"] == "X").all()
    assert (population[population["generation"] < 2]["committed"].fillna("") == "").all()
    before = [r for r in _transcript(fork.path) if r["epoch"] < 2]
    assert before == [r for r in _transcript(parent) if r["epoch"] < 2]  # the parent's calls, not made again
    assert copier.prompts, "the edit changes what the others see, so some calls are new"


def test_a_fork_without_change_of_a_naming_population_is_identical_and_calls_no_model(tmp_path: Path) -> None:
    parent = run_population(
        naming(agents=6, generations=4, stop_at_consensus=False), tmp_path / "p", models={"user": Copier().model()}
    )
    copier = Copier()
    fork = sandbox.fork(parent, at=1, out=tmp_path / "f", models={"user": copier.model()})
    for table in ("population.csv", "generations.csv", "edges.csv"):
        pd.testing.assert_frame_equal(
            pd.read_csv(parent / table).drop(columns="seconds", errors="ignore"),
            pd.read_csv(fork.path / table).drop(columns="seconds", errors="ignore"),
        )
    assert copier.prompts == []
    assert replay_run(fork.path, models={"user": Copier().model()}).identical  # a fork replays through its parent's


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--at", "9"], "has played 2 epochs"),
        (["--at", "1", "--set", "society.size=8"], "society.size: read when the run starts"),
        (["--at", "1", "--set", "no_such_field=1"], "not a field of the scenario"),
        (["--at", "1", "--set", "state.stock=3"], "state.policy=TEXT"),
        (["--at", "1", "--set", "state.policy=7"], "the policy is a text"),
        (["--at", "2", "--set", "epochs=1"], "fewer epochs than the fork keeps"),
        (["--at", "1", "--set", "epochs=0"], "epochs: Input should be greater than or equal to 1"),
    ],
)
def test_a_fork_the_kind_cannot_make_exits_2_and_writes_nothing(
    society: Path, tmp_path: Path, args: list[str], says: str
) -> None:
    out = tmp_path / "never"
    result = runner.invoke(app, ["fork", str(society), *args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert says in " ".join(result.output.split()), result.output
    assert not out.exists()


def test_a_packed_population_state_cannot_be_edited(population: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["fork", str(population), "--at", "2", "--set", "state.agents.0=1", "--out", str(tmp_path / "x")]
    )
    assert result.exit_code == 2 and "packed" in result.output and not (tmp_path / "x").exists()


def test_a_held_run_and_a_run_from_an_older_sandbox_are_refused(population: Path, tmp_path: Path) -> None:
    with hold(population, create=False):
        result = runner.invoke(app, ["fork", str(population), "--at", "1", "--out", str(tmp_path / "a")])
    assert result.exit_code == 2 and "in use" in result.output and not (tmp_path / "a").exists()
    old = tmp_path / "old"
    shutil.copytree(population, old)
    (old / "store.sqlite").unlink()
    (old / "state.json").write_text('{"generation": 3}')
    for command in (
        ["fork", str(old), "--at", "1", "--out", str(tmp_path / "b")],
        ["replay", str(old), "--out", str(tmp_path / "c")],
    ):
        result = runner.invoke(app, command)
        assert result.exit_code == 2, result.output
    assert "older sandbox" in " ".join(runner.invoke(app, ["fork", str(old), "--at", "1"]).output.split())
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


def test_a_replay_is_identical_and_names_the_first_row_that_is_not(population: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["replay", str(population)])
    assert result.exit_code == 0 and "the replay is identical" in result.output, result.output
    tampered = tmp_path / "tampered"
    shutil.copytree(population, tampered)
    table = pd.read_csv(tampered / "generations.csv")
    table.loc[4, "cooperation"] = 0.999
    table.to_csv(tampered / "generations.csv", index=False)
    result = runner.invoke(app, ["replay", str(tampered)])
    text = " ".join(result.output.split())
    assert result.exit_code == 1 and "NOT identical" in text, result.output
    assert "generations.csv: differs: row 4 (generation 4): cooperation is '0.999'" in text, result.output


def test_a_replay_holds_measured_floats_to_a_tolerance_and_counts_those_that_differed(
    population: Path, tmp_path: Path
) -> None:
    """Another machine writes a measured float's last digits otherwise: the replay is identical and says so."""
    nudged = tmp_path / "nudged"
    shutil.copytree(population, nudged)
    table = pd.read_csv(nudged / "generations.csv", dtype=str, keep_default_na=False)
    fractional = next(i for i, value in enumerate(table["cooperation"]) if not float(value).is_integer())
    table.loc[fractional, "cooperation"] = repr(float(table.loc[fractional, "cooperation"]) * (1 + 2e-6))
    table.to_csv(nudged / "generations.csv", index=False)
    result = runner.invoke(app, ["replay", str(nudged)])
    text = " ".join(result.output.split())
    assert result.exit_code == 0 and "the replay is identical" in text, result.output
    assert "1 float cell within the tolerance" in text and "generations.csv: identical" in text, result.output


def test_a_replay_that_asks_a_call_the_run_did_not_record_stops_and_names_it(society: Path, tmp_path: Path) -> None:
    changed = tmp_path / "changed"
    shutil.copytree(society, changed)
    text = (changed / "scenario.yaml").read_text().replace("seed: 5", "seed: 6")
    (changed / "scenario.yaml").write_text(text)
    report = replay_run(changed, models=_case("society").models())
    assert not report.identical and "the recording holds no answer" in report.missing
    assert report.model_calls == 0 and report.replay is not None and report.replay.is_dir()


def test_lineage_goes_up_the_chain(population: Path, tmp_path: Path) -> None:
    first = sandbox.fork(population, at=2, changes={"population.revision.beta": 2.0}, out=tmp_path / "a")
    second = sandbox.fork(first.path, at=4, out=tmp_path / "b")
    assert [r["at"] for r in lineage(second.path)] == [4, 2]
    assert second.summary["lineage"][1]["parent"] == str(population.resolve())


def test_a_population_stopped_at_consensus_goes_on_in_a_fork_that_changes_it(tmp_path: Path) -> None:
    parent = run_population(naming(agents=6, generations=40), tmp_path / "p", models={"user": Copier().model()})
    done = len(pd.read_csv(parent / "generations.csv"))
    assert done < 40, "the scripted copiers reach a consensus and the run stops"
    same = sandbox.fork(parent, at=done, out=tmp_path / "same", models={"user": Copier().model()})
    assert len(same.table("generations")) == done  # no change: it stays stopped, as its parent did
    on = sandbox.fork(
        parent,
        at=done,
        changes={"population.game.stop_at_consensus": False},
        out=tmp_path / "on",
        models={"user": Copier().model()},
    )
    assert len(on.table("generations")) == 40


def test_the_fork_benchmark_measures_a_society_against_a_fresh_changed_run(tmp_path: Path) -> None:
    """`sandbox bench fork`'s measurement, on the scripted SCAI case (the embedded model's figures are the note's)."""
    from sandbox.core.scenario_files import parse_kind
    from sandbox.engine.bench_fork import Case, measure

    case = _case("society")
    data = case.scenario(tmp_path).model_dump(mode="json")
    data["epochs"] = 4
    parse_kind("society", data)
    figures = measure(
        Case("society", "society", data, {"society.norms.0.norm": "fair"}, ("episodes.csv", "epochs.csv"), case.models),
        tmp_path,
    )
    assert figures["same_identical"] and figures["same_calls_after"] == 0 and figures["replay_identical"]
    assert figures["at"] == 2 and figures["expected_ratio"] == 0.5
    assert 0 < figures["fork_calls"] < figures["fresh_calls"]  # the fork paid for epochs 2 and 3 only
    assert figures["call_ratio"] <= 0.6


def test_a_donor_agent_given_a_strategy_text_from_a_generation_on_holds_a_norm_of_its_own(tmp_path: Path) -> None:
    from tests.test_population_donor import Recorder, donor

    parent = run_population(donor(generations=3), tmp_path / "p", models={"user": Recorder().model()})
    text = "My strategy will be to give 9 tenths."
    fork = sandbox.fork(
        parent, at=1, changes={"state.agents.2.strategy": text}, out=tmp_path / "f", models={"user": Recorder().model()}
    )
    norms = pd.read_csv(fork.path / "norms.csv")
    added = norms[norms["rule"] == "fork"]
    assert len(added) == 1 and added["strategy"].iloc[0] == text and added["generation"].iloc[0] == 1
    parents = pd.read_csv(parent / "norms.csv")
    pd.testing.assert_frame_equal(norms[norms["generation"] < 1], parents[parents["generation"] < 1])
    donations = pd.read_csv(fork.path / "donations.csv")
    assert not donations.empty
    result = runner.invoke(
        app, ["fork", str(parent), "--at", "1", "--set", "state.agents.9.strategy=x y", "--out", str(tmp_path / "n")]
    )
    assert result.exit_code == 2 and "not an agent's index" in result.output and not (tmp_path / "n").exists()
    for field in ("agents.2.norm=0", "agents.2.found=false", "norms.next_id=3"):  # they follow the texts
        result = runner.invoke(
            app, ["fork", str(parent), "--at", "1", "--set", f"state.{field}", "--out", str(tmp_path / "n")]
        )
        assert result.exit_code == 2 and field.split("=")[0] in result.output, result.output
        assert not (tmp_path / "n").exists()


def _tables_equal(a: Path, b: Path, tables: tuple[str, ...]) -> None:
    for table in tables:
        read = (lambda p: pd.read_json(p, lines=True)) if table.endswith(".jsonl") else pd.read_csv
        pd.testing.assert_frame_equal(
            read(a / table).drop(columns=["seconds"], errors="ignore"),
            read(b / table).drop(columns=["seconds"], errors="ignore"),
            obj=table,
        )


def test_a_fork_of_a_fork_at_the_same_step_keeps_the_first_forks_edit(society: Path, tmp_path: Path) -> None:
    case = _case("society")
    share = "Share everything equally with everyone."
    first = sandbox.fork(society, at=1, changes={"state.policy": share}, out=tmp_path / "a", models=case.models())
    models = case.models()
    second = sandbox.fork(first.path, at=1, out=tmp_path / "b", models=models)
    _tables_equal(first.path, second.path, ("episodes.csv", "epochs.csv", "policies.jsonl"))
    assert sum(m.calls for m in models.values()) == 0


def test_a_fork_that_ends_at_its_step_equals_a_run_of_that_length(society: Path, tmp_path: Path) -> None:
    case = _case("society")
    short = sandbox.fork(society, at=1, changes={"epochs": 1}, out=tmp_path / "short", models=case.models())
    data = case.scenario(tmp_path).model_dump(mode="json")
    from sandbox.core.scenario_files import parse_kind

    fresh = sandbox.run(parse_kind("society", {**data, "epochs": 1}), out=tmp_path / "fresh", models=case.models())
    _tables_equal(short.path, fresh.path, ("episodes.csv", "epochs.csv", "policies.jsonl", "final_policies.csv"))
    result = runner.invoke(
        app, ["fork", str(society), "--at", "2", "--set", "epochs=3", "--set", "state.policy=Be kind."]
    )
    assert result.exit_code == 2 and "has played its epochs" in " ".join(result.output.split()), result.output


@pytest.mark.parametrize("game", ["donor", "naming"])
def test_more_generations_from_the_end_equal_a_longer_run(game: str, tmp_path: Path) -> None:
    """A population that skips its revision after its last generation revises when a fork extends it."""
    from tests.test_population_donor import Recorder, donor

    scenario, model = (
        (lambda n: donor(generations=n), lambda: Recorder().model())
        if game == "donor"
        else (lambda n: naming(agents=6, generations=n, stop_at_consensus=False), lambda: Copier().model())
    )
    parent = run_population(scenario(2), tmp_path / "p", models={"user": model()})
    longer = sandbox.fork(
        parent, at=2, changes={"population.generations": 3}, out=tmp_path / "f", models={"user": model()}
    )
    fresh = run_population(scenario(3), tmp_path / "fresh", models={"user": model()})
    tables = [
        t
        for t in ("population.csv", "generations.csv", "norms.csv", "revisions.csv", "donations.csv")
        if (fresh / t).is_file()
    ]
    _tables_equal(fresh, longer.path, tuple(tables))


def test_a_society_fork_with_new_norms_keeps_the_earlier_epochs_as_played(society: Path, tmp_path: Path) -> None:
    case = _case("society")
    fork = sandbox.fork(
        society, at=1, changes={"society.norms.0.norm": "fair"}, out=tmp_path / "f", models=case.models()
    )
    mine, parent = fork.table("episodes"), pd.read_csv(society / "episodes.csv")
    pd.testing.assert_frame_equal(mine[mine["epoch"] == 0], parent[parent["epoch"] == 0])
    users = mine[(mine["epoch"] == 1) & (mine["interaction"] == "user-user")]
    assert set(users["proposer_norm"]) == {"fair"}


def test_values_keep_comments_and_dates_as_text() -> None:
    assert parse_changes(["a=Share: equally. #1", "b=2024-01-01", "c='quoted'", "d=[1, 2]", "e=yes"]) == {
        "a": "Share: equally. #1",
        "b": "2024-01-01",
        "c": "quoted",
        "d": [1, 2],
        "e": True,
    }


def test_offline_holds_in_its_own_context_only() -> None:
    import threading

    from sandbox.llm.offline import is_offline, offline

    seen: list[bool] = []
    with offline():
        thread = threading.Thread(target=lambda: seen.append(is_offline()))
        thread.start()
        thread.join()
        assert is_offline()
    assert seen == [False] and not is_offline()


def test_what_later_commands_wrote_is_neither_forked_nor_replayed(society: Path, tmp_path: Path) -> None:
    case = _case("society")
    evaluated = tmp_path / "evaluated"
    shutil.copytree(society, evaluated)
    (evaluated / "evaluation.csv").write_text("run,condition,offered_share\n0,medicine,0.5\n")
    (evaluated / "clusters.csv").write_text("a,b\n")
    record = _transcript(evaluated)[0] | {
        "call_id": "0/None/eval-1/propose/assistant/0",
        "epoch": None,
        "step": "propose",
    }
    with (evaluated / "transcripts.jsonl").open("a") as handle:
        handle.write(json.dumps(record) + "\n")
    report = replay_run(evaluated, models=case.models())
    assert report.identical, report.lines()
    fork = sandbox.fork(evaluated, at=1, out=tmp_path / "f", models=case.models())
    assert not (fork.path / "evaluation.csv").exists() and not (fork.path / "clusters.csv").exists()
    assert not any(r["call_id"].startswith("0/None/eval") for r in _transcript(fork.path))


def test_the_store_keeps_a_checkpoint_a_finished_generation_and_a_fork_at_every_one_is_identical(
    tmp_path: Path,
) -> None:
    """`sandbox.engine.pruned_store`: a finished generation but the last keeps only its boundary (with the run's
    input and start), and a fork without change at every generation, the pruned ones included, plays the same
    tables as its parent; a fork that adds generations at the end equals a longer run."""
    import sqlite3

    from sandbox.core.scenario_files import parse_kind

    block = {
        "agents": 16,
        "generations": 8,
        "members": [{"strategy": "Cooperator", "share": 0.5}, {"strategy": "Defector", "share": 0.5}],
        "game": {"name": "prisoners_dilemma"},
        "network": {"kind": "ring"},
        "revision": {"rule": "imitate", "beta": 1.0, "mutation": 0.05},
    }
    parent = run_population(
        parse_kind("population", {"name": "pruned", "seed": 4, "population": block}), tmp_path / "p"
    )
    with sqlite3.connect(parent / "store.sqlite") as conn:
        kept = [json.loads(m) for (m,) in conn.execute("SELECT metadata FROM checkpoints ORDER BY checkpoint_id")]
    boundaries = [m for m in kept if m.get("boundary")]
    assert len(boundaries) == 8 + 1  # the start and each generation's end
    assert len(kept) == 1 + len(boundaries) + 4  # the input, the boundaries, and the last generation's four steps
    from sandbox.engine.fork_plan import plan_fork

    writers = {at: plan_fork(parent, at, {"population.generations": 10}).threads["population"][1] for at in range(1, 9)}
    # a pruned generation's boundary too: the graph routes on from record; at the end, one step back (before revise)
    assert writers == {**{at: "record" for at in range(1, 8)}, 8: "score"}
    tables = ("population.csv", "generations.csv", "held.csv", "lineage.csv")
    for at in range(0, 9):
        fork = sandbox.fork(parent, at=at, out=tmp_path / f"f{at}")
        _tables_equal(parent, fork.path, tables)
    longer = sandbox.fork(parent, at=8, changes={"population.generations": 10}, out=tmp_path / "longer")
    whole = run_population(
        parse_kind("population", {"name": "pruned", "seed": 4, "population": {**block, "generations": 10}}),
        tmp_path / "whole",
    )
    _tables_equal(whole, longer.path, tables)
