"""Scenario files of every kind: reading YAML into the kind's model, errors that name the file and field.

The models live with their kinds (`sandbox.core.kinds`: a file's blocks say its
kind); this module turns text and command-line options into them, and
pydantic's errors into (field path, message) pairs such as
`society.norms[1].proportion`.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from sandbox.base.errors import ScenarioError
from sandbox.base.files import read_yaml
from sandbox.core import kinds
from sandbox.core.run_dir import SCENARIO


@functools.cache
def _union_tags(model: Any) -> frozenset[tuple[str, str]]:
    """(field, tag) for every discriminated union in `model`'s schema: pydantic puts the tag in an error's path
    after the field (`game.ultimatum.amount`), which a reader never wrote."""
    found: set[tuple[str, str]] = set()

    def walk(node: Any, field: str | None) -> None:
        if isinstance(node, dict):
            if field is not None and isinstance(node.get("discriminator"), dict):
                found.update((field, tag) for tag in node["discriminator"].get("mapping", {}))
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):
                    for name, prop in value.items():
                        walk(prop, name)
                else:
                    walk(value, field if key in ("anyOf", "oneOf", "allOf") else None)
        elif isinstance(node, list):
            for item in node:
                walk(item, field)

    def walk_core(node: Any, field: str | None) -> None:  # a union tagged by a function has no mapping in the JSON
        if isinstance(node, dict):
            if node.get("type") == "tagged-union" and field is not None:
                found.update((field, str(tag)) for tag in node.get("choices", {}))
            if node.get("type") == "model-fields":
                for name, value in node.get("fields", {}).items():
                    walk_core(value, name)
                return
            for value in node.values():
                walk_core(value, field)
        elif isinstance(node, list):
            for item in node:
                walk_core(item, field)

    walk(model.model_json_schema(), None)
    walk_core(model.__pydantic_core_schema__, None)
    return frozenset(found)


def _format_loc(loc: tuple[Any, ...], tags: frozenset[tuple[str, str]]) -> str:
    parts: list[str] = []
    for previous, item in zip((None, *loc), loc):
        if (previous, item) in tags:
            continue  # the union's tag
        if isinstance(item, str) and (item.startswith("function-") or item == "str") and previous is not None:
            continue  # the same for a validated union member (`game: str | CustomGame`)
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def _without_string_branch(errors: list[Any]) -> list[Any]:
    """`errors` less a `X | str` union's "Input should be a valid string" where the input was a mapping or a list:
    the other branch's errors say what is wrong in it (`chain.society.name: Field required`)."""
    return [
        item
        for item in errors
        if not (
            item["type"] == "string_type"
            and item["loc"][-1:] == ("str",)
            and isinstance(item.get("input"), (dict, list))
            and any(other["loc"][: len(item["loc"]) - 1] == item["loc"][:-1] for other in errors if other is not item)
        )
    ]


_NAMED = re.compile(r"^([a-z_]+(?:\.[A-Za-z0-9_\[\]]+)+): (.+)$", re.S)


def scenario_problems(error: ValidationError, model: Any = None) -> list[tuple[str, str]]:
    """Turn a pydantic error into (field path, message) pairs (`model`, the model validated: its unions' tags are
    left out of the paths)."""
    tags = _union_tags(model) if model is not None else frozenset()
    problems = []
    for item in _without_string_branch(error.errors()):
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown field"
        path = _format_loc(item["loc"], tags)
        named = _NAMED.match(message) if not path else None
        if named:  # a whole-scenario check that names the field it is about ("society.guided.solve.x: ...")
            path, message = named.groups()
        problems.append((path, message))
    return problems


def validate_model(model: Any, data: Any, source: str) -> Any:
    """Validate `data` as `model` (a strict pydantic scenario model); `ScenarioError` naming `source` and each field."""
    if not isinstance(data, dict):
        raise ScenarioError(source, [("", "a scenario is a mapping of fields")])
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise ScenarioError(source, scenario_problems(error, model)) from None


def parse_kind(kind: str, data: Any, source: str = "<scenario>") -> Any:
    """Validate `data` as a scenario of the registered kind `kind` (`sandbox.core.kinds`)."""
    return validate_model(kinds.get(kind).scenario_model(), data, source)


def parse_scenario(data: Any, source: str = "<scenario>") -> Any:
    """Validate already-parsed data as a scenario of the kind its blocks say (`sandbox.core.kinds.kind_of_data`)."""
    return validate_model(kinds.kind_of_data(data).scenario_model(), data, source)


def load_scenario(path: str | Path, kind: str | None = None) -> Any:
    """Load and validate a scenario file of any registered kind (the kind its blocks say), or of `kind` only.

    Args:
        path: A YAML scenario file, or a shipped scenario's name (`default`, `moral/tiny/utilitarian_vs_tft`:
            `sandbox.examples`) where no such file exists.
        kind: The kind the file must be (`sandbox.core.kinds`); None: any.

    Raises:
        ScenarioError: the file is missing, is not YAML, is of another kind than `kind`, or does not validate;
            the message names the file and each field path.
    """
    if not Path(path).is_file():
        from sandbox.examples import find

        example = find(str(path))
        if example is not None and example.kind == "scenario":
            path = example.path
    data = read_yaml(path)
    found = kinds.kind_of_data(data)
    if kind is not None and found.name != kind:
        wanted = kinds.get(kind)
        if found.block is not None:
            raise ScenarioError(
                str(path), [(found.block, f"{found.title or found.name}: run it with `sandbox {found.command}`")]
            )
        raise ScenarioError(
            str(path),
            [(wanted.block or "", f"missing: `sandbox {wanted.command}` runs scenarios with a {wanted.block}: block")],
        )
    if found.load:
        return found.call("load", path)
    return validate_model(found.scenario_model(), data, str(path))


