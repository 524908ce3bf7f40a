"""The documentation site builds strictly (a broken link, anchor or API reference fails), and the README stays a
front page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_docs_build_strictly(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).parent / "mkdocs"
    result = subprocess.run([str(mkdocs), "build", "--strict", "-d", str(tmp_path / "site")], cwd=ROOT,
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "site" / "architecture" / "index.html").is_file()
    assert (tmp_path / "site" / "new-kind" / "index.html").is_file()


def test_the_readme_is_a_front_page() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert "make run" in text and "make test" in text
