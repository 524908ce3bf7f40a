"""Scenario files: strict validation, errors that name the file and the field path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from sandbox.base.errors import ScenarioError
from sandbox.core.scenario_files import (
    load_scenario,
    parse_scenario,
    scenario_json_schema,
)
from sandbox.scai.society_cli import apply_overrides

SCENARIOS = sorted((Path(__file__).parent.parent / "scenarios").glob("*.yaml"))


def base() -> dict[str, Any]:
    return {
        "name": "s",
        "society": {
            "size": 10,
            "norms": [{"norm": "selfish", "proportion": 0.5}, {"norm": "fair", "proportion": 0.5}],
        },
    }


def problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(data, "file.yaml")
    assert str(caught.value).startswith("file.yaml: invalid scenario")
    return caught.value.problems


def paths(data: dict[str, Any]) -> list[str]:
    return [path for path, _ in problems(data)]


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_shipped_scenarios_validate(path: Path) -> None:
    assert load_scenario(path).society.size >= 2


def test_defaults() -> None:
    scenario = parse_scenario(base())
    assert scenario.game.kind == "ultimatum"
    assert scenario.models.user.spec == "embedded"
    assert scenario.society.manners[0].manner == "neutral"


def test_proportion_type_error_names_the_index() -> None:
    data = base()
    data["society"]["norms"][1]["proportion"] = "half"
    assert paths(data) == ["society.norms[1].proportion"]


def test_proportion_out_of_range() -> None:
    data = base()
    data["society"]["norms"][0]["proportion"] = 1.5
    assert "society.norms[0].proportion" in paths(data)


def test_proportions_must_add_up() -> None:
    data = base()
    data["society"]["norms"][1]["proportion"] = 0.6
    [(path, message)] = problems(data)
    assert path == "society.norms" and "add up to 1.1" in message


def test_manner_proportions_must_add_up() -> None:
    data = base()
    data["society"]["manners"] = [{"manner": "rude", "proportion": 0.3}]
    assert paths(data) == ["society.manners"]


def test_duplicate_norms() -> None:
    data = base()
    data["society"]["norms"][1]["norm"] = "selfish"
    [(path, message)] = problems(data)
    assert path == "society.norms" and "named twice" in message


def test_unknown_field_anywhere() -> None:
    data = base()
    data["society"]["norms"][0]["weight"] = 1
    data["colour"] = "red"
    assert sorted(paths(data)) == ["colour", "society.norms[0].weight"]


def test_unknown_norm_needs_text() -> None:
    data = base()
    data["society"]["norms"][0]["norm"] = "kind"
    [(path, message)] = problems(data)
    assert path == "society.norms[0]" and "unknown norm 'kind'" in message and "text:" in message
    data["society"]["norms"][0]["text"] = "Be kind to everyone."
    assert parse_scenario(data).society.norms[0].text == "Be kind to everyone."


def test_unknown_manner() -> None:
    data = base()
    data["society"]["manners"] = [{"manner": "grumpy", "proportion": 1.0}]
    [(path, message)] = problems(data)
    assert path == "society.manners[0]" and "unknown manner" in message


def test_unknown_backend() -> None:
    data = base()
    data["models"] = {"user": "gpt"}
    [(path, message)] = problems(data)
    assert path == "models.user.spec" and "unknown model backend 'gpt'" in message


def test_backend_needs_argument() -> None:
    data = base()
    data["models"] = {"meta": {"spec": "openai:"}}
    [(path, message)] = problems(data)
    assert path == "models.meta.spec" and "openai:MODEL" in message


def test_scripted_is_not_a_scenario_backend() -> None:
    data = base()
    data["models"] = {"user": "scripted"}
    [(path, message)] = problems(data)
    assert path == "models.user.spec" and "tests only" in message


def test_sampling_bounds() -> None:
    data = base()
    data["models"] = {"user": {"spec": "embedded", "sampling": {"temperature": 5}}}
    assert paths(data) == ["models.user.sampling.temperature"]


def test_game_kind_is_a_discriminated_union() -> None:
    data = base()
    data["game"] = {"kind": "chess"}
    [(path, message)] = problems(data)
    assert path == "game" and "'chess'" in message


def test_game_field_paths_skip_the_union_tag() -> None:
    data = base()
    data["game"] = {"kind": "ultimatum", "amount": {"min": 50, "max": 10}, "currencies": []}
    found = dict(problems(data))
    assert "min (50) is larger than max (10)" in found["game.amount"]
    assert "game.currencies" in found


def test_network_edges() -> None:
    data = base()
    data["society"]["network"] = {"kind": "edges"}
    assert paths(data) == ["society.network"]
    data["society"]["network"] = {"kind": "edges", "edges": [[0, 1], [2, 10]]}
    [(path, message)] = problems(data)
    assert path == "society" and "outside 0..9" in message
    data["society"]["network"] = {"kind": "ring", "edges": [[0, 1]]}
    assert paths(data) == ["society.network"]


def test_name_and_sizes() -> None:
    data = base()
    data["name"] = "has spaces"
    data["runs"] = 0
    data["society"]["size"] = 1
    assert sorted(paths(data)) == ["name", "runs", "society.size"]


def test_not_a_mapping() -> None:
    assert problems([1, 2]) == [("", "a scenario is a mapping of fields")]  # type: ignore[arg-type]


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    with pytest.raises(ScenarioError, match="missing.yaml: invalid scenario") as caught:
        load_scenario(missing)
    assert "cannot read the file" in str(caught.value)
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nsociety: [unclosed\n")
    with pytest.raises(ScenarioError, match="broken.yaml") as caught:
        load_scenario(broken)
    assert "not valid YAML: line 3" in str(caught.value)


def test_overrides(tmp_path: Path) -> None:
    scenario = parse_scenario(base())
    changed = apply_overrides(scenario, runs=3, epochs=4, seed=9, models=["user=openai:gpt-4o-mini", "all=embedded"])
    assert (changed.runs, changed.epochs, changed.seed) == (3, 4, 9)
    assert changed.models.user.spec == "embedded"
    with pytest.raises(ScenarioError, match="--model"):
        apply_overrides(scenario, models=["cook=embedded"])
    with pytest.raises(ScenarioError, match="runs"):
        apply_overrides(scenario, runs=0)


def test_json_schema() -> None:
    schema = json.loads(scenario_json_schema("society"))
    assert schema["additionalProperties"] is False
    assert {"name", "society", "game", "models", "assistant"} <= set(schema["properties"])


def test_json_schema_of_every_kind() -> None:
    """`sandbox schema` is one of the registered kinds' schemas, each kind's block among its properties."""
    from sandbox.core.kinds import kinds

    schema = json.loads(scenario_json_schema())
    members = [schema["$defs"][ref["$ref"].rsplit("/", 1)[-1]] for ref in schema["anyOf"]]
    assert len(members) == len(kinds())
    blocks = {kind.block for kind in kinds().values()} - {None}
    assert {"training", "proxy", "distill", "dialogue", "sweep"} <= blocks
    assert all(any(block in m["properties"] for m in members) for block in blocks)


def test_round_trip_through_yaml(tmp_path: Path) -> None:
    scenario = parse_scenario(base())
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario.model_dump(mode="json")))
    assert load_scenario(path) == scenario