def load_scenario_data(data: Any, folder: str | Path, source: str, field: str) -> Any:
    """Load and validate a scenario written inside another file (a sweep's `base:` mapping) as `load_scenario`
    reads a scenario file in `folder`: its kind's loader reads the files it names (a population's edges_file, a
    society's guided members', a chain's society) relative to `folder`.

    Raises:
        ScenarioError: naming `source` and each field path under `field` (`sweep.base.population.agents`).
    """
    if not isinstance(data, dict):
        raise ScenarioError(source, [(field, "a scenario is a mapping of fields")])
    found = kinds.kind_of_data(data)
    try:
        if found.load:  # the path only says the folder: the loader reads `data`, not the file
            return found.call("load", Path(folder) / (Path(source).name or SCENARIO), copy.deepcopy(data))
        return validate_model(found.scenario_model(), data, source)
    except ScenarioError as error:
        raise ScenarioError(source, [(f"{field}.{path}" if path else field, m) for path, m in error.problems]) from None


def with_sets(scenario: Any, sets: list[str], source: str = "--set") -> Any:
    """`scenario` with `--set FIELD=VALUE` items applied in order (`sandbox run FILE --set population.agents=200`),
    read as `sandbox fork --set` reads them (`sandbox.core.steps.parse_changes`): FIELD a field of the scenario as
    loaded, defaults included (`population.game.activation`; a number indexes a list; a sweep's base is read in:
    `sweep.base.population.agents`; a sweep's grid keys hold dots, so its grid is out of reach), VALUE a YAML
    number, boolean, null, list or mapping, else the text (a file path in it is read from the working directory,
    not the file's folder).

    Raises:
        UsageError: an item that is not FIELD=VALUE.
        ScenarioError: naming `source` and the field: one the scenario does not have, or a value it refuses.
    """
    from sandbox.core.steps import parse_changes

    return with_changes(scenario, parse_changes(sets), source)


def with_changes(scenario: Any, changes: Mapping[str, Any], source: str) -> Any:
    """`scenario` with {dotted field path: value} set (`sandbox.core.steps.set_path`: no field is added) and
    validated again as its model; `ScenarioError` naming `source` and the field."""
    from sandbox.core.steps import set_path

    data = scenario.model_dump(mode="json")
    for name, value in changes.items():
        try:
            data = set_path(data, name, value)
        except ValueError as error:
            reason = str(error).removeprefix(f"{name}: ")  # set_path's message names the path too
            raise ScenarioError(source, [(name, f"not a field of the scenario ({reason})")]) from None
    return validate_model(type(scenario), data, source)


_OVERRIDE = re.compile(r"^(?P<role>[a-z]+)=(?P<spec>.+)$")


def model_overrides(
    data: dict[str, Any],
    models: list[str] | None,
    roles: tuple[str, ...],
    source: str,
    *,
    nested: bool = True,
    allow_all: bool = True,
) -> None:
    """Write `--model ROLE=SPEC` strings (ROLE one of `roles`, or `all`) into `data["models"]`: into each role's
    `spec` (`nested`), or as the role's value."""
    allowed = [*roles, "all"] if allow_all else list(roles)
    for item in models or []:
        match = _OVERRIDE.match(item)
        if not match or match["role"] not in allowed:
            names = f"{', '.join(allowed[:-1])} or {allowed[-1]}" if len(allowed) > 1 else allowed[0]
            raise ScenarioError(source, [("--model", f"{item!r} is not ROLE=SPEC with ROLE {names}")])
        for role in roles if match["role"] == "all" else (match["role"],):
            if nested:
                data["models"][role]["spec"] = match["spec"]
            else:
                data["models"][role] = match["spec"]


def scenario_json_schema(kind: str | None = None) -> str:
    """The JSON Schema of scenario files, for editor completion: of the kind `kind`, or of every registered kind
    (one of them, each with its own block)."""
    if kind is not None:
        return json.dumps(kinds.get(kind).scenario_model().model_json_schema(), indent=2)
    models: list[tuple[type[BaseModel], Literal["validation"]]] = [
        (k.scenario_model(), "validation") for k in kinds.kinds().values()
    ]
    refs, defs = models_json_schema(models, ref_template="#/$defs/{model}")
    schema = {
        "title": "Scenario",
        "description": "A scenario file of any kind of run: "
        + ", ".join(f"{k.name} ({k.block + ': block' if k.block else 'the default'})" for k in kinds.kinds().values()),
        "anyOf": [refs[m] for m in models],
        **defs,
    }
    return json.dumps(schema, indent=2)


def load_run_scenario(path: str | Path) -> Any:
    """The scenario of the run directory `path` (its `scenario.yaml`, overrides applied), as its kind's model."""
    return load_scenario(Path(path) / SCENARIO)


def with_tracking(scenario: Any, uri: str, source: str = "--track") -> Any:
    """`scenario` logged to MLflow at `uri` (`sandbox run --track URI`): its `tracking:` block set, the experiment
    kept when the file named one. `ScenarioError` naming `source` when MLflow is not installed."""
    from sandbox.base.scenario_model import Tracking

    if "tracking" not in type(scenario).model_fields:  # a kind whose scenario model is not a `ScenarioModel`
        raise ScenarioError(source, [(source, f"{type(scenario).__name__} takes no tracking: block")])
    given = getattr(scenario, "tracking", None)
    try:
        tracking = Tracking(uri=uri, experiment=given.experiment if given is not None else None)
    except ValidationError as error:
        raise ScenarioError(source, [(source, message) for _, message in scenario_problems(error)]) from None
    return scenario.model_copy(update={"tracking": tracking})
