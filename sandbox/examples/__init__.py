"""The example scenarios and notebooks shipped inside the package, found by name.

The repository's `scenarios/` and `notebooks/` folders are this package's
(`sandbox/examples/`), so a `pip install` holds every example:

    >>> names = [example.name for example in examples()]
    >>> "default" in names and "moral/tiny/utilitarian_vs_tft" in names and "notebooks/explore_run" in names
    True
    >>> scenario_path("default").relative_to(SCENARIOS).as_posix()
    'default.yaml'

A scenario's name is its path under `scenarios/` without `.yaml`; a
notebook's is `notebooks/` and its file's stem. `sandbox examples list`
shows them, `sandbox examples copy NAME|all DIR` writes them out (a
scenario with the files its relative paths name: a sweep's base, a chain's
society, a network's edge list), and every command that takes a scenario
file takes a shipped scenario's name too (`sandbox run default`).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sandbox.base.errors import UsageError

__all__ = [
    "NOTEBOOKS",
    "ROOT",
    "SCENARIOS",
    "Example",
    "copy_examples",
    "examples",
    "find",
    "runs_folder",
    "scenario_path",
]

ROOT = Path(__file__).resolve().parent
SCENARIOS = ROOT / "scenarios"
NOTEBOOKS = ROOT / "notebooks"
_DATA = (".yaml", ".edgelist", ".jsonl", ".csv", ".txt")  # files a scenario names by a path relative to itself


@dataclass(frozen=True)
class Example:
    """A shipped example: its name, `scenario` or `notebook`, its file, and a line on what it is."""

    name: str
    kind: str
    path: Path
    description: str


def _first_sentence(text: str, limit: int = 110) -> str:
    text = " ".join(text.split())
    sentence = re.split(r"(?<=[a-z0-9)]\.)\s+(?=[A-Z])", text, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def _scenario_line(path: Path) -> str:
    """The scenario's `description` (its first sentence), else its first comment line, else its `name`."""
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("description"), str) and data["description"].strip():
        return _first_sentence(data["description"])
    comment = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#")), "")
    if comment:
        return _first_sentence(comment)
    return str(data.get("name", "")) if isinstance(data, dict) else ""


def _notebook_line(path: Path) -> str:
    """The notebook's first markdown heading (or line)."""
    import json

    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            lines = [line.strip().lstrip("# ").strip() for line in "".join(cell.get("source", [])).splitlines()]
            return _first_sentence(next((line for line in lines if line), ""))
    return ""


def examples() -> list[Example]:
    """Every shipped example: the scenarios (by path), then the notebooks."""
    found = [
        Example(p.relative_to(SCENARIOS).with_suffix("").as_posix(), "scenario", p, _scenario_line(p))
        for p in sorted(SCENARIOS.rglob("*.yaml"))
    ]
    found += [
        Example(f"notebooks/{p.stem}", "notebook", p, _notebook_line(p)) for p in sorted(NOTEBOOKS.glob("*.ipynb"))
    ]
    return found


def find(name: str) -> Example | None:
    """The example called `name` (a scenario's also with `.yaml` or as `scenarios/NAME.yaml`, a notebook's also with
    `.ipynb`), or None."""
    name = name.strip().strip("/").removeprefix("scenarios/")
    if name.startswith("notebooks/"):
        path = NOTEBOOKS / (name.removeprefix("notebooks/").removesuffix(".ipynb") + ".ipynb")
        kind = "notebook"
    else:
        path = SCENARIOS / (name.removesuffix(".yaml") + ".yaml")
        kind = "scenario"
    try:
        inside = path.resolve().is_relative_to(ROOT)
    except OSError:
        return None
    if not inside or not path.is_file() or ".." in Path(name).parts:
        return None
    if kind == "notebook":
        return Example(f"notebooks/{path.stem}", kind, path, _notebook_line(path))
    return Example(path.relative_to(SCENARIOS).with_suffix("").as_posix(), kind, path, _scenario_line(path))


def scenario_path(value: str | Path) -> Path:
    """`value` itself when it is a file, else the shipped scenario of that name (`default`,
    `moral/tiny/utilitarian_vs_tft`, also `scenarios/default.yaml` as the repository names it), else `value` when it
    has a file's suffix (the loader then names the file it cannot read).

    Raises:
        UsageError: `value` is neither a file, nor a file's name, nor a shipped scenario's name (exit 2).
    """
    path = Path(value)
    if path.is_file():
        return path
    example = find(str(value))
    if example is not None and example.kind == "scenario":
        return example.path
    if path.suffix:  # a file's name (missing.yaml): the loader says it cannot read it, naming it
        return path
    raise UsageError(
        f"{value}: no such scenario file, and no shipped scenario of that name (`sandbox examples list` shows them)"
    )


def _referenced(path: Path) -> list[Path]:
    """The shipped files a scenario names by a path relative to itself (and theirs, recursively)."""
    found: list[Path] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, str) and node.endswith(_DATA) and "\n" not in node:
            target = (path.parent / node).resolve()
            if target.is_file() and target.is_relative_to(SCENARIOS) and target not in found:
                found.append(target)
                if target.suffix == ".yaml":
                    found.extend(p for p in _referenced(target) if p not in found)

    try:
        walk(yaml.safe_load(path.read_text(encoding="utf-8")))
    except yaml.YAMLError:
        pass
    return found


def copy_examples(names: list[str], target: Path | str, *, force: bool = False) -> list[Path]:
    """Write the examples `names` (`all` among them: every one) under `target`: scenarios to `target/scenarios/...`, notebooks to
    `target/notebooks/...`, each scenario with the files its relative paths name, so they still resolve.

    Nothing is written when a name is unknown, or (without `force`) when a file would be overwritten.

    Returns:
        The files written.

    Raises:
        UsageError: an unknown name, or files that exist already (exit 2).
    """
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} is a file: give a folder to copy the examples into")
    if "all" in names:
        chosen = [example.path for example in examples()]
        chosen += [p for p in SCENARIOS.rglob("*") if p.is_file() and p.suffix != ".yaml"]
    else:
        chosen = []
        for name in names:
            example = find(name)
            if example is None:
                raise UsageError(f"{name}: no shipped example of that name (`sandbox examples list` shows them)")
            chosen += [example.path] + (_referenced(example.path) if example.kind == "scenario" else [])
    pairs = {source.resolve(): target / source.resolve().relative_to(ROOT) for source in chosen}
    existing = [str(dest) for dest in pairs.values() if dest.exists()]
    if existing and not force:
        raise UsageError(f"{len(existing)} file(s) exist already, e.g. {existing[0]} (--force overwrites them)")
    try:
        for source, dest in sorted(pairs.items()):
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)
    except OSError as error:
        raise UsageError(f"cannot write the examples under {target}: {error}") from None
    return sorted(pairs.values())


def runs_folder(start: Path | str | None = None) -> Path:
    """The `runs/` folder of `start` (default: the current directory) or of its nearest parent that has one, else
    `start/runs`: where the notebooks look for runs when `RUN_DIR` is not set."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "runs").is_dir():
            return folder / "runs"
    return here / "runs"
