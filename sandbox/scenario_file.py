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


def _domain_tags() -> frozenset[str]:
    """The `kind` values of the dialogue domains (`dialogue.domain`)."""
    from sandbox.dialogue.scenario import DomainConfig

    members = get_args(get_args(DomainConfig)[0])
    return frozenset(member.model_fields["kind"].default for member in members)


def _format_loc(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    tags = _game_tags()
    for previous, item in zip((None, *loc), loc):
        if (previous == "game" and item in tags) or (previous == "domain" and item in _domain_tags()):
            continue  # pydantic adds the union tag to the path; a reader never wrote it
        if isinstance(item, str) and (item.startswith("function-") or item == "str") and previous is not None:
            continue  # the same for a validated union member (`game: str | CustomGame`)
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


def _validate(model: Any, data: Any, source: str) -> Any:
    if not isinstance(data, dict):
        raise ScenarioError(source, [("", "a scenario is a mapping of fields")])
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise ScenarioError(source, scenario_problems(error)) from None


def parse_scenario(data: Any, source: str = "<scenario>") -> Scenario:
    """Validate already-parsed data as a scenario; raise `ScenarioError` naming `source`."""
    return _validate(Scenario, data, source)


def parse_training_scenario(data: Any, source: str = "<scenario>") -> Any:
    """Validate already-parsed data as a training scenario (`sandbox.moral.scenario.TrainingScenario`)."""
    from sandbox.moral.scenario import TrainingScenario

    return _validate(TrainingScenario, data, source)


def parse_proxy_scenario(data: Any, source: str = "<scenario>") -> Any:
    """Validate already-parsed data as a labeling scenario (`sandbox.proxy.scenario.ProxyScenario`)."""
    from sandbox.proxy.scenario import ProxyScenario

    return _validate(ProxyScenario, data, source)


def parse_distill_scenario(data: Any, source: str = "<scenario>") -> Any:
    """Validate already-parsed data as a distillation scenario (`sandbox.distill.scenario.DistillScenario`)."""
    from sandbox.distill.scenario import DistillScenario

    return _validate(DistillScenario, data, source)


def parse_dialogue_scenario(data: Any, source: str = "<scenario>") -> Any:
    """Validate already-parsed data as a dialogue-game scenario (`sandbox.dialogue.scenario.DialogueScenario`)."""
    from sandbox.dialogue.scenario import DialogueScenario

    return _validate(DialogueScenario, data, source)


def is_dialogue(data: Any) -> bool:
    """A scenario with a `dialogue:` block is a dialogue game, solved by `sandbox solve`."""
    return isinstance(data, dict) and "dialogue" in data


def load_dialogue_scenario(path: str | Path) -> Any:
    """Load and validate a dialogue-game scenario file (one with a `dialogue:` block)."""
    data = read_yaml(path)
    if not is_dialogue(data):
        raise ScenarioError(str(path), [("dialogue", "missing: `sandbox solve` runs scenarios with a dialogue: block")])
    return parse_dialogue_scenario(data, str(path))


def apply_dialogue_overrides(
    scenario: Any,
    *,
    seed: int | None = None,
    iterations: int | None = None,
    models: list[str] | None = None,
    source: str = "<command line>",
) -> Any:
    """Return a dialogue scenario with `--seed`, `--iterations` and `--model ROLE=SPEC` (players, judge) applied."""
    data = scenario.model_dump(mode="json", exclude_none=True)
    if seed is not None:
        data["seed"] = seed
    if iterations is not None:
        data["solver"]["iterations"] = iterations
    for item in models or []:
        match = _OVERRIDE.match(item)
        if not match or match["role"] not in ("players", "judge", "all"):
            raise ScenarioError(source, [("--model", f"{item!r} is not ROLE=SPEC with ROLE players, judge or all")])
        for role in ("players", "judge") if match["role"] == "all" else (match["role"],):
            data["models"][role]["spec"] = match["spec"]
    return parse_dialogue_scenario(data, source)


def is_distill(data: Any) -> bool:
    """A scenario with a `distill:` block is a norm distillation (its `training:` block says how the student trains)."""
    return isinstance(data, dict) and "distill" in data


def is_training(data: Any) -> bool:
    """A scenario with a `training:` block (and no `distill:`) is a moral fine-tuning experiment."""
    return isinstance(data, dict) and "training" in data and "distill" not in data


def is_proxy(data: Any) -> bool:
    """A scenario with a `proxy:` block is a reward-design (labeling) experiment."""
    return isinstance(data, dict) and "proxy" in data and "training" not in data


def read_yaml(path: str | Path) -> Any:
    """The parsed YAML of a scenario file; `ScenarioError` naming the file when it is unreadable, not UTF-8 text,
    not YAML, or nested too deeply for the parser."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ScenarioError(str(path), [("", f"not UTF-8 text (byte {error.start}: {error.reason})")]) from None
    except OSError as error:
        raise ScenarioError(str(path), [("", f"cannot read the file: {error.strerror or error}")]) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise ScenarioError(str(path), [("", f"not valid YAML: {where}{problem}")]) from None
    except RecursionError:  # the parser recurses once per level of nesting
        raise ScenarioError(str(path), [("", "nested too deeply to read (thousands of levels)")]) from None


def parse_kind(kind: str, data: Any, source: str = "<scenario>") -> Any:
    """Validate `data` as a scenario of `kind` (`sandbox.run_kinds.scenario_kind`: society, training, proxy,
    dialogue, distill)."""
    parse = {"society": parse_scenario, "training": parse_training_scenario, "proxy": parse_proxy_scenario,
             "dialogue": parse_dialogue_scenario, "distill": parse_distill_scenario}[kind]  # fmt: skip
    return parse(data, source)


def load_any_scenario(path: str | Path) -> Any:
    """A society scenario (`Scenario`), a `TrainingScenario` (a `training:` block), a `ProxyScenario` (`proxy:`), a
    `DistillScenario` (`distill:`) or a `DialogueScenario` (`dialogue:`)."""
    data = read_yaml(path)
    if is_dialogue(data):
        return parse_dialogue_scenario(data, str(path))
    if is_distill(data):
        return parse_distill_scenario(data, str(path))
    if is_training(data):
        return parse_training_scenario(data, str(path))
    if is_proxy(data):
        return parse_proxy_scenario(data, str(path))
    return parse_scenario(data, str(path))


def load_proxy_scenario(path: str | Path) -> Any:
    """Load and validate a labeling scenario file (one with a `proxy:` block)."""
    data = read_yaml(path)
    if not is_proxy(data):
        raise ScenarioError(str(path), [("proxy", "missing: `sandbox label` runs scenarios with a proxy: block")])
    return parse_proxy_scenario(data, str(path))


def load_distill_scenario(path: str | Path) -> Any:
    """Load and validate a distillation scenario file (one with a `distill:` block)."""
    data = read_yaml(path)
    if not is_distill(data):
        raise ScenarioError(str(path), [("distill", "missing: `sandbox distill` runs scenarios with a distill: block")])
    return parse_distill_scenario(data, str(path))


def load_training_scenario(path: str | Path) -> Any:
    """Load and validate a training scenario file (one with a `training:` block)."""
    data = read_yaml(path)
    if is_distill(data):
        raise ScenarioError(str(path), [("distill", "a distillation scenario: run it with `sandbox distill`")])
    if not is_training(data):
        raise ScenarioError(str(path), [("training", "missing: `sandbox train` runs scenarios with a training: "
                                                     "block; run a society with `sandbox run`")])  # fmt: skip
    return parse_training_scenario(data, str(path))


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate a scenario file.

    Args:
        path: A YAML scenario file.

    Raises:
        ScenarioError: the file is missing, is not YAML, or does not validate;
            the message names the file and each field path.
    """
    data = read_yaml(path)
    if is_dialogue(data):
        raise ScenarioError(str(path), [("dialogue", "a dialogue game: solve it with `sandbox solve`")])
    if is_distill(data):
        raise ScenarioError(str(path), [("distill", "a distillation scenario: run it with `sandbox distill`")])
    if is_training(data):
        raise ScenarioError(str(path), [("training", "a training scenario: run it with `sandbox train`")])
    if is_proxy(data):
        raise ScenarioError(str(path), [("proxy", "a labeling scenario: run it with `sandbox label`")])
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
    _override_models(data, models, source)
    return parse_scenario(data, source)


def _override_models(data: dict[str, Any], models: list[str] | None, source: str) -> None:
    for item in models or []:
        match = _OVERRIDE.match(item)
        if not match or (match["role"] not in ROLES and match["role"] != "all"):
            raise ScenarioError(source, [("--model", f"{item!r} is not ROLE=SPEC with ROLE in {', '.join(ROLES)}, all")])
        roles = ROLES if match["role"] == "all" else (match["role"],)
        for role in roles:
            data["models"][role]["spec"] = match["spec"]


def apply_proxy_overrides(
    scenario: Any,
    *,
    seed: int | None = None,
    models: list[str] | None = None,
    test_items: int | None = None,
    source: str = "<command line>",
) -> Any:
    """Return a labeling scenario with command-line overrides (`--seed`, `--model ROLE=SPEC`, `--items`) applied."""
    data = scenario.model_dump(mode="json", exclude_none=True)
    if seed is not None:
        data["seed"] = seed
    if test_items is not None:
        data["proxy"]["test_items"] = test_items
    _override_models(data, models, source)
    return parse_proxy_scenario(data, source)


def apply_training_overrides(
    scenario: Any,
    *,
    episodes: int | None = None,
    seed: int | None = None,
    policy: str | None = None,
    ppo: list[str] | None = None,
    models: list[str] | None = None,
    device: str | None = None,
    source: str = "<command line>",
) -> Any:
    """Return a training scenario with command-line overrides applied and validated again.

    `ppo` holds `FIELD=VALUE` strings for `training.ppo` (values read as YAML scalars); `models` holds
    `ROLE=SPEC` strings for `models.policy` and `models.judge` (the judge of proxy rewards).
    """
    data = scenario.model_dump(mode="json", exclude_none=True)
    for item in models or []:
        match = _OVERRIDE.match(item)
        if not match or match["role"] not in ("policy", "judge"):
            raise ScenarioError(source, [("--model", f"{item!r} is not ROLE=SPEC with ROLE policy or judge")])
        data["models"][match["role"]] = match["spec"]
    if episodes is not None:
        data["training"]["episodes"] = episodes
    if seed is not None:
        data["seed"] = seed
    if policy is not None:
        data["models"]["policy"] = policy
    if device is not None:
        data["models"]["device"] = device
    for item in ppo or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ScenarioError(source, [("--ppo", f"{item!r} is not FIELD=VALUE, e.g. learning_rate=1e-4")])
        data["training"].setdefault("ppo", {})[key.strip()] = yaml.safe_load(value)
    return parse_training_scenario(data, source)


def scenario_json_schema() -> str:
    """The JSON Schema of scenario files, for editor completion."""
    return json.dumps(Scenario.model_json_schema(), indent=2)
