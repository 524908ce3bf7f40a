"""Donor-game populations (Vallinder & Hughes 2024) with a scripted model: strategies written and inherited,
the prompts, selection, illegal answers, resume after a kill, the dry run and bad input."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sandbox.cli.runs import app
from sandbox.core.scenario_files import parse_kind
from sandbox.llm.scripted import scripted
from sandbox.population.run import resume_population, run_population

runner = CliRunner()


def donor(agents: int = 6, generations: int = 3, **game: Any) -> Any:
    members = game.pop("members", [{"strategy": "llm", "share": 1.0}])
    revision = game.pop("revision", {})
    return parse_kind(
        "population",
        {
            "name": "donor",
            "seed": 1,
            "population": {
                "agents": agents,
                "generations": generations,
                "members": members,
                "game": {"kind": "donor", **game},
                "network": {"kind": "complete"},
                "revision": {"rule": "select", **revision},
            },
        },
    )


class Recorder:
    """A scripted population: agent k's strategy gives k tenths; a donation gives that share. Prompts are kept."""

    def __init__(self, garbage: bool = False, stop_after: int | None = None) -> None:
        self.prompts: list[str] = []
        self.systems: list[str] = []
        self.garbage, self.stop_after = garbage, stop_after

    def __call__(self, messages: Any, kwargs: Any) -> str:
        self.systems.append(messages[0].content)
        text = messages[-1].content
        self.prompts.append(text)
        if self.stop_after is not None and len(self.prompts) > self.stop_after:
            raise KeyboardInterrupt  # a kill in the middle of a generation
        name = re.search(r"Your name is (\d+)_(\d+)", text)
        if "How many units do you give up" not in text:
            tenths = (int(name.group(2)) + int(name.group(1))) % 10
            return f"Let me think. My strategy will be to give {tenths} tenths."
        if self.garbage:
            return "I would rather not say."
        tenths = int(re.search(r"give (\d) tenths", text).group(1))
        have = float(re.search(r"You currently have ([\d.]+) units", text).group(1))
        return f"Justification: my strategy.\nAnswer: {have * tenths / 10:.2f}"

    def model(self) -> Any:
        return scripted([(r".", self)])


def test_a_donor_population_writes_plays_selects_and_inherits(tmp_path: Path) -> None:
    recorder = Recorder()
    path = run_population(donor(), tmp_path / "run", models={"user": recorder.model()})
    norms = pd.read_csv(path / "norms.csv")
    assert list(norms.groupby("generation").size()) == [6, 3, 3]  # everyone, then each generation's 3 new agents
    assert norms["found"].all() and norms["strategy"].str.startswith("My strategy will be").all()
    population = pd.read_csv(path / "population.csv")
    first = population[population["generation"] == 0]
    assert first["survived"].sum() == 3
    best = first.sort_values(["score", "agent"], ascending=[False, True]).head(3)
    assert set(best["agent"]) == set(first[first["survived"]]["agent"])  # the top half by score survive
    second = population[population["generation"] == 1].set_index("agent")
    for slot, row in first.set_index("agent").iterrows():
        assert (second.loc[slot, "name"] == row["name"]) == row["survived"]  # survivors keep name and strategy
        if not row["survived"]:
            assert second.loc[slot, "name"] == f"2_{slot + 1}" and second.loc[slot, "born"] == 1
    inherit = [p for p in recorder.prompts if "best-performing 50%" in p]
    assert len(inherit) == 6 and "along with their final scores" in inherit[0] and "(final score:" in inherit[0]
    for survivor in first[first["survived"]].itertuples():
        assert f"{survivor.name}: {survivor.strategy}" in inherit[0]
    assert all("Each player is given an initial endowment of 10 units" in s for s in recorder.systems)
    donations = pd.read_csv(path / "donations.csv")
    assert len(donations) == 3 * 2 * 6 * 3 and donations["valid"].all()
    traced = [p for p in recorder.prompts if "It is now round 2." in p]
    assert traced and all("and their earlier partners did in previous rounds: In round 1," in p for p in traced)
    gens = pd.read_csv(path / "generations.csv")
    assert gens["illegal_rate"].eq(0).all() and gens["mean_donated_share"].between(0, 1).all()


def test_unreadable_donations_are_asked_again_then_recorded_as_illegal(tmp_path: Path) -> None:
    recorder = Recorder(garbage=True)
    path = run_population(donor(4, 1, retries=2), tmp_path / "run", models={"user": recorder.model()})
    donations = pd.read_csv(path / "donations.csv")
    assert (~donations["valid"]).all() and (donations["attempts"] == 3).all()
    assert len([p for p in recorder.prompts if "How many units" in p]) == 3 * len(donations)
    assert pd.read_csv(path / "population.csv")["score"].eq(10.0).all()  # nothing moved


