"""Imports run one way: no command module imports the CLI back, no package has an import circle, the layers of
import-linter's contracts hold, and every module imports in a fresh interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, at the top or inside a function (relative imports are not used here)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_command_module_imports_the_cli() -> None:
    modules = sorted((ROOT / "sandbox").glob("*/commands.py"))
    assert len(modules) >= 4
    for path in modules:
        assert "sandbox.cli.runs" not in _imports(path), f"{path.relative_to(ROOT)} imports sandbox.cli.runs back"


def test_the_moral_package_has_no_import_cycle() -> None:
    package = ROOT / "sandbox" / "moral"
    names = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    graph = {
        name: {n for n in names if f"sandbox.moral.{n}" in _imports(package / f"{name}.py")} - {name} for name in names
    }
    assert graph["opponents"] <= graph["environment"]  # what they share lives below both (sandbox.rewards, training)

    def cycle_from(node: str, path: list[str]) -> list[str] | None:
        for nxt in sorted(graph[node]):
            if nxt in path:
                return path[path.index(nxt) :] + [nxt]
            found = cycle_from(nxt, [*path, nxt])
            if found:
                return found
        return None

    for name in sorted(names):
        cycle = cycle_from(name, [name])
        assert cycle is None, " -> ".join(cycle or [])


def _modules() -> list[str]:
    """Every module of the distribution's import packages (the `__main__` module runs the CLI: left out)."""
    names = []
    for package in ("sandbox", "agents", "societies", "prompts"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__main__":
                continue
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


@pytest.mark.parametrize("order", ["sorted", "reversed"])
def test_every_module_imports_in_a_fresh_interpreter(order: str) -> None:
    """An import circle hidden inside functions fails only when a module is imported first: a fresh interpreter
    imports every module, in one order and in the other."""
    modules = _modules() if order == "sorted" else _modules()[::-1]
    assert len(modules) > 150
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    result = subprocess.run(
        [sys.executable, "-c", code, *modules], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]


def test_the_import_contracts_hold() -> None:
    """import-linter's contracts in pyproject.toml: the layers (inside sandbox, and across the packages), no method
    in the actors, no circles; imports made for type hints count too."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert config["exclude_type_checking_imports"] is False  # a circle behind `if TYPE_CHECKING:` is a circle
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint), "--no-cache"], capture_output=True, text=True, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "0 broken" in result.stdout and "Contracts: 4 kept" in result.stdout
