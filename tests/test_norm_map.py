"""Norm maps of LLM populations: clusters, their names, shares, diversity and drift, lineage and diffs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sandbox.base.words import word_diff
from sandbox.population.norm_map import norm_history, norm_map, write_norm_map
from sandbox.population.report.plots import plot_lineage, plot_network

AXES = {"give all": [1.0, 0.0, 0.0], "give most": [0.95, 0.31, 0.0], "give none": [0.0, 0.0, 1.0]}


def fake_embed(texts: list[str]) -> np.ndarray:
    """Each text's direction by its words: the two generous rules 18 degrees apart, the selfish one orthogonal."""
    return np.array([next(v for k, v in AXES.items() if k in t) for t in texts])


def write_run(path: Path) -> Path:
    """A made-up population of 4 agents over 3 generations that converges on giving."""
    path.mkdir()
    pd.DataFrame(
        {
            "generation": [0, 0, 0, 1, 2],
            "norm": [0, 1, 2, 3, 4],
            "author": list("abcdd"),
            "rule": ["write"] * 3 + ["reflect"] * 2,
            "strategy": [
                "My strategy will be to give all.",
                "My strategy will be to give none.",
                "My strategy will be to give most.",
                "My strategy will be to give most, always.",
                "My strategy will be to give all, always.",
            ],
            "parents": ["", "", "", "1", "3"],
        }
    ).to_csv(path / "norms.csv", index=False)
    held = {0: [0, 1, 2, 1], 1: [0, 3, 2, 1], 2: [0, 4, 2, 0]}
    rows = [
        {
            "generation": g,
            "agent": a,
            "name": f"x{a}",
            "norm": n,
            "strategy": pd.read_csv(path / "norms.csv").set_index("norm").loc[n, "strategy"],
            "mean_donated_share": 0.5,
        }
        for g, ns in held.items()
        for a, n in enumerate(ns)
    ]
    pd.DataFrame(rows).to_csv(path / "population.csv", index=False)
    return path


def test_clusters_shares_diversity_and_drift_follow_the_texts(tmp_path: Path) -> None:
    result = norm_map(write_run(tmp_path / "run"), embed=fake_embed)
    assert len(result.clusters) == 2  # the generous rules together (0.05 apart), the selfish one alone
    generous = result.clusters.iloc[0]
    assert generous["versions"] == 4 and generous["agents_last"] == 4
    assert "give" in generous["name"] and "none" not in generous["name"]
    assert result.clusters.iloc[1]["name"] == "My strategy will be to give none."
    shares = result.shares.set_index("generation")
    assert shares.loc[0, "cluster 0"] == 0.5 and shares.loc[2, "cluster 0"] == 1.0
    d = result.diversity.set_index("generation")
    assert d.loc[0, "entropy_bits"] == pytest.approx(1.0) and d.loc[2, "entropy_bits"] == 0.0
    assert d.loc[0, "clusters"] == 2 and d.loc[2, "clusters"] == 1
    # generation 0 holds all, none, most, none: 6 pairs, distances 1 - cos
    cos = np.array(AXES["give all"]) @ np.array(AXES["give most"]) / np.linalg.norm(AXES["give most"])
    expected = (1 + (1 - cos) + 1 + 1 + 0 + 1) / 6
    assert d.loc[0, "mean_pairwise_distance"] == pytest.approx(expected, abs=1e-5)
    assert d.loc[0, "drift"] == pytest.approx(0.0, abs=1e-6)  # drift: the mean norm's move from generation 0
    assert d.loc[2, "spread"] < d.loc[0, "spread"]  # the population converged
    assert d.loc[2, "drift"] > 0.05


def _two_texts(path: Path, holders: list[int]) -> Path:
    """Two texts of one cluster, norms 0 and 1, held by the agents `holders` (a norm id each)."""
    path.mkdir()
    texts = ["My strategy will be to give all.", "My strategy will be to give most."]
    pd.DataFrame({"generation": 0, "norm": [0, 1], "strategy": texts, "parents": ""}).to_csv(
        path / "norms.csv", index=False
    )
    pd.DataFrame({"generation": 0, "agent": range(len(holders)), "name": "x", "norm": holders}).assign(
        strategy=[texts[n] for n in holders]
    ).to_csv(path / "population.csv", index=False)
    return path


