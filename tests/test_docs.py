"""The documentation site builds strictly (a broken link, anchor or API reference fails), and the README stays a
front page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_docs_build_strictly(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).parent / "mkdocs"
    result = subprocess.run(
        [str(mkdocs), "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "site" / "architecture" / "index.html").is_file()
    assert (tmp_path / "site" / "new-kind" / "index.html").is_file()


def test_the_readme_is_a_front_page() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert "make run" in text and "make test" in text


def _shipped_kinds() -> set[str]:
    """The kinds the sandbox's own distribution registers (a test's or another package's aside)."""
    import tomllib

    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["sandbox.kinds"])


def test_the_docs_name_the_registered_kinds_and_count_them_right() -> None:
    import re

    from sandbox.core import kinds

    shipped = _shipped_kinds()
    assert shipped <= set(kinds.kinds())  # every shipped kind is registered
    words = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}
    architecture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = re.search(r"the kinds of run \(([^)]*)\)", architecture).group(1)
    assert {k.strip() for k in listed.split(",")} == shipped
    block = re.search(r'\[project\.entry-points\."sandbox\.kinds"\]\n(.*?)```', architecture, re.S).group(1)
    assert {line.split("=")[0].strip() for line in block.splitlines() if "=" in line} == shipped
    new_kind = (ROOT / "docs" / "new-kind.md").read_text(encoding="utf-8")
    counted = re.search(r"The (\w+) kinds the sandbox ships \(([^)]*)\)", new_kind.replace("\n", " "))
    assert counted.group(1) == words[len(shipped)] and {k.strip() for k in counted.group(2).split(",")} == shipped
    for text in (architecture, new_kind, (ROOT / "README.md").read_text(encoding="utf-8")):
        for word, number in re.findall(r"\b(its|the) (\w+) kinds\b", text):
            if number in words.values():
                assert number == words[len(shipped)], f"{word} {number} kinds, where {len(shipped)} are shipped"


def test_the_population_field_reference_is_what_the_settings_models_say() -> None:
    """docs/reference/population-fields.md is written from the models (`python -m sandbox.population.report.fields`);
    a field added, renamed or described anew, or a game registered, must be written there too."""
    from sandbox.population.registry import games
    from sandbox.population.report.fields import population_fields

    page = Path("docs/reference/population-fields.md").read_text(encoding="utf-8")
    assert page == population_fields(), (
        "run: python -m sandbox.population.report.fields > docs/reference/population-fields.md"
    )
    assert all(f"## `game: {{kind: {kind}}}`" in page for kind in games())
