"""Figures a paper can print: titled with what made them, no empty panel, long runs aggregated (and said so), "95%
CI" only where there is an interval, axes with their quantities."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sandbox.core.scenario_files import parse_kind
from sandbox.population.run import run_population


def _titles(fig: object) -> str:
    texts = [t.get_text() for t in getattr(fig, "texts", [])]
    return " ".join(texts + [ax.get_title() for ax in fig.axes])  # type: ignore[attr-defined]


def test_a_population_figure_says_what_made_it(tmp_path: Path) -> None:
    from sandbox.core.result import RunResult

    block = {
        "agents": 36,
        "generations": 3,
        "members": [{"strategy": "Cooperator", "share": 0.5}, {"strategy": "Defector", "share": 0.5}],
        "game": {"name": "weak_prisoners_dilemma", "temptation": 1.4},
        "network": {"kind": "small_world", "k": 4, "p": 0.2},
        "revision": {"rule": "imitate", "beta": 1.0},
    }
    run = run_population(parse_kind("population", {"name": "titled", "seed": 7, "population": block}), tmp_path / "r")
    title = _titles(RunResult.load(run).plot())  # type: ignore[attr-defined]
    for words in ("titled", "weak_prisoners_dilemma", "36 agents", "small_world, k=4, p=0.2", "imitate", "seed 7"):
        assert words in title.replace("\n", " "), (words, title)


def test_a_long_run_is_drawn_as_a_rolling_mean_and_says_so() -> None:
    from sandbox.population.games.matrix.report import plot_generations

    rng = np.random.default_rng(0)
    n = 20_000
    generations = pd.DataFrame(
        {"generation": np.arange(n), "cooperation": rng.random(n), "mean_payoff": rng.random(n), "share C": 0.5}
    )
    fig = plot_generations(generations)
    assert "rolling mean over 40 generations" in fig.axes[0].get_title()
    drawn = fig.axes[0].lines[0].get_ydata()
    assert np.std(drawn[100:]) < 0.1 < np.std(generations["cooperation"])  # smoothed, not the noise itself
    short = plot_generations(generations.head(100))
    assert "rolling" not in short.axes[0].get_title()
    assert np.array_equal(short.axes[0].lines[0].get_ydata(), generations["cooperation"].head(100))


def test_the_binary_agreement_figure_has_no_empty_panel_and_the_minimal_game_keeps_its_names() -> None:
    from sandbox.population.games.naming.report import plot_naming_scripted

    rows = 5
    base = {"generation": range(rows), "share A": 0.5, "share B": 0.4, "multiple_share": 0.1, "peak_names": 110}
    binary = pd.DataFrame({**base, "total_names": 110, "distinct_names": 2})
    assert len(plot_naming_scripted(binary, ["A", "B"]).axes) == 1
    minimal = pd.DataFrame({**base, "total_names": [300, 250, 200, 150, 110], "distinct_names": [90, 40, 10, 3, 1]})
    assert len(plot_naming_scripted(minimal, ["A", "B"]).axes) == 2


def test_the_comparison_says_95_percent_ci_only_over_several_runs() -> None:
    from sandbox.scai.compare import compare_runs

    def table(low: float, high: float) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "run_dir": "a",
                    "scenario": "s",
                    "panel": "one group",
                    "label": "x",
                    "epoch": e,
                    "group": g,
                    "mean": 0.4,
                    "ci_low": low,
                    "ci_high": high,
                    "n": 1,
                }
                for e in (1, 2)
                for g in ("assistant", "users")
            ]
        )

    one = compare_runs([], table=table(0.4, 0.4))
    assert "95% CI" not in one.texts[0].get_text() and "no interval" in one.texts[0].get_text()
    several = compare_runs([], table=table(0.3, 0.5))
    assert "95% CI across runs" in several.texts[0].get_text()


def test_the_norm_map_has_a_share_axis() -> None:
    from sandbox.population.norm_map import NormMap
    from sandbox.population.report.plots import plot_norm_map

    shares = pd.DataFrame({"generation": [0, 1, 2], "cluster 0": [0.5, 0.75, 1.0], "cluster 1": [0.5, 0.25, 0.0]})
    diversity = pd.DataFrame(
        {
            "generation": [0, 1, 2],
            "clusters": [2, 2, 1],
            "entropy_bits": [1.0, 0.81, 0.0],
            "mean_pairwise_distance": [0.3, 0.2, 0.0],
            "drift": [0.0, 0.1, 0.2],
            "spread": [0.2, 0.1, 0.0],
        }
    )
    clusters = pd.DataFrame(
        {"cluster": [0, 1], "name": ["give all", "give none"], "versions": [2, 1], "agents_last": [4, 0]}
    )
    fig = plot_norm_map(NormMap(clusters, pd.DataFrame(), shares, diversity))
    assert fig.axes[0].get_ylabel() == "share of the agents" and fig.axes[0].get_ylim() == (0.0, 1.0)
