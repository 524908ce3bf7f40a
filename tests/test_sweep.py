"""Sweeps: grid expansion and its validation, a sweep on the local pool and on a local Ray, a sweep killed halfway
that resumes to the same sweep.csv, and a sweep budget that stops runs and a higher one that finishes them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sandbox.base.errors import ScenarioError
from sandbox.cli.runs import app
from sandbox.core.run_dir import run_status
from sandbox.llm.budget import refused
from sandbox.sweep import expand, parse_sweep
from tests.loopback_openai import loopback_openai
from tests.test_kill_and_resume import SANDBOX, answer

runner = CliRunner()
BASE = {
    "name": "base",
    "seed": 1,
    "concurrency": 4,
    "models": {"user": "openai:loopback"},
    "society": {"size": 6, "norms": [{"norm": "selfish", "proportion": 0.5}, {"norm": "fair", "proportion": 0.5}]},
}


def sweep_file(tmp_path: Path, url: str, **block: Any) -> Path:
    base = {**BASE, "models": {"user": f"openai:loopback@{url}"}}
    data = {"name": "tiny", "sweep": {"base": base, "grid": {"epochs": [1, 2]}, "seeds": 2, "workers": 2, **block}}
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_grid_expands_in_order_with_seeds_and_every_path_is_checked(tmp_path: Path) -> None:
    data = {
        "name": "g",
        "sweep": {
            "base": BASE,
            "seeds": 2,
            "grid": {
                "society.norms": [[{"norm": "fair", "proportion": 1.0}], [{"norm": "selfish", "proportion": 1.0}]],
                "models.user": ["openai:a", "openai:b"],
                "society.norms.0.proportion": [1.0],
            },
        },
    }
    runs = expand(*parse_sweep(data, "g.yaml", tmp_path), "g.yaml")
    assert len(runs) == 2 * 2 * 1 * 2 and [r.id for r in runs][:2] == ["run-0000", "run-0001"]
    assert [r.scenario.seed for r in runs[:2]] == [1, 2] and runs[0].overrides["models.user"] == "openai:a"
    assert runs[2].scenario.models.user.spec == "openai:b" and runs[4].scenario.society.norms[0].norm == "selfish"
    assert {r.kind for r in runs} == {"society"}
    for grid, words in (
        ({"society.normz": [1]}, "sweep.grid.society.normz: the base scenario has no field society.normz"),
        ({"society.norms.7.norm": ["x"]}, "no field society.norms.7"),
        ({"epochs": [0]}, "run-0000: epochs=0"),
    ):
        with pytest.raises(ScenarioError, match=words):
            expand(*parse_sweep({"name": "g", "sweep": {"base": BASE, "grid": grid}}, "g.yaml", tmp_path), "g.yaml")


def test_zip_axes_vary_fields_together_and_a_derived_field_follows_the_grid(tmp_path: Path) -> None:
    base = {
        **BASE,
        "society": {"size": 6, "norms": [{"norm": "selfish", "proportion": 0.5}, {"norm": "fair", "proportion": 0.5}]},
    }
    block = {
        "base": base,
        "grid": {"society.norms.0.proportion": [0.25, 0.5, 0.7]},
        "zip": [{"epochs": [1, 2], "society.size": [6, 8]}],
        "derive": {"society.norms.1.proportion": "1 - society.norms.0.proportion"},
    }
    sweep, data = parse_sweep({"name": "z", "sweep": block}, "z.yaml", tmp_path)
    runs = expand(sweep, data, "z.yaml")
    assert len(runs) == 3 * 2  # the grid's 3 values x the zip group's 2 pairs (not 2 x 2)
    pairs = {(r.scenario.epochs, r.scenario.society.size) for r in runs}
    assert pairs == {(1, 6), (2, 8)}  # zipped: the first values together, then the second
    for run in runs:
        norms = run.scenario.society.norms
        assert norms[0].proportion + norms[1].proportion == 1.0 and run.overrides["society.norms.1.proportion"] in (
            0.75,
            0.5,
            0.3,  # 1 - 0.7, not 0.30000000000000004
        )
    assert sweep.sweep.parameters == ["society.norms.0.proportion", "epochs", "society.size"]
    assert sweep.sweep.axes == [("society.norms.0.proportion",), ("epochs", "society.size")]
    for bad, words in (
        ({"zip": [{"epochs": [1, 2], "society.size": [6]}]}, "need one length"),
        ({"derive": {"society.norms.1.proportion": "__import__('os').system('true')"}}, "only round, min and max"),
        ({"derive": {"society.norms.1.proportion": "1 - society.normz.0.proportion"}}, "no field society.normz"),
        ({"derive": {"society.norms.1.proportion": "1 - society.norms.0.norm"}}, "not a number"),
        ({"derive": {"society.norms.0.proportion": "0.5"}}, "a field is set once"),
    ):
        with pytest.raises(ScenarioError, match=words):
            expand(*parse_sweep({"name": "z", "sweep": {**block, **bad}}, "z.yaml", tmp_path), "z.yaml")


def test_a_bad_sweep_is_exit_2_naming_the_path_and_writes_nothing(tmp_path: Path) -> None:
    file = tmp_path / "s.yaml"
    file.write_text(yaml.safe_dump({"name": "s", "sweep": {"base": "nowhere.yaml", "grid": {"epochs": [1]}}}))
    result = runner.invoke(app, ["sweep", str(file), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "nowhere.yaml" in result.output and not (tmp_path / "out").exists()
    file.write_text(yaml.safe_dump({"name": "s", "sweep": {"base": BASE, "grid": {"society.sizes": [4]}}}))
    result = runner.invoke(app, ["sweep", str(file), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "sweep.grid.society.sizes" in result.output and not (tmp_path / "out").exists()


def test_a_population_base_reads_its_edges_file_beside_it_as_sandbox_run_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sandbox.examples import SCENARIOS

    base = SCENARIOS / "population" / "pd_karate_club.yaml"  # network.edges_file: karate_club.edgelist, beside it
    file = tmp_path / "karate.yaml"
    file.write_text(yaml.safe_dump({"name": "k", "sweep": {"base": str(base), "grid": {"seed": [1, 2]}}}))
    monkeypatch.chdir(tmp_path)  # not the base file's folder
    result = runner.invoke(app, ["validate", str(file)])
    assert result.exit_code == 0 and "a sweep of 2 population runs" in result.output, result.output
    result = runner.invoke(app, ["sweep", str(file), "--dry-run"])
    assert result.exit_code == 0 and "2 runs, no model called" in " ".join(result.output.split()), result.output
    runs = expand(*parse_sweep(yaml.safe_load(file.read_text()), str(file), tmp_path), str(file))
    assert [len(run.scenario.population.network.edges) for run in runs] == [78, 78]


def test_an_inline_population_base_reads_its_edges_file_beside_the_sweep_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from sandbox.examples import SCENARIOS

    folder = SCENARIOS / "population"
    base = yaml.safe_load((folder / "pd_karate_club.yaml").read_text())  # network.edges_file: karate_club.edgelist
    (tmp_path / "sweeps").mkdir()
    shutil.copy(folder / "karate_club.edgelist", tmp_path / "sweeps")
    file = tmp_path / "sweeps" / "karate.yaml"
    file.write_text(yaml.safe_dump({"name": "k", "sweep": {"base": base, "grid": {"seed": [1, 2]}}}))
    monkeypatch.chdir(tmp_path)  # not the sweep file's folder
    result = runner.invoke(app, ["validate", str(file)])
    assert result.exit_code == 0 and "a sweep of 2 population runs" in result.output, result.output
    result = runner.invoke(app, ["sweep", str(file), "--dry-run"])
    assert result.exit_code == 0 and "2 runs, no model called" in " ".join(result.output.split()), result.output
    runs = expand(*parse_sweep(yaml.safe_load(file.read_text()), str(file), file.parent), str(file))
    assert [len(run.scenario.population.network.edges) for run in runs] == [78, 78]
    base["population"]["network"]["edges_file"] = "nowhere.edgelist"
    file.write_text(yaml.safe_dump({"name": "k", "sweep": {"base": base, "grid": {"seed": [1, 2]}}}))
    result = runner.invoke(app, ["sweep", str(file), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and not (tmp_path / "out").exists(), result.output
    assert str(file) in result.output and "sweep.base.population.network.edges_file" in result.output, result.output
    assert "nowhere.edgelist" in result.output, result.output


def finished(path: Path) -> pd.DataFrame:
    table = pd.read_csv(path / "sweep.csv")
    assert (table["status"] == "complete").all(), table[["run", "status"]]
    return table


@pytest.mark.slow  # over half a minute
def test_a_sweep_on_the_local_pool_and_on_a_local_ray_give_one_sweep_csv(tmp_path: Path) -> None:
    with loopback_openai(answer) as server:
        file = sweep_file(tmp_path, server.url)
        result = runner.invoke(app, ["sweep", str(file), "--out", str(tmp_path / "local")])
        assert result.exit_code == 0, result.output
        result = runner.invoke(app, ["sweep", str(file), "--out", str(tmp_path / "ray"), "--executor", "ray"])
        assert result.exit_code == 0, result.output
        calls = len(server.requests)
    local, ray = finished(tmp_path / "local"), finished(tmp_path / "ray")
    assert len(local) == 4 and list(local["epochs"]) == [1, 1, 2, 2] and list(local["seed"]) == [1, 2, 1, 2]
    pd.testing.assert_frame_equal(local, ray)
    assert (local["summary.episodes"] == local["epochs"] * 3).all()
    seeds = pd.read_csv(tmp_path / "local" / "seeds.csv")  # per setting across its seeds: mean and 95% CI
    assert list(seeds["epochs"]) == [1, 2] and list(seeds["seeds"]) == [2, 2] and "seed" not in seeds
    assert list(seeds["summary.episodes.mean"]) == [3, 6] and list(seeds["summary.episodes.ci_low"]) == [3, 6]
    result = runner.invoke(app, ["sweep", str(file), "--out", str(tmp_path / "local")])  # finished runs: skipped
    assert result.exit_code == 0 and "4 finished before" in " ".join(result.output.split())
    assert calls == len(server.requests)


def test_a_sweep_killed_halfway_resumes_to_the_same_sweep_csv(tmp_path: Path) -> None:
    with loopback_openai(answer, latency_s=0.02) as server:
        file = sweep_file(tmp_path, server.url, workers=1, seeds=3)
        whole = runner.invoke(app, ["sweep", str(file), "--out", str(tmp_path / "whole")])
        assert whole.exit_code == 0, whole.output
        driver = subprocess.Popen(
            [SANDBOX, "sweep", str(file), "--out", str(tmp_path / "cut")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ),
        )
        runs = tmp_path / "cut" / "runs"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            done = [d for d in runs.glob("run-*") if run_status(d) == "complete"] if runs.is_dir() else []
            if len(done) >= 2:
                break
            time.sleep(0.05)
        driver.send_signal(signal.SIGKILL)  # its worker dies with it
        driver.wait()
        assert 2 <= len([d for d in runs.glob("run-*") if run_status(d) == "complete"]) < 6
        assert not (tmp_path / "cut" / "sweep.csv").exists()
        result = runner.invoke(app, ["resume", str(tmp_path / "cut")])
        assert result.exit_code == 0, result.output
    pd.testing.assert_frame_equal(finished(tmp_path / "whole"), finished(tmp_path / "cut"))


def test_a_sweep_budget_stops_runs_and_a_higher_one_finishes_them(tmp_path: Path) -> None:
    with loopback_openai(answer) as server:
        file = sweep_file(tmp_path, server.url, budget={"calls": 10}, workers=1)
        result = runner.invoke(app, ["sweep", str(file), "--out", str(tmp_path / "out")])
        assert result.exit_code == 3, result.output
        made = [
            r
            for path in (tmp_path / "out" / "runs").glob("run-*/transcripts.jsonl")
            for r in map(json.loads, path.read_text().splitlines())
            if not r["cache_hit"] and not refused(r)
        ]
        assert len(made) == 10 and len(server.requests) >= 10  # the sweep's cap, across its runs
        table = pd.read_csv(tmp_path / "out" / "sweep.csv")
        assert "stopped" in set(table["status"])
        result = runner.invoke(app, ["resume", str(tmp_path / "out"), "--max-calls", "1000"])
        assert result.exit_code == 0, result.output
    assert len(finished(tmp_path / "out")) == 4


def test_each_local_worker_gets_its_own_cores_and_as_many_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs each sizing their thread pools to every core ran PPO episodes 20 times slower in bursts."""
    import concurrent.futures
    import multiprocessing

    import numpy  # noqa: F401  (a library that starts threads on import, as the workers' imports do)

    from sandbox.sweep.executors import THREAD_VARIABLES, _threads_per_worker, core_slices, usable_core_list
    from tests.cores_probe import cores_of_this_worker, start

    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)  # a count the user set would be kept
    cores = usable_core_list()
    slices = core_slices(cores, 2)
    context = multiprocessing.get_context("spawn")
    counter, running = context.Value("i", 0), context.Value("i", 0)
    before = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    with (
        _threads_per_worker(max(1, len(cores) // 2)),
        concurrent.futures.ProcessPoolExecutor(
            2, mp_context=context, initializer=start, initargs=(counter, slices, running)
        ) as pool,
    ):
        results = [f.result() for f in [pool.submit(cores_of_this_worker, 2) for _ in range(2)]]
    assert len({pid for pid, _, _ in results}) == 2  # one task on each worker
    assert sorted(threads[0] for _, threads, _ in results) == sorted(slices)
    for _, threads, omp in results:
        assert all(t == threads[0] for t in threads)  # every thread of the worker, not only the main one
        assert omp == str(max(1, len(cores) // 2))
    assert {name: os.environ.get(name) for name in THREAD_VARIABLES} == before  # the driver's own are restored