@pytest.mark.parametrize("nudge", [-1e-9, 0.0, 1e-9])
def test_a_cluster_name_follows_its_holders_not_the_last_digit_of_an_embedding(tmp_path: Path, nudge: float) -> None:
    """Two texts of a cluster are each as central as the other: another machine's last digits (the nudge) must not
    rename the cluster. The text more agents hold names it; with as many each, the first seen."""

    def embed(texts: list[str]) -> np.ndarray:
        vectors = fake_embed(texts).astype(float)
        vectors[[i for i, t in enumerate(texts) if "most" in t], 0] += nudge
        return vectors

    for holders, name in (([1, 0, 1], "give most"), ([0, 1, 0], "give all"), ([1, 0], "give all")):
        result = norm_map(_two_texts(tmp_path / f"{holders}", holders), embed=embed)
        assert len(result.clusters) == 1 and result.clusters.loc[0, "name"] == f"My strategy will be to {name}."


def test_minilm_puts_paraphrases_together_and_other_rules_apart(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.mkdir()
    texts = [
        "My strategy will be to donate half of my resources to every recipient.",
        "My strategy will be to give half of my units to every recipient.",
        "My strategy will be to punish anyone who donated nothing in their last round.",
        "My strategy will be to copy the recipient's last donation: give what they gave.",
    ]
    pd.DataFrame({"generation": 0, "norm": range(4), "strategy": texts, "parents": ""}).to_csv(
        path / "norms.csv", index=False
    )
    pd.DataFrame(
        {"generation": 0, "agent": range(4), "name": list("abcd"), "norm": range(4), "strategy": texts}
    ).to_csv(path / "population.csv", index=False)
    result = write_norm_map(path)
    labels = result.norms.set_index("norm")["cluster"]
    assert labels[0] == labels[1] and len({labels[0], labels[2], labels[3]}) == 3
    for name in ("clusters.csv", "norm_clusters.csv", "cluster_shares.csv", "norm_diversity.csv", "norm_map.png"):
        assert (path / name).is_file()


def test_word_diff_and_an_agents_norm_history(tmp_path: Path) -> None:
    assert word_diff("give half to all", "give all to all") == "give [-half-] {+all+} to all"
    assert word_diff("a b", "a b c") == "a b {+c+}"
    history = norm_history(write_run(tmp_path / "run"), 1)
    assert history["norm"].tolist() == [1, 3, 4]
    assert history["diff"].iloc[0] == "" and "[-none.-] {+most, always.+}" in history["diff"].iloc[1]
    with pytest.raises(ValueError, match="agent 9"):
        norm_history(tmp_path / "run", 9)


def test_the_lineage_plot_follows_the_parents(tmp_path: Path) -> None:
    fig = plot_lineage(write_run(tmp_path / "run"))  # the dominant norm of the last generation: 0 (two agents)
    assert "#0" in fig.axes[0].get_title()
    fig = plot_lineage(tmp_path / "run", norm=4)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert {lab.split()[0] for lab in labels} == {"#1", "#3", "#4"}  # 4 <- 3 <- 1, nothing else


def test_the_network_is_coloured_by_cluster(tmp_path: Path) -> None:
    import yaml

    path = write_run(tmp_path / "run")
    write_norm_map(path, embed=fake_embed)
    pd.DataFrame({"a": [0, 1, 2, 3], "b": [1, 2, 3, 0]}).to_csv(path / "edges.csv", index=False)
    (path / "scenario.yaml").write_text(yaml.safe_dump({"population": {"agents": 4, "network": {"kind": "ring"}}}))
    fig = plot_network(path, colour_by="cluster")
    names = set(pd.read_csv(path / "clusters.csv")["name"])  # each cluster by its central text, not its number
    assert {t.get_text() for t in fig.legends[0].get_texts()} == names and len(names) == 2
    clusters = pd.read_csv(path / "clusters.csv")
    top = clusters.loc[clusters["agents_last"].idxmax()]  # the cluster most held in the last generation
    last = fig.axes[-1].get_title()
    assert last.startswith(f"generation 2: {top['name'][:20]}") and last.endswith(f"{top['agents_last'] / 4:.0%}")
    assert len(fig.axes) == 3 and "ring network" in fig.texts[0].get_text()  # the caption: what made the run
    texts = set(plot_network(path, colour_by="strategy").legends[0].get_texts()[i].get_text() for i in range(2))
    assert texts <= set(pd.read_csv(path / "norms.csv")["strategy"])  # each text its own colour


def test_play_tells_apart_opposite_norms_that_the_text_puts_together(tmp_path: Path) -> None:
    """ "Be selfish" and "be altruistic" read alike to a sentence embedding (here 0.1 apart, MiniLM: 0.14): by their
    text alone they share a cluster; by what their holders offered (0.1 against 0.9) they do not. A paraphrase
    played alike stays with its norm, and play never joins texts the embedding holds apart."""
    texts = {
        "Be selfish: keep as much as you can.": [1.0, 0.0],
        "Look after yourself first and keep most.": [0.98, 0.2],
        "Be altruistic: give others as much as you can.": [0.995, 0.1],
        "Share equally with everyone.": [0.0, 1.0],
    }
    offers = [0.1, 0.15, 0.9, 0.1]  # the last: a fair text that happened to be played like the selfish one

    def embed(batch: list[str]) -> np.ndarray:
        return np.array([texts[t] for t in batch])

    run = tmp_path / "run"
    run.mkdir()
    pd.DataFrame(
        {"generation": 0, "norm": range(4), "author": "x", "rule": "initial", "strategy": list(texts), "parents": ""}
    ).to_csv(run / "norms.csv", index=False)
    pd.DataFrame(
        {"generation": 0, "agent": range(4), "norm": range(4), "strategy": list(texts), "offered_share": offers}
    ).to_csv(run / "population.csv", index=False)
    by_text = norm_map(run, embed=embed, features="text").norms["cluster"].tolist()
    assert by_text[0] == by_text[1] == by_text[2] != by_text[3]  # selfish, its paraphrase and altruistic: one
    both = norm_map(run, embed=embed).norms["cluster"].tolist()  # text and play, the default
    assert both[0] == both[1] != both[2]  # the paraphrase with its norm, the opposite apart
    assert both[3] not in (both[0], both[2])  # played like the selfish, but its text is far: still apart


def test_on_the_held_out_set_play_splits_every_opposite_pair_when_the_players_follow_their_norms(
    tmp_path: Path,
) -> None:
    """The held-out set (`sandbox bench norm-map`) played by a scripted rule that follows each norm (a test of the
    mechanism, not a result): by text alone MiniLM leaves 8 of the 27 opposite pairs together; with play, none. Play
    joins no paraphrases the text holds apart (it only splits: 2 of the 18 together by text, 1 with play); play where
    played (`features="play"`) joins all 18 and keeps the 27 apart."""
    import re

    from sandbox.llm.scripted import scripted
    from sandbox.population.bench.norm_map import held_out, map_clusters, pair_rates, played_clusters, text_clusters

    texts, norms, opposites = held_out()
    gives = {"selfish": 0.1, "altruistic": 0.9, "cooperate": 0.5, "defect": 0.1, "give all": 1.0, "keep all": 0.0}
    accepts = {"altruistic", "cooperate", "give all"}

    def follow(messages: Any, kwargs: Any) -> str:
        system, text = messages[0].content, messages[-1].content
        norm = next(n for t, n in zip(texts, norms) if t in system)
        if "proposer will get" in text and "accept" in text.lower():
            return "yes" if norm in accepts else "no"
        n, currency = re.search(r"(\d+) (\w+)", text).groups()  # type: ignore[union-attr]
        give = round(int(n) * gives[norm])
        return f"For the {n} {currency}, the proposer will get {int(n) - give}, and the responder will get {give}."

    model = scripted([(r".", follow)])
    by_text = pair_rates(text_clusters(texts), norms, opposites)
    clusters, run = played_clusters(texts, tmp_path / "run", models={"user": model, "meta": model})
    played = pair_rates(clusters, norms, opposites)
    assert by_text["opposites_apart"] < 0.8 and played["opposites_apart"] == 1.0
    assert played["paraphrases_together"] <= by_text["paraphrases_together"] < 0.5  # play joins nothing
    # play where played (features="play"): the wordings of a norm played alike join, the opposites stay apart
    by_play = pair_rates(map_clusters(run, texts, "play"), norms, opposites)
    assert by_play == {**played, "opposites_apart": 1.0, "paraphrases_together": 1.0}
