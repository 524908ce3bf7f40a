"""`sandbox bench NAME`: the benchmarks every registered run kind names (`sandbox.core.kinds.RunKind.benchmarks`).

Each benchmark prints its figures as ratios against a baseline measured in
the same run (never a timed test), and returns them. The society kind's:
concurrency, overhead, embedded (`sandbox.society.benchmarks`), scai
(`sandbox.scai.bench`), pool (`sandbox.scai.pool_bench`),
principles (`sandbox.scai.principles`); moral fine-tuning's:
rollout, training (`sandbox.moral.bench`); dialogue (`sandbox.dialogue.bench`);
sweep (`sandbox.sweep.bench`); forks and replays: fork (`sandbox.engine.bench_fork`); the run viewer's: viewer (`sandbox.viewer.bench`) and viewer-limits (`sandbox.viewer.bench_limits`); an endpoint's
rate limits: rate-limit (`sandbox.society.rate_bench`). Run with `sandbox bench [NAME|all]` or `make bench`.
"""

from __future__ import annotations

from typing import Any

from sandbox.base.errors import UsageError
from sandbox.core import kinds

__all__ = ["benchmarks", "run_benchmarks"]


# The shared services' own benchmarks (not a kind's): the run viewer (`sandbox.viewer.bench`).
CORE = {
    "viewer": "sandbox.viewer.bench:run",
    "viewer-limits": "sandbox.viewer.bench_limits:run",
    "fork": "sandbox.engine.bench_fork:run",
    "rate-limit": "sandbox.society.rate_bench:run",
}


def benchmarks() -> dict[str, str]:
    """Every registered kind's benchmarks, then the shared services': name -> `"module:function"` reference."""
    found: dict[str, str] = {}
    for kind in kinds.kinds().values():
        for name, reference in kind.benchmarks.items():
            found.setdefault(name, reference)
    for name, reference in CORE.items():
        found.setdefault(name, reference)
    return found


def run_benchmarks(which: str = "all") -> dict[str, Any]:
    """Run the named benchmark (or all) and print each table; return each one's figures by name."""
    found = benchmarks()
    if which != "all" and which not in found:
        raise UsageError(f"unknown benchmark {which!r}: choose {', '.join(found)} or all")
    return {name: kinds.resolve(reference)() for name, reference in found.items() if which in ("all", name)}
