"""The sandbox engine: scenarios, the LLM layer, games, state machines, runner, results, CLI.

The public surface is small: load a scenario file of any kind, run it (or
resume a run), read the result; the kinds of run are plug-ins
(`sandbox.kinds`). Names are imported on first use, so `import sandbox.games` stays
light and the actor packages can import the engine's contracts without cycles.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "ProgressHooks": "sandbox.runner",
    "RunFailedError": "sandbox.errors",
    "RunKind": "sandbox.kinds",
    "RunResult": "sandbox.run_result",
    "SandboxError": "sandbox.errors",
    "ScenarioError": "sandbox.errors",
    "SocietyScenario": "sandbox.scenario",
    "UsageError": "sandbox.errors",
    "arun": "sandbox.runner",
    "aresume": "sandbox.runner",
    "load_scenario": "sandbox.scenario_file",
    "parse_scenario": "sandbox.scenario_file",
    "register_kind": "sandbox.kinds",
    "resume": "sandbox.api",
    "run": "sandbox.api",
}

__all__ = ["__version__", "Scenario", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    if name == "register_kind":
        return importlib.import_module("sandbox.kinds").register
    if name == "Scenario":  # the society kind's scenario model (with SCAI's assistant block), found by the registry
        return importlib.import_module("sandbox.kinds").get("society").scenario_model()
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'sandbox' has no attribute {name!r}")
