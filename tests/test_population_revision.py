"""Norm revision by every agent of a donor-game population, with a scripted model: reflect, imitate (copy,
merge), mutate, the CRSEC-style check, network pairing, and resume after a kill under every rule."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from sandbox.core.scenario_files import parse_kind
from sandbox.population.run import resume_population, run_population
from tests.test_population_donor import Recorder, donor


def revising(rule: str, agents: int = 6, generations: int = 3, network: dict | None = None, **revision: Any) -> Any:
    members = revision.pop("members", [{"strategy": "llm", "share": 1.0}])
    game = {"kind": "donor", **({"pairing": "network", "rounds": 4} if network else {})}
    return parse_kind(
        "population",
        {
            "name": "donor",
            "seed": 3,
            "population": {
                "agents": agents,
                "generations": generations,
                "members": members,
                "game": game,
                "network": network or {"kind": "complete"},
                "revision": {"rule": rule, **revision},
            },
        },
    )


class Reviser(Recorder):
    """The Recorder, and a reflecting agent raises its tenths by one; a merge takes the two strategies' mean; with
    `unparsed`, a reflection has no strategy sentence."""

    def __init__(self, unparsed: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.unparsed = unparsed

    def __call__(self, messages: Any, kwargs: Any) -> str:
        text = messages[-1].content
        if "Here is what happened to you" in text:
            self.prompts.append(text)
            self.systems.append(messages[0].content)
            if self.stop_after is not None and len(self.prompts) > self.stop_after:
                raise KeyboardInterrupt
            if self.unparsed:
                return "Critique: it went fine. I will carry on."
            tenths = int(re.search(r"give (\d) tenths", text).group(1))
            return f"Critique: give more. My strategy will be to give {(tenths + 1) % 10} tenths."
        if "Combine the two" in text:
            self.prompts.append(text)
            self.systems.append(messages[0].content)
            a, b = (int(t) for t in re.findall(r"give (\d) tenths", text))
            return f"Merged. My strategy will be to give {(a + b) // 2} tenths."
        return super().__call__(messages, kwargs)


def test_reflect_rewrites_every_free_agents_norm_from_its_own_evidence_with_lineage(tmp_path: Path) -> None:
    members = [
        {"strategy": "llm", "share": 5 / 6},
        {"strategy": "My strategy will be to give 0 tenths.", "share": 1 / 6, "fixed": True},
    ]
    reviser = Reviser()
    path = run_population(revising("reflect", members=members), tmp_path / "run", models={"user": reviser.model()})
    population = pd.read_csv(path / "population.csv")
    norms = pd.read_csv(path / "norms.csv", dtype={"parents": str}).set_index("norm")
    reflections = [p for p in reviser.prompts if "Here is what happened to you" in p]
    assert len(reflections) == 5 * 2  # 5 free agents, after each generation but the last
    assert population["survived"].all() and population.groupby("agent")["name"].nunique().eq(1).all()
    fixed = population[population["fixed"]]
    assert fixed["norm"].nunique() == 1 and fixed["strategy"].str.contains("0 tenths").all()
    donations = pd.read_csv(path / "donations.csv")
    for g in (0, 1):
        before = population[population["generation"] == g].set_index("agent")
        after = population[population["generation"] == g + 1].set_index("agent")
        for slot in before.index[~before["fixed"]]:
            new = after.loc[slot, "norm"]
            assert new != before.loc[slot, "norm"]
            row = norms.loc[new]
            assert row["rule"] == "reflect" and row["generation"] == g + 1
            assert str(row["parents"]) == str(before.loc[slot, "norm"])  # lineage: the norm it was written from
            tenths = int(re.search(r"give (\d) tenths", before.loc[slot, "strategy"]).group(1))
            assert after.loc[slot, "strategy"] == f"My strategy will be to give {(tenths + 1) % 10} tenths."
            given = donations[(donations["generation"] == g) & (donations["donor"] == slot) & donations["valid"]]
            assert row["evidence"].count(" you gave ") == len(given)  # every move of its own, and no other's
            got = donations[
                (donations["generation"] == g)
                & (donations["recipient"] == slot)
                & donations["valid"]
                & (donations["amount"] > 0)
            ]
            assert row["evidence"].count("so you received") == len(got)
            for d in got.itertuples():
                assert f"so you received {2 * d.amount:.2f}".rstrip("0").rstrip(".") in row["evidence"]
            rank = 1 + int((before["score"] > before.loc[slot, "score"]).sum())
            assert f"You ranked {rank} of 6." in row["evidence"]
    assert all("look back on how it went" in s for s in reviser.systems)
    revisions = pd.read_csv(path / "revisions.csv")
    assert len(revisions) == 10 and (revisions["rule"] == "reflect").all() and (revisions["outcome"] == "new").all()


def test_imitate_copies_a_better_neighbour_on_the_network_by_the_fermi_rule(tmp_path: Path) -> None:
    reviser = Reviser()
    scenario = revising("imitate", agents=8, generations=4, network={"kind": "ring"}, beta=1000.0)
    path = run_population(scenario, tmp_path / "run", models={"user": reviser.model()})
    assert not [p for p in reviser.prompts if "Combine the two" in p or "Here is what happened" in p]
    population = pd.read_csv(path / "population.csv")
    revisions = pd.read_csv(path / "revisions.csv")
    assert len(revisions) == 8 * 3
    for r in revisions.itertuples():
        now = population[population["generation"] == r.generation].set_index("name")
        gain = now.loc[r.partner, "score"] - now.loc[r.name, "score"]
        assert abs((r.agent - now.loc[r.partner, "agent"]) % 8) in (1, 7)  # a neighbour on the ring
        if abs(gain) > 0.05:  # beta 1000: the better one is copied, the worse one never
            assert (r.outcome in ("copied", "same")) == (gain > 0)
        if r.outcome == "copied":
            assert r.new_norm == now.loc[r.partner, "norm"]
    assert (revisions["outcome"] == "copied").any()
    edges = {tuple(sorted(e)) for e in pd.read_csv(path / "edges.csv").itertuples(index=False)}
    donations = pd.read_csv(path / "donations.csv")
    assert all(tuple(sorted((d.donor, d.recipient))) in edges for d in donations.itertuples())
    per_round = donations.groupby(["generation", "game", "round"])
    assert per_round.apply(lambda r: len(set(r["donor"]) | set(r["recipient"])) == 2 * len(r)).all()


def test_imitate_with_merge_asks_the_llm_to_merge_and_records_both_parents(tmp_path: Path) -> None:
    reviser = Reviser()
    path = run_population(
        revising("imitate", beta=1000.0, adopt="merge"), tmp_path / "run", models={"user": reviser.model()}
    )
    merges = [p for p in reviser.prompts if "Combine the two" in p]
    norms = pd.read_csv(path / "norms.csv", dtype={"parents": str}).set_index("norm")
    merged = norms[norms["rule"] == "merge"]
    assert len(merges) == len(merged) > 0
    population = pd.read_csv(path / "population.csv")
    revisions = pd.read_csv(path / "revisions.csv")
    asked = revisions[revisions["outcome"] == "new"]
    assert len(asked) == len(merged)
    for r in asked.itertuples():  # a merge only where the agent adopted a better neighbour's different norm
        now = population[population["generation"] == r.generation].set_index("name")
        assert now.loc[r.partner, "score"] > now.loc[r.name, "score"] and now.loc[r.partner, "norm"] != r.old_norm
        assert merged.loc[r.new_norm, "parents"] == f"{r.old_norm};{now.loc[r.partner, 'norm']}"
        a, b = (
            int(re.search(r"give (\d) tenths", t).group(1))
            for t in (now.loc[r.name, "strategy"], now.loc[r.partner, "strategy"])
        )
        assert merged.loc[r.new_norm, "strategy"] == f"My strategy will be to give {(a + b) // 2} tenths."


def test_mutate_rewrites_norms_freely_with_its_probability(tmp_path: Path) -> None:
    reviser = Reviser()
    path = run_population(revising("mutate", mutation=1.0), tmp_path / "run", models={"user": reviser.model()})
    fresh = [p for p in reviser.prompts if "Based on the description of the game" in p]
    assert len(fresh) == 6 * 3  # the first generation, then every agent after each generation but the last
    norms = pd.read_csv(path / "norms.csv")
    assert (norms[norms["generation"] > 0]["rule"] == "mutate").all() and norms["parents"].isna().all()
    calm = run_population(revising("mutate", mutation=0.01), tmp_path / "calm", models={"user": Reviser().model()})
    revisions = pd.read_csv(calm / "revisions.csv")
    assert len(revisions) == 6 * 2 and (revisions["outcome"] == "kept").sum() >= 10  # every agent, mutated or not
    rewrites = [p for p in reviser.prompts if "Forget the strategy you followed so far" in p]
    assert len(rewrites) == 6 * 2 and "This is generation 2." in rewrites[0]  # not the first generation's prompt


def test_the_check_rejects_unparsed_norms_and_merges_duplicates(tmp_path: Path) -> None:
    path = run_population(
        revising("reflect", check=True), tmp_path / "rejected", models={"user": Reviser(unparsed=True).model()}
    )
    population = pd.read_csv(path / "population.csv")
    assert population.groupby("agent")["norm"].nunique().eq(1).all()  # every agent kept its norm
    assert (pd.read_csv(path / "revisions.csv")["outcome"] == "rejected").all()
    path = run_population(
        revising("mutate", mutation=1.0, check=True), tmp_path / "dup", models={"user": Reviser().model()}
    )
    norms = pd.read_csv(path / "norms.csv")
    assert norms["strategy"].str.lower().is_unique  # one version per text
    assert (pd.read_csv(path / "revisions.csv")["outcome"] == "duplicate").any()
    loose = run_population(revising("mutate", mutation=1.0), tmp_path / "loose", models={"user": Reviser().model()})
    assert not pd.read_csv(loose / "norms.csv")["strategy"].is_unique  # without the check, each rewrite is new


@pytest.mark.parametrize("stop_after", [3, 20, 37, 55])  # 60 calls: 4 strategies, 48 donations, 8 reflections
def test_a_reflecting_population_killed_anywhere_resumes_to_identical_tables(tmp_path: Path, stop_after: int) -> None:
    scenario = revising("reflect", agents=4, generations=3)
    whole = run_population(scenario, tmp_path / "whole", models={"user": Reviser().model()})
    with pytest.raises(KeyboardInterrupt):
        run_population(scenario, tmp_path / "cut", models={"user": Reviser(stop_after=stop_after).model()})
    resumed = resume_population(tmp_path / "cut", models={"user": Reviser().model()})
    for table in ("population.csv", "donations.csv", "norms.csv", "revisions.csv", "edges.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(whole / table), pd.read_csv(resumed / table))


def test_the_matrix_games_refuse_the_text_revision_settings() -> None:
    from sandbox.base.errors import ScenarioError

    base = {
        "name": "m",
        "population": {"agents": 10, "generations": 2, "members": [{"strategy": "Cooperator", "share": 1.0}]},
    }
    for revision, words in (
        ({"rule": "reflect"}, "rewrites norm texts"),
        ({"adopt": "merge"}, "revision.adopt"),
        ({"rule": "mutate"}, "mutation above 0"),
    ):
        data = {**base, "population": {**base["population"], "revision": revision}}
        with pytest.raises(ScenarioError, match=words):
            parse_kind("population", data)


@pytest.mark.parametrize("case", ["select_check", "imitate_merge_ring", "mutate_check"])
def test_every_revision_rule_killed_anywhere_resumes_to_identical_tables(tmp_path: Path, case: str) -> None:
    scenario = {
        "select_check": lambda: donor(4, 3, revision={"check": True}),
        "imitate_merge_ring": lambda: revising(
            "imitate", agents=5, generations=3, network={"kind": "ring"}, beta=1.0, adopt="merge", mutation=0.3
        ),
        "mutate_check": lambda: revising("mutate", agents=4, generations=3, mutation=0.5, check=True),
    }[case]()
    whole = run_population(scenario, tmp_path / "whole", models={"user": Reviser().model()})
    calls = len(pd.read_json(whole / "transcripts.jsonl", lines=True))
    for k, stop_after in enumerate((2, calls // 2, calls - 2)):
        cut = tmp_path / f"cut{k}"
        with pytest.raises(KeyboardInterrupt):
            run_population(scenario, cut, models={"user": Reviser(stop_after=stop_after).model()})
        resumed = resume_population(cut, models={"user": Reviser().model()})
        for table in (
            "population.csv",
            "donations.csv",
            "norms.csv",
            "revisions.csv",
            "edges.csv",
            "clusters.csv",
            "norm_diversity.csv",
        ):
            pd.testing.assert_frame_equal(pd.read_csv(whole / table), pd.read_csv(resumed / table))


def test_select_records_each_replacement_with_the_norm_it_replaced(tmp_path: Path) -> None:
    path = run_population(donor(), tmp_path / "run", models={"user": Recorder().model()})
    population = pd.read_csv(path / "population.csv")
    revisions = pd.read_csv(path / "revisions.csv")
    assert len(revisions) == 3 * 2 and (revisions["rule"] == "select").all() and (revisions["outcome"] == "new").all()
    for r in revisions.itertuples():
        before = population[(population["generation"] == r.generation) & (population["agent"] == r.agent)].iloc[0]
        after = population[(population["generation"] == r.generation + 1) & (population["agent"] == r.agent)].iloc[0]
        assert not before["survived"] and r.old_norm == before["norm"] and r.new_norm == after["norm"]
        assert r.name == after["name"] == f"{r.generation + 2}_{r.agent + 1}"


def test_a_given_text_repeated_in_another_case_is_one_norm_with_the_check(tmp_path: Path) -> None:
    members = [
        {"strategy": "My strategy will be to give 0 tenths.", "share": 0.5},
        {"strategy": "my strategy will be to give 0  tenths.", "share": 0.5},
    ]
    path = run_population(
        revising("mutate", agents=4, generations=1, mutation=0.5, check=True, members=members),
        tmp_path / "run",
        models={"user": Reviser().model()},
    )
    norms = pd.read_csv(path / "norms.csv")
    population = pd.read_csv(path / "population.csv")
    assert len(norms) == 1 and population["norm"].eq(norms["norm"].iloc[0]).all()
    assert population["strategy"].eq("My strategy will be to give 0 tenths.").all()  # the first wording, for all


def test_the_check_rejects_a_strategy_sentence_with_nothing_in_it_and_keeps_its_index_over_a_resume() -> None:
    from sandbox.population.games.donor.norms import NormBook

    book = NormBook(check=True)
    assert book.add("My strategy will be .", True) == (None, "rejected")  # written by the embedded model once
    assert book.add("My strategy will be . Critique: You could consider giving more.", True) == (None, "rejected")
    assert book.add("My strategy will be to share.", True) == (0, "new")
    assert book.add("My strategy will be to give 0.5 units.", True) == (1, "new")  # a decimal point ends nothing
    assert book.add("My strategy will be:\n1. Give half to everyone.", True)[1] == "new"  # nor does a numbered list
    assert book.add("My strategy will be  to SHARE.", True) == (0, "duplicate")
    again = NormBook(**book.state())  # as resume rebuilds it from the checkpoint
    assert again.add("my strategy will be to share.", True) == (0, "duplicate") and again.next_id == 3
    assert NormBook(check=False).add("My strategy will be .", True) == (0, "new")  # without the check: kept
