"""The sandbox engine: scenarios, the LLM layer, games, state machines, runner, results, CLI.

The public surface is small: load a scenario file of any kind, run it (or
resume a run), read the result; the kinds of run are plug-ins
(`sandbox.core.kinds`). Names are imported on first use, so `import sandbox.rules` stays
light and the actor packages can import the engine's contracts without cycles.
"""

from __future__ import annotations

import importlib
from typing import Any

from sandbox.base.lazy import lazy_attribute

__version__ = "0.1.0"

_EXPORTS = {
    "ProgressHooks": "sandbox.society.runner",
    "RunFailedError": "sandbox.base.errors",
    "RunKind": "sandbox.core.kinds",
    "RunResult": "sandbox.core.result",
    "SandboxError": "sandbox.base.errors",
    "ScenarioError": "sandbox.base.errors",
    "SocietyScenario": "sandbox.society.scenario",
    "UsageError": "sandbox.base.errors",
    "arun": "sandbox.society.runner",
    "compare": "sandbox.api",
    "fork": "sandbox.api",
    "aresume": "sandbox.society.runner",
    "load_scenario": "sandbox.core.scenario_files",
    "parse_scenario": "sandbox.core.scenario_files",
    "register_kind": "sandbox.core.kinds",
    "replay": "sandbox.api",
    "resume": "sandbox.api",
    "run": "sandbox.api",
}

__all__ = ["__version__", "Scenario", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    if name == "register_kind":
        return importlib.import_module("sandbox.core.kinds").register
    if name == "Scenario":  # the society kind's scenario model (with SCAI's assistant block), found by the registry
        return importlib.import_module("sandbox.core.kinds").get("society").scenario_model()
    return lazy_attribute(__name__, _EXPORTS, name)
