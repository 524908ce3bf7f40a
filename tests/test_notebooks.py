"""Every notebook executes top to bottom against a run directory."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from sandbox import run
from sandbox.evaluate import aevaluate
from tests.conftest import scai_models, scai_scenario, small_scenario, ultimatum_model

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The run the notebook reads is made with the scripted model: this checks the notebook, not a result.
    if path.name.startswith("scai"):
        result = run(scai_scenario(), out=tmp_path / "run", models=scai_models())
        asyncio.run(aevaluate(result.path, trials=2, models=scai_models()))
    else:
        result = run(small_scenario(), out=tmp_path / "run", models={"user": ultimatum_model()})
    monkeypatch.setenv("RUN_DIR", str(result.path))
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)
