"""Every shipped population scenario, and a small SCAI society, write the same tables as the recorded ones
(`tests/golden/`, recorded before the population loops moved onto the one engine) for the same seed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden_populations import GOLDEN, differences, run_small, shipped, society_tables


def _recorded(label: str) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((GOLDEN / label).glob("*.csv"))}


def test_every_shipped_population_scenario_has_recorded_tables() -> None:
    assert sorted(p.name for p in (GOLDEN / "population").iterdir()) == shipped()


@pytest.mark.parametrize("name", shipped())
def test_a_shipped_population_writes_its_recorded_tables(name: str, tmp_path: Path) -> None:
    assert differences(_recorded(f"population/{name}"), run_small(name, tmp_path / "run")) == []


def test_a_society_writes_its_recorded_tables(tmp_path: Path) -> None:
    assert differences(_recorded("society/scai_small"), society_tables(tmp_path / "run")) == []
