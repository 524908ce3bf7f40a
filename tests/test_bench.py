"""The benchmarks' code paths at a tiny size (the figures themselves come from `sandbox bench`)."""

from __future__ import annotations

from sandbox.bench import bench_scai


def test_bench_scai_runs_and_reports_against_its_baselines() -> None:
    figures = bench_scai(latency_s=0.02, runs=2, epochs=2, repeats=2)
    assert figures["critical_s"] == 2 * 3 * 0.02
    assert len(figures["concurrent_runs_s"]) == 2
    # 2 runs x (2 epochs x 20 calls + 1 revision) one at a time cannot beat the concurrent run's chain
    assert figures["sequential_s"] >= 2 * 41 * 0.02 > figures["concurrent_s"] >= figures["chain_s"]


def test_bench_rollout_runs_both_ways_on_the_tiny_model() -> None:
    from sandbox.bench import bench_rollout

    figures = bench_rollout(policies=("tiny",), parallel=4, rounds=2, episodes=1)
    tiny = figures["tiny"]
    assert tiny["batched"] > 0 and tiny["one_at_a_time"] > 0
    assert tiny["ratio"] == tiny["batched"] / tiny["one_at_a_time"]
