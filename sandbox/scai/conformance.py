"""The society kind's conformance case (`sandbox.core.conformance`): Social Contract AI over 2 runs of 2 epochs in a
society of 16 selfish users, with the society engine's scripted user, assistant and MetaLM (tests only).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.core.conformance import ConformanceCase

__all__ = ["CASE"]


def _scenario(tmp: Path) -> Any:
    from sandbox.core.scenario_files import parse_kind

    data = {
        "name": "scai-conformance",
        "seed": 5,
        "runs": 2,
        "epochs": 2,
        "society": {"size": 16, "norms": [{"norm": "selfish", "proportion": 1.0}]},
        "assistant": {"initial_policy": "Put others first and give them nearly all."},
    }
    return parse_kind("society", data)


def _hooks(tick: Callable[[], None]) -> Any:
    from sandbox.society.runner import ProgressHooks

    return ProgressHooks(on_episode=lambda _: tick())


def _models() -> dict[str, Any]:
    from sandbox.society.benchmarks import fake_scai_models

    return fake_scai_models(0.0)


CASE = ConformanceCase(
    scenario=_scenario,
    hooks=_hooks,
    tables=("episodes.csv", "metrics.csv", "epochs.csv", "policies.jsonl"),
    models=_models,
)
