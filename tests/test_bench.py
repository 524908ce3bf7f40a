"""The benchmarks' code paths at a tiny size (the figures themselves come from `sandbox bench`)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sandbox.scai.bench import bench_scai


def test_bench_scai_runs_and_reports_against_its_baselines() -> None:
    figures = bench_scai(latency_s=0.02, runs=2, epochs=2, repeats=2)
    assert figures["critical_s"] == 2 * 3 * 0.02
    assert len(figures["concurrent_runs_s"]) == 2
    # 2 runs x (2 epochs x 20 calls + 1 revision) one at a time cannot beat the concurrent run's chain
    assert figures["sequential_s"] >= 2 * 41 * 0.02 > figures["concurrent_s"] >= figures["chain_s"]
    # the real-HTTP case ran the same calls through a loopback server: it cannot beat the chain either
    assert len(figures["http_runs_s"]) == 2 and figures["http_s"] >= figures["chain_s"]
    # every repeat, not only the median, waits through the chain of dependent calls
    assert min(figures["http_runs_s"]) >= figures["chain_s"] and min(figures["concurrent_runs_s"]) >= figures["chain_s"]
    assert 0 < figures["http_cpu_ms_per_call"] and 0 < figures["scripted_cpu_ms_per_call"]


def test_bench_rollout_runs_both_ways_on_the_tiny_model() -> None:
    from sandbox.moral.bench import bench_rollout

    started = time.perf_counter()
    figures = bench_rollout(policies=("tiny",), parallel=4, rounds=2, episodes=1)
    elapsed = time.perf_counter() - started
    tiny = figures["tiny"]
    # one episode each way: no rate claims more time than the benchmark took
    assert 1 / tiny["batched"] + 1 / tiny["one_at_a_time"] < elapsed
    # batched: one generation per round; one at a time: one per game and round (4 games x 2 rounds)
    assert tiny["batched_calls"] == 2 and tiny["one_at_a_time_calls"] == 4 * 2


@pytest.mark.slow(seconds=80)
def test_bench_embedded_plays_a_society_both_ways(tmp_path: Path) -> None:
    from sandbox.society.benchmarks import bench_embedded

    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(
        "name: tiny\nseed: 2\nmodels: {user: {spec: embedded, sampling: {max_tokens: 48}}}\n"
        "society: {size: 4, norms: [{norm: fair, proportion: 1.0}]}\n"
    )
    figures = bench_embedded(scenario, requests=2, max_tokens=8, slot_counts=(1, 2))
    for setting in ("present", "tuned"):
        run = figures[setting]
        assert run["calls"] == 4 and run["computed_tokens"] + run["reused_tokens"] == run["prompt_tokens"] > 400
    # one norm: the tuned run's later calls reuse the first call's system prompt and few-shot turns
    assert figures["tuned"]["reused_tokens"] > figures["tuned"]["prompt_tokens"] / 2
    # both settings made the same 4 calls (by call id), whose answers are compared
    assert (
        figures["compared_calls"] == 4 and 0 <= figures["same_answers"] <= 4 and set(figures["tokens_per_s"]) == {1, 2}
    )


def test_bench_dialogue_expands_a_level_at_a_time() -> None:
    from sandbox.dialogue.bench import bench_dialogue

    figures = bench_dialogue(latency_s=0.01, depth=2, concurrency=64)
    assert figures["calls"] == 4 + 16
    # one call at a time cannot beat its 20 latencies; a level at a time needs at least its 2
    assert figures["sequential_s"] >= 20 * 0.01 > figures["concurrent_s"] >= 2 * 0.01


def test_bench_training_times_episodes_at_both_sizes_and_settings() -> None:
    from sandbox.moral.bench import bench_training

    started = time.perf_counter()
    figures = bench_training(policies=("tiny", "tiny:1"), episodes=1, real_size=("tiny:1",))
    elapsed = time.perf_counter() - started
    assert set(figures) == {"tiny/tiny file", "tiny:1/authors", "tiny:1/multi_step"}
    # one timed episode each: together they cannot have taken longer than the whole benchmark
    assert 0 < sum(result["s_per_episode"] for result in figures.values()) < elapsed
    for result in figures.values():
        assert result["peak_memory_gb"] > 0 and result["dtype"] in ("float32", "bfloat16")


def test_bench_sweep_times_a_ray_sweep_against_the_same_runs_in_one_process() -> None:
    from sandbox.sweep.bench import bench_sweep

    figures = bench_sweep(runs=2, workers=2, latency_s=0.01, epochs=1)
    assert figures["runs"] == 2 and figures["sweep_s"] > figures["ray_start_s"] > 0
    assert figures["sequential_s"] >= 2 * 1 * 2 * 0.01  # two runs, one after another, of an epoch's two calls each


def test_bench_pool_loses_nothing_over_a_failing_server() -> None:
    from sandbox.scai.pool_bench import bench_pool

    figures = bench_pool(runs=1, epochs=2, latency_s=0.0)
    assert figures["same_results_as_one_server"] and figures["unanswered"] == 0
    assert figures["calls"] == figures["calls_one_server"] == sum(figures["answered_by"].values())
    assert figures["failed_over"] >= 1


def test_bench_viewer_lists_every_run_and_sends_a_page_of_calls_not_the_transcript() -> None:
    from sandbox.core.bench import run_benchmarks

    figures = run_benchmarks("viewer")["viewer"]
    assert figures["runs_listed"] == 1_001 and figures["start_to_list_vs_ls_R"] > 0
    assert figures["first_calls_page_bytes"] < figures["transcript_bytes"] / 50  # one page of 50 calls of 10,000
    assert 0 < figures["filtered_matched"] < 10_000
