"""The sandbox engine: scenarios, the LLM layer, games, state machines, runner, results, CLI.

The public surface is small: load a scenario, run it (or resume a run), read
the result.
"""

__version__ = "0.1.0"

from sandbox.api import RunResult, resume, run  # noqa: E402
from sandbox.errors import RunFailedError, SandboxError, ScenarioError, UsageError  # noqa: E402
from sandbox.runner import ProgressHooks, aresume, arun  # noqa: E402
from sandbox.scenario import Scenario, load_scenario, parse_scenario  # noqa: E402

__all__ = [
    "ProgressHooks",
    "RunFailedError",
    "RunResult",
    "SandboxError",
    "Scenario",
    "ScenarioError",
    "UsageError",
    "__version__",
    "arun",
    "aresume",
    "load_scenario",
    "parse_scenario",
    "resume",
    "run",
]
