"""The house's figures (issue 49), measured over the code as it is: import depth, loose modules, `Any` annotations.

    python -m tests.house_measures          # prints them

* depth: the most modules on one chain of imports from an entry point (`sandbox.cli.runs`, `sandbox.api`,
  `sandbox.__main__`) down to a module that imports none of the project's (the import graph of grimp, which
  import-linter reads, type-checking imports included; circles, if any, condensed to one level);
* loose modules: the modules directly in `sandbox/` (beside its sub-packages), `__init__` and `__main__` aside;
* `Any` annotations: parameters, returns, variables and fields annotated `Any` itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("sandbox", "agents", "societies", "prompts")
ENTRY_POINTS = ("sandbox.cli.runs", "sandbox.api", "sandbox.__main__")


def import_depth() -> int:
    graph = grimp.build_graph(*PACKAGES, include_external_packages=False, exclude_type_checking_imports=False)
    imports = nx.DiGraph()
    for module in graph.modules:
        imports.add_node(module)
        for imported in graph.find_modules_directly_imported_by(module):
            imports.add_edge(module, imported)
    dag = nx.condensation(imports)
    members = nx.get_node_attributes(dag, "members")
    starts = {n for n, found in members.items() if any(m in found for m in ENTRY_POINTS)}
    levels: dict[int, int] = {}
    for node in reversed(list(nx.topological_sort(dag))):
        levels[node] = 1 + max((levels[s] for s in dag.successors(node)), default=0)
    return max(levels[n] for n in starts)


def loose_modules() -> list[str]:
    return sorted(p.stem for p in (ROOT / "sandbox").glob("*.py") if p.stem not in ("__init__", "__main__"))


def any_annotations() -> int:
    """Annotations that are `Any` itself (`x: Any`, `-> Any`), in the packages (the shipped examples aside)."""
    count = 0
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "examples" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    args = node.args
                    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
                    found = [a.annotation for a in every if a is not None] + [node.returns]
                elif isinstance(node, ast.AnnAssign):
                    found = [node.annotation]
                else:
                    continue
                count += sum(isinstance(a, ast.Name) and a.id == "Any" for a in found)
    return count


if __name__ == "__main__":
    loose = loose_modules()
    print(f"import depth, entry points to the base: {import_depth()} modules")
    print(f"loose modules at sandbox/'s root: {len(loose)} ({', '.join(loose)})")
    print(f"annotations naming Any: {any_annotations()}")
