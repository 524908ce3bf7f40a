"""A sweep file, and its expansion into runs: a base scenario, a grid of overrides by field path, and seeds.

    name: scai-norms-by-meta
    sweep:
      base: ../scenarios/scai/one_group_selfish.yaml   # a path (relative to this file) or the scenario itself
      grid:                                             # every combination, in this order
        society.norms:
          - [{norm: selfish, proportion: 1.0}]
          - [{norm: fair, proportion: 1.0}]
        models.meta: [embedded, openai:gpt-4o-mini]
      zip:                                              # fields that vary together: one axis, the i-th values at once
        - {population.agents: [24, 48], population.generations: [30, 60]}
      derive:                                           # a field computed in each run from others (arithmetic)
        population.members.1.share: 1 - population.members.0.share
      seeds: 3                                          # each combination at seeds SEED, SEED+1, SEED+2
      budget: {calls: 200000, usd: 25}                  # the whole sweep's (each run keeps its own too)
      executor: local                                   # or ray (`--executor`, `--address`)
      workers: 2

A path names any field of the base scenario (`training.reward`,
`models.meta`, `proxy.intent.examples`, `seed`); a number in a path indexes a
list (`society.norms.0.proportion`). A path the base scenario does not have
is an error naming it, and every expanded run is validated before anything is
written.

The runs are every combination of the grid's axes, then the `zip` groups' (each group one axis: its lists, of one
length, are read together, the first values of each, then the second ...). A `derive`d field is set in each run from
an arithmetic expression (`+ - * / **`, parentheses, numbers, `round`, `min`, `max`) of the run's fields by path, the
grid's values already set: the others' share as one minus the committed share, say. A derived field is one of the
run's overrides in `sweep.csv` but not a swept parameter (`SweepBlock.parameters`).
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from sandbox.base.errors import ScenarioError
from sandbox.base.scenario_model import ScenarioModel, StrictModel
from sandbox.llm.budget import Budget
from sandbox.sweep.derive import evaluate, expression_problem, fields_of

__all__ = ["SweepBlock", "SweepFile", "SweepRun", "expand", "load_sweep", "parse_sweep"]


class SweepBlock(StrictModel):
    """What a sweep varies, how many seeds, what it may spend and where it runs."""

    base: str | dict[str, Any] = Field(
        ..., description="The base scenario: a file (relative to the sweep file) or the scenario itself."
    )
    grid: dict[str, list[Any]] = Field(default_factory=dict, description="Field path -> the values it takes.")
    zip: list[dict[str, list[Any]]] = Field(
        default_factory=list,
        description="Groups of fields that vary together: each group one axis, its lists of one length read in step.",
    )
    derive: dict[str, str] = Field(
        default_factory=dict,
        description="Field path -> an arithmetic expression of the run's fields by path (1 - population.members.0.share).",
    )
    seeds: int = Field(1, ge=1, le=10_000, description="Seeds per combination: the base's seed and the next ones.")
    budget: Budget = Field(default_factory=Budget, description="Caps on the whole sweep's LLM calls, tokens, dollars.")
    executor: Literal["local", "ray"] = Field("local", description="local (a process pool) or ray.")
    workers: int = Field(2, ge=1, le=4096, description="Runs at once.")

    @field_validator("grid")
    @classmethod
    def _values(cls, grid: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for path, values in grid.items():
            if not values:
                raise ValueError(f"{path}: give at least one value")
            if not all(part for part in path.split(".")):
                raise ValueError(f"{path!r} is not a field path such as society.norms or training.reward")
        return grid

    @field_validator("zip")
    @classmethod
    def _together(cls, groups: list[dict[str, list[Any]]]) -> list[dict[str, list[Any]]]:
        for group in groups:
            lengths = {path: len(values) for path, values in group.items()}
            if not group or min(lengths.values()) == 0:
                raise ValueError("each zip group names at least one field, with at least one value")
            if len(set(lengths.values())) > 1:
                raise ValueError(f"the lists of a zip group vary together, so they need one length, not {lengths}")
        return groups

    @model_validator(mode="after")
    def _each_field_once(self) -> SweepBlock:
        paths = [*self.grid, *(path for group in self.zip for path in group), *self.derive]
        twice = sorted({path for path in paths if paths.count(path) > 1})
        if twice:
            raise ValueError(f"{', '.join(twice)}: a field is set once, by the grid, a zip group or derive")
        for path, expression in self.derive.items():
            problem = expression_problem(expression)
            if problem:
                raise ValueError(f"derive.{path}: {problem}")
        return self

    @property
    def axes(self) -> list[tuple[str, ...]]:
        """The grid's axes: each grid field alone, each zip group's fields together."""
        return [*((path,) for path in self.grid), *(tuple(group) for group in self.zip)]

    @property
    def parameters(self) -> list[str]:
        """The swept fields: the grid's and the zip groups' (derived fields and seeds are not parameters)."""
        return [*self.grid, *(path for group in self.zip for path in group)]

    def combinations(self) -> list[dict[str, Any]]:
        """Every combination of the axes (the grid's fields, then each zip group), as path -> value."""
        axes: list[list[dict[str, Any]]] = [[{path: value} for value in values] for path, values in self.grid.items()]
        for group in self.zip:
            width = len(next(iter(group.values())))
            axes.append([{path: values[i] for path, values in group.items()} for i in range(width)])
        return [{k: v for part in parts for k, v in part.items()} for parts in itertools.product(*axes)]


class SweepFile(ScenarioModel):
    """A sweep file: a name and a `sweep:` block."""

    name: str = Field(..., pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Used in the sweep directory's name.")
    description: str = ""
    sweep: SweepBlock


@dataclass(frozen=True)
class SweepRun:
    """One run of a sweep: its id, the overrides it applies (path -> value) and its validated scenario."""

    id: str
    overrides: dict[str, Any]
    scenario: Any
    kind: str

    def label(self) -> str:
        return ", ".join(f"{path}={json.dumps(value)}" for path, value in self.overrides.items())


def parse_sweep(data: Any, source: str, base_dir: Path | None = None) -> tuple[SweepFile, dict[str, Any]]:
    """Validate a sweep file's data; return it and the base scenario's data."""
    from pydantic import ValidationError

    from sandbox.core.scenario_files import load_scenario, load_scenario_data, scenario_problems

    if not isinstance(data, dict) or "sweep" not in data:
        raise ScenarioError(source, [("sweep", "missing: a sweep file has a sweep: block")])
    try:
        sweep = SweepFile.model_validate(data)
    except ValidationError as error:
        raise ScenarioError(source, scenario_problems(error)) from None
    base = sweep.sweep.base
    if isinstance(base, str):
        path = Path(base) if Path(base).is_absolute() else (base_dir or Path(".")) / base
        # read as `sandbox run` reads it (its kind's loader): the files it names (a population's edges_file, a
        # society's guided members', a chain's society) relative to the base file, not to the working directory
        base = load_scenario(path).model_dump(mode="json")
    else:  # the same loader, the files it names relative to the sweep file
        base = load_scenario_data(base, base_dir or Path("."), source, "sweep.base").model_dump(mode="json")
    return sweep, base


def load_sweep(path: str | Path) -> tuple[SweepFile, dict[str, Any]]:
    """Read a sweep file (and its base scenario)."""
    from sandbox.base.files import read_yaml

    return parse_sweep(read_yaml(path), str(path), Path(path).parent)


def read_sweep(path: Path | str, data: Any = None) -> SweepFile:
    """A sweep file with its base scenario read in (a relative `base:` is relative to the file). `data`: the sweep's
    fields written inside `path` instead of read from it."""
    sweep, base = load_sweep(path) if data is None else parse_sweep(data, str(path), Path(path).parent)
    return SweepFile.model_validate(
        {**sweep.model_dump(mode="json"), "sweep": {**sweep.sweep.model_dump(mode="json"), "base": base}}
    )


def base_data(scenario: SweepFile, source: str) -> dict[str, Any]:
    """The base scenario's data: read in by `read_sweep`, or (a sweep built in Python naming a file) read now,
    relative to the working directory."""
    base = scenario.sweep.base
    return base if isinstance(base, dict) else parse_sweep(scenario.model_dump(mode="json"), source)[1]


def with_base_options(
    scenario: SweepFile, source: str, *, seed: int | None = None, models: list[str] | None = None
) -> SweepFile:
    """`--model ROLE=SPEC` and `--seed K` for every run of the sweep: given to the base scenario by its kind's own
    overrides (its roles; `--seed K`: the runs' seeds start at K). `UsageError` for a base kind without them, and
    for an option whose field the grid varies (the grid's values would win)."""
    from sandbox.base.errors import UsageError
    from sandbox.core.kinds import by_option, kind_of_data
    from sandbox.core.scenario_files import parse_kind

    base = base_data(scenario, source)
    kind = kind_of_data(base)
    if not kind.has("overrides"):
        raise UsageError(
            f"the base scenario is {kind.title or 'a ' + kind.name + ' scenario'}, which takes no --model or --seed"
        )
    grid = scenario.sweep.grid
    for option, given_value, field in (("--seed", seed, "seed"), ("--model", models, "models")):
        varied = [path for path in grid if path == field or path.startswith(field + ".")]
        if given_value is not None and varied:  # the grid's values would win over the option in every run
            raise UsageError(f"{option}: the sweep's grid varies {varied[0]}; change the grid instead")
    given = {k: v for k, v in {"seed": seed, "models": models}.items() if v is not None}
    by_option(given, kind.run_options, f"{kind.name} runs")
    changed = kind.call("overrides", parse_kind(kind.name, base, source), source=source, **given)
    data = scenario.model_dump(mode="json")
    data["sweep"]["base"] = changed.model_dump(mode="json")
    return SweepFile.model_validate(data)


def _set(data: dict[str, Any], path: str, value: Any) -> str | None:
    """Set `value` at the dotted `path` of `data`; the part of the path that does not exist, or None."""
    parts = path.split(".")
    node: Any = data
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, dict) and part in node:
            if last:
                node[part] = copy.deepcopy(value)
                return None
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            if last:
                node[int(part)] = copy.deepcopy(value)
                return None
            node = node[int(part)]
        else:
            return ".".join(parts[: i + 1])
    return None


_MISSING = object()


def _get(data: Any, path: str) -> Any:
    """The value at the dotted `path` of `data` (`_MISSING` where there is none)."""
    node = data
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def expand(sweep: SweepFile, base: dict[str, Any], source: str) -> list[SweepRun]:
    """Every run of the sweep, validated: each combination of the grid's and the zip groups' axes (in their order)
    at each seed, its derived fields computed.

    `ScenarioError` naming `source` and the field when a path does not exist in the base scenario, or when a run's
    scenario is invalid.
    """
    from sandbox.core.kinds import kind_of_data
    from sandbox.core.scenario_files import parse_kind

    kind = kind_of_data(base).name

    def parse(data: Any, where: str) -> Any:
        return parse_kind(kind, data, where)

    full = parse(base, source).model_dump(mode="json")  # every field, defaults included: the paths a grid may name
    block = sweep.sweep
    named = [
        *((f"sweep.grid.{path}", path) for path in block.grid),
        *((f"sweep.zip.{i}.{path}", path) for i, group in enumerate(block.zip) for path in group),
        *((f"sweep.derive.{path}", path) for path in block.derive),
    ]
    for field, path in named:
        missing = _set(copy.deepcopy(full), path, None)
        if missing is not None:
            raise ScenarioError(source, [(field, f"the base scenario has no field {missing}")])
    for path, expression in block.derive.items():
        for used in fields_of(expression):
            if _get(full, used) is _MISSING:
                raise ScenarioError(source, [(f"sweep.derive.{path}", f"the base scenario has no field {used}")])
    runs = []
    for combination in block.combinations():
        for k in range(block.seeds):
            data = copy.deepcopy(full)
            overrides = dict(combination)
            for path, value in overrides.items():
                _set(data, path, value)
            for path, expression in block.derive.items():  # from the run's fields, the grid's values set
                try:
                    value = evaluate(expression, functools.partial(_get, data))
                except ValueError as error:
                    raise ScenarioError(source, [(f"sweep.derive.{path}", str(error))]) from None
                _set(data, path, value)
                overrides[path] = value
            if block.seeds > 1 or "seed" not in overrides:
                data["seed"] = int(data.get("seed", 0)) + k
                overrides = {**overrides, "seed": data["seed"]}
            run_id = f"run-{len(runs):04d}"
            data["name"] = f"{sweep.name}-{run_id}"
            scenario = parse(data, f"{source} ({run_id}: {', '.join(f'{p}={v!r}' for p, v in overrides.items())})")
            runs.append(SweepRun(run_id, overrides, scenario, kind))
    return runs
