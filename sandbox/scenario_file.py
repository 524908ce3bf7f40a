"""Scenario files: reading YAML into a `Scenario`, error messages that name the file and field, overrides.

The models themselves live in `sandbox.scenario`; this module turns text and
command-line options into them, and pydantic's errors into (field path,
message) pairs such as `society.norms[1].proportion`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import yaml
from pydantic import ValidationError

from sandbox.errors import ScenarioError
from sandbox.scenario import ROLES, Game, Scenario


def _game_tags() -> frozenset[str]:
    """The `kind` values of every game in the `Game` union (derived, so a new game needs no edit here)."""
    union = get_args(Game)[0]
    members = get_args(union) or (union,)
    return frozenset(member.model_fields["kind"].default for member in members)


def _format_loc(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    tags = _game_tags()
    for previous, item in zip((None, *loc), loc):
        if previous == "game" and item in tags:
            continue  # pydantic adds the union tag to the path; a reader never wrote it
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def scenario_problems(error: ValidationError) -> list[tuple[str, str]]:
    """Turn a pydantic error into (field path, message) pairs."""
    problems = []
    for item in error.errors():
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown field"
        problems.append((_format_loc(item["loc"]), message))
    return problems


def parse_scenario(data: Any, source: str = "<scenario>") -> Scenario:
    """Validate already-parsed data as a scenario; raise `ScenarioError` naming `source`."""
    if not isinstance(data, dict):
        raise ScenarioError(source, [("", "a scenario is a mapping of fields")])
    try:
        return Scenario.model_validate(data)
    except ValidationError as error:
        raise ScenarioError(source, scenario_problems(error)) from None


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate a scenario file.

    Args:
        path: A YAML scenario file.

    Raises:
        ScenarioError: the file is missing, is not YAML, or does not validate;
            the message names the file and each field path.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ScenarioError(str(path), [("", f"cannot read the file: {error.strerror or error}")]) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise ScenarioError(str(path), [("", f"not valid YAML: {where}{problem}")]) from None
    return parse_scenario(data, str(path))


_OVERRIDE = re.compile(r"^(?P<role>[a-z]+)=(?P<spec>.+)$")


def apply_overrides(
    scenario: Scenario,
    *,
    runs: int | None = None,
    epochs: int | None = None,
    seed: int | None = None,
    models: list[str] | None = None,
    source: str = "<command line>",
) -> Scenario:
    """Return `scenario` with command-line overrides applied and validated again.

    `models` holds `ROLE=SPEC` strings; `ROLE` may be `all`.
    """
    data = scenario.model_dump(mode="json")
    for key, value in (("runs", runs), ("epochs", epochs), ("seed", seed)):
        if value is not None:
            data[key] = value
    for item in models or []:
        match = _OVERRIDE.match(item)
        if not match or (match["role"] not in ROLES and match["role"] != "all"):
            raise ScenarioError(source, [("--model", f"{item!r} is not ROLE=SPEC with ROLE in {', '.join(ROLES)}, all")])
        roles = ROLES if match["role"] == "all" else (match["role"],)
        for role in roles:
            data["models"][role]["spec"] = match["spec"]
    return parse_scenario(data, source)


def scenario_json_schema() -> str:
    """The JSON Schema of scenario files, for editor completion."""
    return json.dumps(Scenario.model_json_schema(), indent=2)