def test_a_fixed_member_always_survives(tmp_path: Path) -> None:
    members = [
        {"strategy": "llm", "share": 0.75},
        {"strategy": "My strategy will be to give 0 tenths.", "share": 0.25, "fixed": True},
    ]
    path = run_population(donor(4, 2, members=members), tmp_path / "run", models={"user": Recorder().model()})
    population = pd.read_csv(path / "population.csv")
    assert population[population["fixed"]]["survived"].all()


def test_the_dry_run_counts_the_calls_without_a_model(tmp_path: Path) -> None:
    data = yaml.safe_load(Path("scenarios/population/donor_small.yaml").read_text())
    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["run", str(path), "--dry-run"])
    assert result.exit_code == 0, result.output
    p = data["population"]
    donations = p["generations"] * 2 * p["agents"] * p["agents"] // 2
    strategies = p["agents"] + (p["generations"] - 1) * p["agents"] // 2
    text = " ".join(result.output.split())
    assert str(donations) in text and str(strategies) in text


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"revision": {"rule": "proportional"}}, "revision.rule proportional is a matrix game's"),
        ({"agents": 7}, "agents must be even"),
        ({"network": {"kind": "ring"}}, "network.kind ring: the donor game's pairing notebook"),
        ({"revision": {"rule": "select", "survivors": 0.05}}, "keeps no agent"),
        ({"game": {"kind": "donor", "trace_depth": 0}}, "population.game.trace_depth"),
        ({"revision": {"rule": "best"}}, "revision.rule best is a matrix game's"),
        ({"revision": {"rule": "mutate"}}, "set revision.mutation above 0"),
        ({"revision": {"rule": "reflect", "survivors": 0.25}}, "revision.survivors: not read"),
        ({"revision": {"rule": "select", "adopt": "merge"}}, "revision.adopt: not read"),
        ({"network": {"kind": "ring"}, "game": {"kind": "donor"}}, "set game.pairing network"),
        ({"game": {"kind": "donor", "rounds": 3}}, "rounds is read by pairing network only"),
        ({"game": {"kind": "donor", "pairing": "network"}, "network": {"kind": "grid"}}, "grid needs a square number"),
        ({"actors": 2}, "actors: not read by the donor game"),
    ],
)
def test_bad_donor_input_exits_2_naming_the_field(tmp_path: Path, change: dict, field: str) -> None:
    assert_bad_input(tmp_path, "scenarios/population/donor_small.yaml", change, field)


def assert_bad_input(tmp_path: Path, base: str, change: dict, field: str) -> None:
    """`sandbox run` of the population file `base` with `change` in its block exits 2, names `field`, writes
    nothing."""
    data = yaml.safe_load(Path(base).read_text())
    data["population"] = {**data["population"], **change}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert field in " ".join(result.output.split()), result.output
    assert not (tmp_path / "out").exists()


