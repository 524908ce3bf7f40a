"""The sandbox engine: scenarios, the LLM layer, games, state machines, runner, results, CLI.

The public surface is small: load a scenario, run it (or resume a run), read
the result. Names are imported on first use, so `import sandbox.games` stays
light and the actor packages can import the engine's contracts without cycles.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "ProgressHooks": "sandbox.runner",
    "RunFailedError": "sandbox.errors",
    "RunResult": "sandbox.api",
    "SandboxError": "sandbox.errors",
    "Scenario": "sandbox.scenario",
    "ScenarioError": "sandbox.errors",
    "UsageError": "sandbox.errors",
    "arun": "sandbox.runner",
    "aresume": "sandbox.runner",
    "load_scenario": "sandbox.scenario_file",
    "parse_scenario": "sandbox.scenario_file",
    "resume": "sandbox.api",
    "run": "sandbox.api",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'sandbox' has no attribute {name!r}")
