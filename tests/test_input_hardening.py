"""Every unreadable input is exit 2 naming the file, with nothing written: a scenario that is not UTF-8 text, one
nested too deeply for the YAML parser, and a run directory whose files are unreadable."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from sandbox.cli.runs import app

runner = CliRunner()
FILE_COMMANDS = [["run"], ["validate"], ["train"], ["label"], ["distill"], ["solve"], ["reward-model"], ["agreement"]]
DIR_COMMANDS = [["resume"], ["evaluate"], ["compare"], ["evaluate-moral"], ["play"]]


def bad_files(root: Path) -> dict[str, Path]:
    files = {"not UTF-8": root / "latin1.yaml", "nested": root / "deep.yaml", "nested map": root / "deep_map.yaml"}
    files["not UTF-8"].write_bytes("name: caf\xe9\nruns: 1\n".encode("latin-1"))
    files["nested"].write_text("society: " + "[" * 50_000 + "]" * 50_000 + "\n")
    files["nested map"].write_text("".join("  " * i + f"k{i}:\n" for i in range(3000)))
    return files


def unchanged(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"dir" for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("command", FILE_COMMANDS, ids=lambda c: c[0])
def test_an_unreadable_scenario_file_is_exit_2_naming_it(tmp_path: Path, command: list[str]) -> None:
    for why, path in bad_files(tmp_path).items():
        before = unchanged(tmp_path)
        result = runner.invoke(
            app, [*command, str(path), *(["--out", str(tmp_path / "out")] if command != ["validate"] else [])]
        )
        assert result.exit_code == 2, (why, result.output, result.exception)
        text = " ".join(result.output.split())
        assert path.name in text and ("not UTF-8" in text or "nested too deeply" in text), (why, text)
        assert unchanged(tmp_path) == before, why


@pytest.mark.parametrize("command", DIR_COMMANDS, ids=lambda c: c[0])
def test_an_unreadable_run_directory_is_exit_2_naming_the_file(tmp_path: Path, command: list[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "scenario.yaml").write_bytes(b"name: x\n\xff\xfe\n")
    before = unchanged(tmp_path)
    result = runner.invoke(app, [*command, str(run)])
    assert result.exit_code == 2, (result.output, result.exception)
    text = " ".join(result.output.split())
    if command == ["play"]:  # play asks first for the solve's policy.csv
        assert "is not a finished solve" in text
    else:
        assert "scenario.yaml" in text and "not UTF-8" in text, text
    assert unchanged(tmp_path) == before


def test_an_unreadable_summary_is_exit_2_naming_it(tmp_path: Path) -> None:
    from sandbox.base.files import UnreadableFileError, read_csv, read_json

    (tmp_path / "summary.json").write_text('{"evaluation": ')
    with pytest.raises(UnreadableFileError, match="summary.json: not valid JSON: line 1"):
        read_json(tmp_path / "summary.json")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(UnreadableFileError, match="nested too deeply"):
        read_json(tmp_path / "deep.json")
    (tmp_path / "m.csv").write_bytes(b"a,b\n\xff,1\n")
    with pytest.raises(UnreadableFileError, match="m.csv: not UTF-8"):
        read_csv(tmp_path / "m.csv")
    with pytest.raises(UnreadableFileError, match="none.csv: no such file"):
        read_csv(tmp_path / "none.csv")
