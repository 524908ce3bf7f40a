"""What kind of run a scenario file describes, and what kind of run a directory holds.

Every command that takes a file or a run directory dispatches on these: a
society run (`sandbox run`), training (`train`, one seed or a group of
seeds), labeling (`label`), distillation (`distill`), a solve (`solve`), a
reward-model measurement (`reward-model`), and a sweep of any of them
(`sweep`). An unreadable scenario is a `ScenarioError` (exit 2) naming the
file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from sandbox.errors import UsageError

__all__ = ["RunKind", "ScenarioKind", "run_kind", "scenario_kind"]

ScenarioKind = Literal["dialogue", "distill", "training", "proxy", "society"]
RunKind = Literal["reward-model", "solve", "distill", "label", "seeds", "training", "society", "sweep"]


def scenario_kind(data: Any) -> ScenarioKind:
    """The kind of a parsed scenario file, by its blocks (`dialogue:`, `distill:`, `training:`, `proxy:`)."""
    from sandbox.scenario_file import is_dialogue, is_distill, is_proxy, is_training

    if is_dialogue(data):
        return "dialogue"
    if is_distill(data):
        return "distill"
    if is_training(data):
        return "training"
    if is_proxy(data):
        return "proxy"
    return "society"


def run_kind(path: Path | str) -> RunKind:
    """The kind of the run directory `path`; `UsageError` when it is not one, `ScenarioError` when its scenario
    file cannot be read."""
    from sandbox.dialogue.reward_error import is_reward_model_run
    from sandbox.moral.seeds import is_seed_group
    from sandbox.run_dir import SCENARIO, SWEEP
    from sandbox.scenario_file import read_yaml

    path = Path(path)
    if (path / SWEEP).is_file():
        return "sweep"
    if not (path / SCENARIO).is_file():
        raise UsageError(f"{path} is not a run directory (no {SCENARIO})")
    kind = scenario_kind(read_yaml(path / SCENARIO))
    if kind == "dialogue":
        return "reward-model" if is_reward_model_run(path) else "solve"
    if kind == "training":
        return "seeds" if is_seed_group(path) else "training"
    return {"distill": "distill", "proxy": "label", "society": "society"}[kind]  # type: ignore[return-value]
