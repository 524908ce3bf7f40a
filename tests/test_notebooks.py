"""Every notebook executes top to bottom against a run directory."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbclient import NotebookClient

from sandbox import run
from sandbox.scai.evaluate import aevaluate
from tests.conftest import scai_models, scai_scenario, small_scenario, ultimatum_model

# The proxy-rewards notebook runs against a real labeling run on the embedded model (tests/test_proxy_slow.py), and the
# dialogue-solvers notebook against a real solve on it (tests/test_dialogue.py).
NOTEBOOKS = sorted(
    p
    for p in (Path(__file__).parent.parent / "notebooks").glob("*.ipynb")
    if not p.name.startswith(("proxy", "dialogue"))
)


def execute_notebook(path: Path) -> list:
    """Execute `path` top to bottom; its outputs (errors fail the caller's assertions)."""
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    return [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]


def _moral_run(tmp_path: Path) -> SimpleNamespace:
    """A tiny real training run (3 PPO episodes of the in-process tiny model) with a small evaluation."""
    from sandbox.core.scenario_files import parse_kind
    from sandbox.moral.evaluation import evaluate_run
    from sandbox.moral.run import train_scenario

    scenario = parse_kind(
        "training",
        {
            "name": "nb",
            "models": {"policy": "tiny"},
            "training": {
                "episodes": 3,
                "ppo": {"lora_r": 4, "lora_alpha": 8, "max_new_tokens": 1},
                "evaluation": {"games_per_game": 3, "rounds": 2},
            },
        },
    )
    path = train_scenario(scenario, tmp_path / "run")
    evaluate_run(path)
    return SimpleNamespace(path=path)


def _distill_run(tmp_path: Path) -> SimpleNamespace:
    """A tiny real distillation (4 PPO episodes of the tiny student, a scripted judge) with a small evaluation."""
    from sandbox.core.scenario_files import parse_kind
    from sandbox.distill.run import distill_scenario
    from sandbox.llm.scripted import scripted

    scenario = parse_kind(
        "distill",
        {
            "name": "nb",
            "models": {"student": "tiny"},
            "distill": {
                "source": {"text": "Give everything."},
                "truth": "altruistic",
                "amounts": {"min": 10, "max": 20},
                "trials": 3,
            },
            "training": {
                "episodes": 4,
                "parallel": 2,
                "rounds": 4,
                "ppo": {"lora_r": 4, "lora_alpha": 8, "max_new_tokens": 1},
            },
        },
    )
    models = scai_models()
    path = distill_scenario(
        scenario,
        tmp_path / "run",
        judge=scripted([(r"Answer Yes or No", "Yes")]),
        evaluation_models={"assistant": models["assistant"], "users": models["user"]},
    )
    return SimpleNamespace(path=path)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The society runs the notebooks read are made with the scripted model, and the training run is 3 episodes
    # of the tiny model: this checks the notebooks, not a result.
    if path.name.startswith("moral"):
        result = _moral_run(tmp_path)
    elif path.name.startswith("distill"):
        result = _distill_run(tmp_path)
    elif path.name.startswith("chain"):
        from sandbox.chain.run import run_chain
        from tests.test_chain import chain, models

        result = SimpleNamespace(path=run_chain(chain(), tmp_path / "chain", models=models()))
    elif path.name.startswith("emergent"):
        from sandbox.population.run import run_population
        from tests.test_population import scenario

        for network in ({"kind": "barabasi_albert", "m": 2}, {"kind": "grid"}):
            for seed in range(2):
                run_population(
                    scenario(36, 6, network=network, rule="proportional", seed=seed),
                    tmp_path / "runs" / f"{network['kind']}-{seed}",
                )
        from tests.test_population_donor import Recorder, donor
        from tests.test_population_revision import Reviser, revising

        run_population(donor(4, 2), tmp_path / "runs" / "donor", models={"user": Recorder().model()})
        for seed in range(2):  # two seeds of a reflecting population on a ring, for the CIs, the map and the lineage
            scenario = revising("reflect", agents=6, generations=3, network={"kind": "ring"})
            run_population(
                scenario.model_copy(update={"seed": seed}),
                tmp_path / "runs" / f"reflect-{seed}",
                models={"user": Reviser().model()},
            )
        from tests.test_population_fidelity import Judge, judged
        from tests.test_population_naming import Copier, naming

        run_population(
            judged(4, 2), tmp_path / "runs" / "judged", models={"user": Recorder().model(), "judge": Judge().model()}
        )
        run_population(naming(), tmp_path / "runs" / "naming", models={"user": Copier().model()})
        committed = [{"strategy": "llm", "share": 0.75}, {"strategy": "M", "share": 0.25, "fixed": True}]
        run_population(
            naming(8, 4, members=committed), tmp_path / "runs" / "naming-committed", models={"user": Copier().model()}
        )
        from sandbox.core.scenario_files import parse_kind
        from tests.test_naming_scripted import scenario as scripted_naming

        for agents in (50, 100):  # the phase diagram's scripted side: two sizes, two committed fractions
            for share in (0.05, 0.2):
                members = [{"strategy": "A", "share": share, "fixed": True}, {"strategy": "B", "share": 1 - share}]
                data = scripted_naming(agents, 40).model_dump(mode="json")
                data["population"]["members"] = members
                run_population(parse_kind("population", data), tmp_path / "runs" / "phase" / f"naming-{agents}-{share}")
        from tests.test_population_commons import Fisher, commons

        run_population(
            commons(3), tmp_path / "runs" / "fishery", models={"user": Fisher(lambda stock: stock // 6).model()}
        )
        from tests.test_population_matrix_llm import Members, matrix
        from tests.test_population_ultimatum import Players, ultimatum

        run_population(ultimatum(), tmp_path / "runs" / "ultimatum", models=Players().models())
        run_population(matrix(), tmp_path / "runs" / "pd-llm", models={"user": Members().model()})
        result = SimpleNamespace(path=tmp_path / "runs")
    elif path.name.startswith("counterfactuals"):  # it makes its runs, with scripted models, in a temporary folder
        monkeypatch.setenv("TMPDIR", str(tmp_path))
        result = SimpleNamespace(path=tmp_path)
    elif path.name.startswith("scai"):
        result = run(scai_scenario(), out=tmp_path / "run", models=scai_models())
        asyncio.run(aevaluate(result.path, trials=2, models=scai_models()))
    else:
        result = run(small_scenario(), out=tmp_path / "run", models={"user": ultimatum_model()})
    monkeypatch.setenv("RUN_DIR", str(result.path))
    outputs = execute_notebook(path)
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)
