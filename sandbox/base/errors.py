"""Errors the sandbox raises on purpose, each mapped to a CLI exit code."""

from __future__ import annotations


class SandboxError(Exception):
    """Base class of the sandbox's own errors."""

    exit_code = 1


class ScenarioError(SandboxError):
    """A scenario file (or override) is invalid. Nothing was written."""

    exit_code = 2

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        lines = [f"{source}: invalid scenario"]
        lines += [f"  {path or '<root>'}: {message}" for path, message in problems]
        super().__init__("\n".join(lines))


class UsageError(SandboxError):
    """A command-line argument or API argument is invalid. Nothing was written."""

    exit_code = 2


class ModelUnavailableError(SandboxError):
    """A model backend cannot be built on this machine (with a hint on how to fix it)."""

    exit_code = 2


class RunFailedError(SandboxError):
    """A run stopped on a runtime failure; its directory stays resumable."""

    exit_code = 1
