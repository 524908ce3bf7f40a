"""Ray actors, one block of agents each: the cuts between blocks, and a run on 2 actors writing the same tables as
one in a single process (on local Ray)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sandbox.population.actors import block_bounds
from sandbox.population.run import resume_population, run_population
from tests.test_population import scenario


@pytest.mark.parametrize("blocks", [1, 2, 3, 7])
def test_blocks_cover_every_edge_once_and_never_split_an_agents_edges(blocks: int) -> None:
    first = np.sort(np.random.default_rng(blocks).integers(0, 50, size=400))
    bounds = block_bounds(first, blocks)
    assert len(bounds) == blocks + 1 and bounds[0] == 0 and bounds[-1] == len(first)
    assert all(lo <= hi for lo, hi in zip(bounds, bounds[1:]))
    for cut in bounds[1:-1]:
        assert 0 < cut < len(first) and first[cut - 1] != first[cut]  # an agent's edges stay in one block
    sizes = np.diff(bounds)
    assert sizes.max() - sizes.min() <= 2 * np.bincount(first).max()  # about equal, up to an agent's edges


def test_a_hub_with_most_edges_leaves_later_blocks_empty_rather_than_splitting_it() -> None:
    first = np.array([0] * 10 + [1, 2])
    assert block_bounds(first, 3) == [0, 0, 10, 12]
    assert block_bounds(np.zeros(0, dtype=np.int64), 2) == [0, 0, 0]


def test_two_ray_actors_write_the_same_tables_as_one_process_and_resume(tmp_path: Path) -> None:
    members = [
        {"strategy": "Cooperator", "share": 0.4},
        {"strategy": "Defector", "share": 0.3},
        {"strategy": "Random", "share": 0.3},
    ]
    kwargs = {"generations": 3, "network": {"kind": "small_world", "k": 4, "p": 0.1}, "members": members, "seed": 4}
    alone = run_population(scenario(300, **kwargs), tmp_path / "alone")

    class Killed(BaseException):
        pass

    def kill(generation: int) -> None:
        if generation == 1:
            raise Killed

    with pytest.raises(Killed):
        run_population(scenario(300, actors=2, **kwargs), tmp_path / "actors", hooks=kill)
    resume_population(tmp_path / "actors")
    for table in ("population.csv", "generations.csv"):
        one, two = (
            pd.read_csv(p / table).drop(columns="seconds", errors="ignore") for p in (alone, tmp_path / "actors")
        )
        pd.testing.assert_frame_equal(one, two)
    assert pd.read_csv(alone / "population.csv")["strategy"].eq("Random").any()  # the stochastic matches were played


def test_the_actors_bench_checks_every_way_gives_the_same_payoffs() -> None:
    from sandbox.population.bench import bench_population_actors

    figures = bench_population_actors(2000)
    assert figures["agents"] == 2000 and figures["actors_1_s"] > 0 and figures["actors_2_s"] > 0
    assert figures["speedup_1_to_2"] == pytest.approx(figures["actors_1_s"] / figures["actors_2_s"])