def test_a_kill_between_a_generations_rows_and_its_state_resumes_to_identical_tables(tmp_path: Path) -> None:
    whole = run_population(donor(), tmp_path / "whole", models={"user": Recorder().model()})

    class Killed(BaseException):
        pass

    def kill(generation: int) -> None:
        if generation == 0:
            raise Killed

    with pytest.raises(Killed):
        run_population(donor(), tmp_path / "cut", models={"user": Recorder().model()}, hooks=kill)
    for name in ("population.csv", "donations.csv", "generations.csv", "norms.csv"):  # generation 1, half written
        with (tmp_path / "cut" / name).open("a") as handle:
            handle.write("1,0,half a ro")
    resumed = resume_population(tmp_path / "cut", models={"user": Recorder().model()})
    for table in ("population.csv", "donations.csv", "norms.csv", "revisions.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(whole / table), pd.read_csv(resumed / table))


def test_ties_in_score_fall_by_a_seeded_draw_and_survivors_are_listed_best_first(tmp_path: Path) -> None:
    recorder = Recorder(garbage=True)  # nobody gives: every score is 10
    path = run_population(donor(8, 3, retries=0), tmp_path / "run", models={"user": recorder.model()})
    population = pd.read_csv(path / "population.csv")
    kept = [tuple(population[(population["generation"] == g) & population["survived"]]["agent"]) for g in (0, 1)]
    assert kept[0] != (0, 1, 2, 3)  # not the lowest slots every time
    assert len(set(kept[0])) == 4


def test_a_punishment_is_not_counted_as_a_donation(tmp_path: Path) -> None:
    model = scripted([(r"How many units", "Answer: Punish, 1"), (r".", "My strategy will be to punish.")])
    path = run_population(donor(4, 1, punishment=True), tmp_path / "run", models={"user": model})
    gens = pd.read_csv(path / "generations.csv")
    assert gens["punishment_rate"].iloc[0] == 1.0 and pd.isna(gens["mean_donated_share"].iloc[0])


def test_the_donor_game_refuses_the_matrix_games_settings(tmp_path: Path) -> None:
    data = yaml.safe_load(Path("scenarios/population/donor_small.yaml").read_text())
    data["population"]["revision"] = {"rule": "select", "mutation": 0.1}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and "revision.mutation: not read by the donor game" in " ".join(result.output.split())


class OverGiver(Recorder):
    """Gives more than it has in every round: an illegal move each time, never a crash."""

    def __call__(self, messages: Any, kwargs: Any) -> str:
        answer = super().__call__(messages, kwargs)
        return (
            "Justification: all and more.\nAnswer: 999"
            if "How many units do you give up" in messages[-1].content
            else answer
        )


def test_a_donation_beyond_the_donors_resources_is_a_recorded_illegal_move(tmp_path: Path) -> None:
    path = run_population(donor(agents=4, generations=2), tmp_path / "run", models={"user": OverGiver().model()})
    donations = pd.read_csv(path / "donations.csv")
    assert len(donations) and not donations["valid"].any()
    assert (pd.read_csv(path / "generations.csv")["illegal_rate"] == 1.0).all()


def test_with_an_activation_a_drawn_share_of_the_donations_takes_place_the_same_in_every_run(tmp_path: Path) -> None:
    full = run_population(donor(generations=2), tmp_path / "full", models={"user": Recorder().model()})
    runs = [
        run_population(donor(generations=2, activation=0.4), tmp_path / f"a{k}", models={"user": Recorder().model()})
        for k in range(2)
    ]
    every, drawn = (pd.read_csv(p / "donations.csv") for p in (full, runs[0]))
    pd.testing.assert_frame_equal(drawn, pd.read_csv(runs[1] / "donations.csv"))
    assert len(every) == 2 * 2 * 6 * 3 and 0.2 * len(every) < len(drawn) < 0.6 * len(every)
    keys = ["generation", "game", "round", "donor", "recipient"]
    assert set(map(tuple, drawn[keys].values)) < set(map(tuple, every[keys].values))  # pairs of the same pairing
    sizes = drawn.groupby(["generation", "game", "round"]).size()
    assert (sizes < 3).any() and (sizes > 0).all()  # pairs drawn one by one, not whole rounds of 3
    gens = pd.read_csv(runs[0] / "generations.csv")
    assert gens["illegal_rate"].eq(0).all() and gens["mean_donated_share"].between(0, 1).all()
    result = runner.invoke(app, ["run", str(_donor_file(tmp_path, activation=0.5)), "--dry-run"])
    p = yaml.safe_load(Path("scenarios/population/donor_small.yaml").read_text())["population"]
    expected = p["generations"] * 2 * p["agents"] * p["agents"] // 2 // 2  # half the donations of every pair
    assert result.exit_code == 0 and f" {expected} " in " ".join(result.output.split()), result.output


@pytest.mark.parametrize("activation", [0.0, 1.5])
def test_a_donor_activation_outside_0_to_1_exits_2_naming_the_field(tmp_path: Path, activation: float) -> None:
    change = {"game": {"kind": "donor", "activation": activation}}
    assert_bad_input(tmp_path, "scenarios/population/donor_small.yaml", change, "population.game.activation")


def _donor_file(tmp_path: Path, **game: Any) -> Path:
    data = yaml.safe_load(Path("scenarios/population/donor_small.yaml").read_text())
    data["population"]["game"] = {**data["population"]["game"], **game}
    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_move_s_record_in_the_state_names_the_move_s_fields() -> None:
    """`record_data` holds a `DonorRecord` as plain data by its fields (`asdict`): the record names each, and only
    those, so a field added to the move fails here before it is checkpointed untyped."""
    from dataclasses import fields

    from sandbox.population.games.donor.records import DonorRecordData
    from sandbox.population.games.donor.rules import DonorRecord

    assert list(DonorRecordData.__annotations__) == [f.name for f in fields(DonorRecord)]
