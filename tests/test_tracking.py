"""Runs logged to MLflow (a `tracking:` block, `sandbox run --track`, `sandbox track`): the resolved scenario as
parameters, each epoch's figures as metric steps, the tables, plots and policies as artifacts; a resumed run logs
once, to one MLflow run; a sweep's cells are child runs; TRL's own logs join a training run's MLflow run."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

import sandbox
from sandbox.base.errors import RunFailedError
from sandbox.base.scenario_model import Tracking
from sandbox.cli.runs import app
from sandbox.core import kinds
from sandbox.society.runner import ProgressHooks
from tests.conftest import scai_models, scai_scenario

mlflow = pytest.importorskip("mlflow", reason="the tracking extra (make install installs it)")
runner = CliRunner()


def _client(store: Path) -> Any:
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=f"file:{store}")


def _runs(store: Path) -> list[Any]:
    client = _client(store)
    return [run for experiment in client.search_experiments() for run in client.search_runs([experiment.experiment_id])]


def _artifacts(client: Any, run_id: str, folder: str | None = None) -> set[str]:
    found: set[str] = set()
    for item in client.list_artifacts(run_id, folder):
        found |= _artifacts(client, run_id, item.path) if item.is_dir else {item.path}
    return found


def test_a_tracked_society_logs_its_scenario_epochs_tables_plots_and_policies(tmp_path: Path) -> None:
    store = tmp_path / "mlruns"
    scenario = scai_scenario(runs=2, epochs=2).model_copy(update={"tracking": Tracking(uri=f"file:{store}")})
    result = sandbox.run(scenario, out=tmp_path / "runs" / "scai", models=scai_models())
    (run,) = _runs(store)
    client = _client(store)
    assert run.info.status == "FINISHED" and run.data.tags["sandbox.kind"] == "society"
    assert run.data.params["scenario.seed"] == str(scenario.seed)
    assert run.data.params["scenario.tracking.uri"] == f"file:{store}"
    assert json.loads(run.data.params["scenario.society.norms"])[0]["norm"] == scenario.society.norms[0].norm
    by_epoch = result.table("epoch_summary")
    wanted = by_epoch[(by_epoch["metric"] == "offered_share") & (by_epoch["group"] == "assistant")]
    history = client.get_metric_history(run.info.run_id, "epoch_summary.offered_share.mean/assistant")
    assert [(m.step, round(m.value, 9)) for m in history] == [
        (int(e), round(v, 9)) for e, v in zip(wanted["epoch"], wanted["mean"], strict=True)
    ]
    assert run.data.metrics["summary.acceptance_rate"] == pytest.approx(result.summary["acceptance_rate"])
    files = _artifacts(client, run.info.run_id)
    assert {"scenario.yaml", "summary.json", "tables/policies.jsonl", "tables/epochs.csv"} <= files
    assert any(f.startswith("plots/") and f.endswith(".png") for f in files)
    assert "tables/transcripts.jsonl" not in files
    assert yaml.safe_load((result.path / "scenario.yaml").read_text())["tracking"]["uri"] == f"file:{store}"


class Stop(BaseException):
    pass


def test_a_killed_tracked_run_resumed_logs_once_what_an_uninterrupted_one_logs(tmp_path: Path) -> None:
    store = tmp_path / "mlruns"
    tracking = Tracking(uri=f"file:{store}", experiment="resume")
    scenario = scai_scenario(runs=1, epochs=2).model_copy(update={"tracking": tracking})
    sandbox.run(scenario, out=tmp_path / "whole", models=scai_models())
    episodes = 0

    def stop(_: Any) -> None:
        nonlocal episodes
        episodes += 1
        if episodes == 15:
            raise Stop

    with pytest.raises(RunFailedError, match="Stop"):
        sandbox.run(scenario, out=tmp_path / "cut", models=scai_models(), hooks=ProgressHooks(on_episode=stop))
    assert not (tmp_path / "cut" / "tracking.json").exists()
    sandbox.resume(tmp_path / "cut", models=scai_models())
    runs = {Path(r.data.tags["sandbox.path"]).name: r for r in _runs(store)}
    assert set(runs) == {"whole", "cut"}
    client = _client(store)
    for key in runs["whole"].data.metrics:
        if key.startswith("summary.seconds"):
            continue
        whole = [(m.step, m.value) for m in client.get_metric_history(runs["whole"].info.run_id, key)]
        cut = [(m.step, m.value) for m in client.get_metric_history(runs["cut"].info.run_id, key)]
        assert whole == cut, key  # the same points, each once


def test_a_sweeps_cells_are_child_runs_of_the_sweeps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.toy_kind import TOY

    kinds.register(TOY)
    monkeypatch.setenv(kinds.ENVIRONMENT, "tests.toy_kind:TOY")  # the sweep's workers register the toy kind too
    store = tmp_path / "mlruns"
    file = tmp_path / "sweep.yaml"
    file.write_text(
        yaml.safe_dump(
            {
                "name": "toy-sweep",
                "tracking": {"uri": f"file:{store}"},
                "sweep": {
                    "base": {"name": "t", "seed": 1, "toy": {"steps": 3}},
                    "grid": {"toy.steps": [2, 3]},
                    "seeds": 2,
                    "workers": 2,
                },
            }
        )
    )
    try:
        result = runner.invoke(app, ["run", str(file), "--out", str(tmp_path / "sweep")])
    finally:
        kinds.unregister(TOY.name)
    assert result.exit_code == 0, result.output
    runs = _runs(store)
    (parent,) = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(runs) == 5 and len(children) == 4
    assert {r.data.tags["sandbox.kind"] for r in children} == {"toy"} and parent.data.tags["sandbox.kind"] == "sweep"
    assert "tables/sweep.csv" in _artifacts(_client(store), parent.info.run_id)


def test_run_track_and_the_track_command_log_where_they_are_told(tmp_path: Path) -> None:
    scenario_file = Path(__file__).parent / "toy.yaml"
    from tests.toy_kind import TOY

    kinds.register(TOY)
    try:
        store = tmp_path / "a"
        result = runner.invoke(
            app, ["run", str(scenario_file), "--out", str(tmp_path / "one"), "--track", f"file:{store}"]
        )
        assert result.exit_code == 0, result.output
        assert len(_runs(store)) == 1
        untracked = tmp_path / "two"
        assert runner.invoke(app, ["run", str(scenario_file), "--out", str(untracked)]).exit_code == 0
        assert not (untracked / "tracking.json").exists()
        later = tmp_path / "b"
        result = runner.invoke(app, ["track", str(untracked), "--uri", f"file:{later}", "--experiment", "later"])
        assert result.exit_code == 0, result.output
        (run,) = _runs(later)
        assert run.data.tags["sandbox.kind"] == "toy" and run.data.metrics["summary.steps"] == 5
        result = runner.invoke(app, ["track", str(tmp_path / "nothing")])
        assert result.exit_code == 2 and "not a finished run directory" in result.output
    finally:
        kinds.unregister(TOY.name)


def test_a_store_that_cannot_be_reached_is_a_warning_and_the_run_is_whole(tmp_path: Path) -> None:
    scenario = scai_scenario(runs=1, epochs=1).model_copy(update={"tracking": Tracking(uri="nosuchscheme://nowhere")})
    with pytest.warns(UserWarning, match="not logged to MLflow"):
        result = sandbox.run(scenario, out=tmp_path / "run", models=scai_models())
    assert result.summary["episodes"] > 0 and (result.path / "summary.json").is_file()


@pytest.fixture
def no_mlflow(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mlflow" else real(name, *a))
    yield


def test_tracking_without_the_extra_exits_2_naming_the_field_and_the_install_line(
    no_mlflow: None, tmp_path: Path
) -> None:
    file = tmp_path / "tracked.yaml"
    data = yaml.safe_load((Path(__file__).parents[1] / "scenarios" / "default.yaml").read_text())
    file.write_text(yaml.safe_dump({**data, "tracking": {"uri": "file:./mlruns"}}))
    result = runner.invoke(app, ["validate", str(file)])
    assert result.exit_code == 2 and "tracking" in result.output and "norm-sandbox[tracking]" in result.output
    result = runner.invoke(
        app,
        [
            "run",
            str(Path(__file__).parents[1] / "scenarios" / "default.yaml"),
            "--track",
            "file:./mlruns",
            "--out",
            str(tmp_path / "never"),
        ],
    )
    assert result.exit_code == 2 and "norm-sandbox[tracking]" in result.output and not (tmp_path / "never").exists()
    result = runner.invoke(app, ["track", str(tmp_path)])
    assert result.exit_code == 2 and "norm-sandbox[tracking]" in result.output


def test_a_trl_training_run_logs_trls_steps_to_the_same_mlflow_run(tmp_path: Path) -> None:
    from sandbox.moral.run import train_scenario
    from tests.test_moral_trl import scenario

    store = tmp_path / "mlruns"
    tiny = scenario("grpo").model_copy(update={"tracking": Tracking(uri=f"file:{store}")})
    path = train_scenario(tiny, tmp_path / "run")
    (run,) = _runs(store)
    ours = {k for k in run.data.metrics if k.startswith(("metrics.reward", "summary."))}
    trl = {k for k in run.data.metrics if k.startswith(("train_", "loss", "learning_rate", "grad_norm"))}
    assert ours and trl, sorted(run.data.metrics)
    steps = [m.step for m in _client(store).get_metric_history(run.info.run_id, "metrics.reward")]
    assert steps == list(pd.read_csv(path / "metrics.csv")["episode"])


def test_a_relative_store_is_kept_absolute_and_a_tracked_sweep_base_still_nests_its_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.toy_kind import TOY

    monkeypatch.chdir(tmp_path)
    kinds.register(TOY)
    monkeypatch.setenv(kinds.ENVIRONMENT, "tests.toy_kind:TOY")
    file = tmp_path / "sweep.yaml"
    file.write_text(
        yaml.safe_dump(
            {
                "name": "nest",
                "tracking": {"uri": "file:./store"},
                "sweep": {
                    "base": {"name": "t", "seed": 1, "toy": {"steps": 2}, "tracking": {"uri": "file:./store"}},
                    "grid": {"toy.steps": [2, 3]},
                    "seeds": 1,
                    "workers": 1,
                },
            }
        )
    )
    try:
        result = runner.invoke(app, ["run", str(file), "--out", str(tmp_path / "sweep")])
    finally:
        kinds.unregister(TOY.name)
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "sweep" / "tracking.json").read_text())
    assert record["uri"] == f"file:{tmp_path / 'store'}"  # absolute: a resume from elsewhere logs to the same store
    runs = _runs(tmp_path / "store")
    (parent,) = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert len(runs) == 3 and all(
        r.data.tags.get("mlflow.parentRunId") == parent.info.run_id for r in runs if r is not parent
    )
    result = runner.invoke(app, ["track", str(tmp_path / "sweep"), "--uri", "file:./elsewhere"])
    assert result.exit_code == 2 and "logged to MLflow already" in result.output
