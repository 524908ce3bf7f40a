"""Imports run one way: no command module imports the CLI back, and the moral package has no import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

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
        assert "sandbox.cli" not in _imports(path), f"{path.relative_to(ROOT)} imports sandbox.cli back"


def test_the_moral_package_has_no_import_cycle() -> None:
    package = ROOT / "sandbox" / "moral"
    names = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    graph = {name: {n for n in names if f"sandbox.moral.{n}" in _imports(package / f"{name}.py")} - {name}
             for name in names}  # fmt: skip
    assert graph["opponents"] <= graph["training"] | {"ppo", "rewards", "sampling"}  # what they share lives below both

    def cycle_from(node: str, path: list[str]) -> list[str] | None:
        for nxt in sorted(graph[node]):
            if nxt in path:
                return path[path.index(nxt):] + [nxt]
            found = cycle_from(nxt, [*path, nxt])
            if found:
                return found
        return None

    for name in sorted(names):
        cycle = cycle_from(name, [name])
        assert cycle is None, " -> ".join(cycle or [])
