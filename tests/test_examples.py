"""The shipped examples: listed by name, copied out with what their relative paths name, run by name."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from sandbox.base.errors import UsageError
from sandbox.cli.runs import app
from sandbox.core.scenario_files import load_scenario
from sandbox.examples import NOTEBOOKS, SCENARIOS, copy_examples, examples, find, runs_folder, scenario_path

ROOT = Path(__file__).resolve().parent.parent


def test_the_repository_folders_are_the_package_s() -> None:
    assert (ROOT / "scenarios").resolve() == SCENARIOS and (ROOT / "notebooks").resolve() == NOTEBOOKS


def test_every_example_has_a_unique_name_and_a_line() -> None:
    found = examples()
    names = [example.name for example in found]
    assert len(names) == len(set(names))
    assert len([e for e in found if e.kind == "scenario"]) == len(list(SCENARIOS.rglob("*.yaml")))
    assert {e.name for e in found if e.kind == "notebook"} == {f"notebooks/{p.stem}" for p in NOTEBOOKS.glob("*.ipynb")}
    assert all(example.description for example in found), [e.name for e in found if not e.description]
    default = find("default")
    assert default is not None and default.description.startswith("Twelve users, a third each selfish")
    assert find("default.yaml") == default and find("notebooks/chain.ipynb") == find("notebooks/chain")


@pytest.mark.parametrize("name", ["../pyproject", "/etc/passwd", "nonesuch", "notebooks/../scenarios/default", ""])
def test_a_name_outside_the_examples_is_none(name: str) -> None:
    assert find(name) is None


def test_a_path_wins_over_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert scenario_path("default") == SCENARIOS / "default.yaml"
    Path("default").mkdir()  # a folder of that name does not hide the shipped scenario
    assert scenario_path("default") == SCENARIOS / "default.yaml"
    Path("default").rmdir()
    Path("default").write_text("name: mine\n")
    assert scenario_path("default") == Path("default")
    with pytest.raises(UsageError, match="no shipped scenario of that name"):
        scenario_path("nonesuch")


def test_copy_writes_a_scenario_with_what_it_names_and_it_still_validates(tmp_path: Path) -> None:
    written = copy_examples(
        ["sweeps/scai_norms", "chain/selfish_tiny", "population/pd_karate_club", "scai/small_model/mixed_guided"],
        tmp_path,
    )
    relative = {p.relative_to(tmp_path).as_posix() for p in written}
    assert {
        "scenarios/scai/one_group_selfish.yaml",
        "scenarios/chain/society_selfish.yaml",
        "scenarios/population/karate_club.edgelist",
        "scenarios/dialogue/ultimatum_small.yaml",
    } <= relative
    for name in (
        "sweeps/scai_norms",
        "chain/selfish_tiny",
        "population/pd_karate_club",
        "scai/small_model/mixed_guided",
    ):
        load_scenario(tmp_path / "scenarios" / f"{name}.yaml")  # the relative paths resolve in the copy


def test_copy_writes_nothing_for_an_unknown_name_or_over_a_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="nonesuch"):
        copy_examples(["default", "nonesuch"], tmp_path)
    assert list(tmp_path.iterdir()) == []
    copy_examples(["default"], tmp_path)
    (tmp_path / "scenarios/default.yaml").write_text("edited\n")
    with pytest.raises(UsageError, match="exist already"):
        copy_examples(["default", "notebooks/chain"], tmp_path)
    assert not (tmp_path / "notebooks").exists() and (tmp_path / "scenarios/default.yaml").read_text() == "edited\n"
    copy_examples(["default"], tmp_path, force=True)
    assert (tmp_path / "scenarios/default.yaml").read_bytes() == (SCENARIOS / "default.yaml").read_bytes()


def test_copy_all_writes_every_file(tmp_path: Path) -> None:
    copy_examples(["all"], tmp_path)
    shipped = {
        p.relative_to(SCENARIOS.parent).as_posix()
        for p in [*SCENARIOS.rglob("*"), *NOTEBOOKS.glob("*.ipynb")]
        if p.is_file()
    }
    assert {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()} == shipped


def test_the_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    listed = runner.invoke(app, ["examples", "list", "--match", "moral/tiny/utilitarian"])
    assert listed.exit_code == 0 and "utilitarian_vs_tft" in listed.output and "default" not in listed.output
    copied = runner.invoke(app, ["examples", "copy", "default", "notebooks/explore_run", "out"])
    assert copied.exit_code == 0, copied.output
    assert (tmp_path / "out/scenarios/default.yaml").is_file() and (
        tmp_path / "out/notebooks/explore_run.ipynb"
    ).is_file()
    assert runner.invoke(app, ["examples", "copy", "default", "out"]).exit_code == 2  # exists already
    dry = runner.invoke(app, ["run", "default", "--dry-run"])
    assert dry.exit_code == 0 and "default: a dry run" in dry.output
    missing = runner.invoke(app, ["run", "nonesuch"])
    assert missing.exit_code == 2 and "nonesuch: no such scenario file" in missing.output
    assert not (tmp_path / "runs").exists()


def test_runs_folder_is_the_nearest(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "a/b").mkdir(parents=True)
    assert runs_folder(tmp_path / "a/b") == tmp_path / "runs"
    assert runs_folder(tmp_path / "a/b") == runs_folder(tmp_path)
