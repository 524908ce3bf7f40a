"""Ray actors, one block of agents each: the cuts between blocks, a run on 2 actors writing the same tables as one
in a single process (on local Ray), and every wait on an actor bounded."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sandbox.base.errors import RunFailedError, UsageError
from sandbox.core.run_dir import run_status
from sandbox.population.actors.lifecycle import TIMEOUT_VARIABLE, actor_timeout_s, block_bounds
from sandbox.population.games.matrix.actors import ActorBlocks
from sandbox.population.run import resume_population, run_population
from tests.test_population import scenario

RANDOM_HALF = {
    "members": [{"strategy": "Cooperator", "share": 0.5}, {"strategy": "Random", "share": 0.5}],
    "network": {"kind": "small_world", "k": 4, "p": 0.1},
}  # stochastic matches on a graph: the actors are asked to play them


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


@pytest.mark.slow(seconds=31)
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


def test_an_actor_that_does_not_answer_in_time_stops_the_run_with_a_clear_error_and_no_actor_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray

    handles: list[Any] = []
    made = ActorBlocks.__init__

    def keeping(self: ActorBlocks, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        handles.extend(self._actors)

    monkeypatch.setattr(ActorBlocks, "__init__", keeping)
    monkeypatch.setenv(TIMEOUT_VARIABLE, "0.05")  # the actors' start alone (axelrod's import) takes seconds
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)  # as a notebook would: it stays up after
    try:
        started = time.perf_counter()
        with pytest.raises(RunFailedError) as failed:
            run_population(scenario(60, 2, actors=2, seed=1, **RANDOM_HALF), tmp_path / "run")
        assert time.perf_counter() - started < 60
        message = str(failed.value)
        assert "Ray actor 1 of 2 (the edges of agents 0 to " in message
        assert "did not finish its block of a generation's matches" in message
        assert f"within 0.05 s ({TIMEOUT_VARIABLE})" in message and f"sandbox resume {tmp_path / 'run'}`" in message
        assert run_status(tmp_path / "run") == "failed"  # `sandbox view` lists it as failed, not incomplete
        assert len(handles) == 2
        for handle in handles:  # the failed run's actors are killed, not left holding Ray's CPUs
            with pytest.raises(ray.exceptions.RayActorError):
                ray.get(handle.edges.remote(), timeout=60)
    finally:
        ray.shutdown()


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf"])
def test_a_bad_actor_timeout_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(TIMEOUT_VARIABLE, value)
    with pytest.raises(UsageError, match=f"{TIMEOUT_VARIABLE}: '{value}' is not a number of seconds above 0"):
        run_population(scenario(20, 1, actors=2), tmp_path / "run")
    assert not (tmp_path / "run").exists()
    monkeypatch.delenv(TIMEOUT_VARIABLE)
    assert actor_timeout_s() == 1800


def test_local_ray_runs_the_actors_at_this_processs_niceness() -> None:
    import ray

    from sandbox.population.games.matrix.scripted import ScriptedMatrixGame

    def niceness() -> int:
        return os.nice(0)

    game = ScriptedMatrixGame(scenario(20, 1, actors=2, **RANDOM_HALF))
    with ActorBlocks(game.names, game.block.game, game.neighbours, 2):
        # Ray's own default (15) left the actors a few per cent of a core on a busy machine: their start took minutes
        assert ray.get(ray.remote(num_cpus=0)(niceness).remote(), timeout=120) == os.nice(0)
    assert not ray.is_initialized()


@pytest.mark.slow(seconds=27)
def test_the_actors_bench_checks_every_way_gives_the_same_payoffs() -> None:
    from sandbox.population.bench.scripted import bench_population_actors

    figures = bench_population_actors(2000)
    assert figures["agents"] == 2000 and figures["actors_1_s"] > 0 and figures["actors_2_s"] > 0
    assert figures["speedup_1_to_2"] == pytest.approx(figures["actors_1_s"] / figures["actors_2_s"])
