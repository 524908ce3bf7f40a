"""A run's branches read back and compared: `RunResult.parent`, `.fork` and `.forks`; `sandbox.compare` and
`sandbox compare` (the branches' headline figures from the fork step on, with CIs across runs; the divergence
figure), beside the SCAI paper's layout the command keeps for SCAI runs of no common lineage. Scripted models and
small populations: these check the reading, not a result."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

import sandbox
from sandbox.base.errors import UsageError
from sandbox.base.stats import mean_ci
from sandbox.cli.runs import app
from sandbox.core.result import RunResult
from sandbox.core.scenario_files import parse_kind
from sandbox.engine.branches import compare_branches, divergence_figure, fork_step, parting_step
from sandbox.engine.fork import make_fork
from sandbox.population.conformance import BLOCK
from sandbox.scai.conformance import CASE as SOCIETY

runner = CliRunner()
POLICY = {"state.policy": "Share everything equally with everyone."}


def population(name: str = "branches") -> Any:
    block = {**BLOCK, "agents": 16, "generations": 4, "network": {"kind": "ring"}}
    return parse_kind("population", {"name": name, "seed": 0, "population": block})


@pytest.fixture(scope="module")
def family(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A population run, its forks at generations 1 and 2, a fork at 3 of the fork at 2; a society and its fork."""
    root = tmp_path_factory.mktemp("branches")
    parent = sandbox.run(population(), out=root / "parent").path
    beta = {"population.revision.beta": 5.0}
    one = sandbox.fork(parent, at=1, changes=beta, out=root / "one").path
    two = sandbox.fork(parent, at=2, changes={"population.revision.mutation": 0.5}, out=root / "two").path
    deeper = sandbox.fork(two, at=3, changes=beta, out=root / "deeper").path
    other = sandbox.run(population("other"), out=root / "other").path
    society = sandbox.run(SOCIETY.scenario(root), out=root / "society", models=SOCIETY.models()).path
    policy = sandbox.fork(society, at=1, changes=POLICY, out=root / "policy", models=SOCIETY.models()).path
    return {"root": root, "parent": parent, "one": one, "two": two, "deeper": deeper, "other": other} | {
        "society": society,
        "policy": policy,
    }


def test_a_fork_names_its_parent_and_a_run_its_finished_forks(family: dict[str, Path], tmp_path: Path) -> None:
    parent, one, two = (RunResult.load(family[k]) for k in ("parent", "one", "two"))
    assert parent.parent is None and parent.fork is None
    assert one.parent is not None and one.parent.path == parent.path and one.fork["at"] == 1
    assert [f.path for f in parent.forks] == [one.path, two.path]
    assert [f.path for f in two.forks] == [family["deeper"]] and RunResult.load(
        family["deeper"]
    ).parent.path == two.path
    # a fork made but not run on (no summary) is left out of the finished forks
    copy = tmp_path / "copy"
    shutil.copytree(parent.path, copy)
    (copy / "forks.jsonl").unlink()
    unfinished = make_fork(copy, 1, {"population.revision.beta": 2.0}, out=tmp_path / "unfinished")
    assert RunResult.load(copy).forks == [] and unfinished.is_dir()
    # the parent gone: no parent, its path still read from the fork's record
    fork = sandbox.fork(copy, at=2, out=tmp_path / "orphan")
    assert [f.path for f in RunResult.load(copy).forks] == [fork.path]
    shutil.rmtree(copy)
    assert fork.parent is None and fork.fork["parent"] == str(copy.resolve()) and fork.fork["parent_name"] == "copy"


def test_branches_part_at_the_earliest_fork_between_them_and_their_common_ancestor(family: dict[str, Path]) -> None:
    p, one, two, deeper = (family[k] for k in ("parent", "one", "two", "deeper"))
    assert parting_step(p, one) == 1 and parting_step(one, p) == 1 and parting_step(one, two) == 1
    assert parting_step(p, deeper) == 2 and parting_step(two, deeper) == 3 and parting_step(one, deeper) == 1
    assert parting_step(p, p) is None and parting_step(p, family["other"]) is None
    assert parting_step(family["society"], family["policy"]) == 1
    assert (
        fork_step([two, deeper]) == 3 and fork_step([p, two, deeper]) == 2 and fork_step([p, family["other"]]) is None
    )


def test_compare_puts_the_branches_side_by_side_from_the_fork_step(family: dict[str, Path], tmp_path: Path) -> None:
    p, two, deeper = family["parent"], family["two"], family["deeper"]
    table = sandbox.compare([RunResult.load(p), two, deeper])
    assert table.attrs["fork_step"] == 2 and set(table["step"]) == {2, 3}
    assert set(table["figure"]) == {"cooperation"} and set(table["unit"]) == {"generation"}
    assert table.groupby("branch").size().to_dict() == {str(p): 2, str(two): 2, str(deeper): 2}
    rows = table.set_index(["branch", "step"])
    cooperation = pd.read_csv(p / "generations.csv").set_index("generation")["cooperation"]
    assert rows.loc[(str(p), 3), "mean"] == pytest.approx(cooperation[3]) and rows.loc[(str(p), 3), "n"] == 1
    assert math.isnan(rows.loc[(str(p), 3), "ci_low"])  # one run: no interval
    assert rows.loc[(str(deeper), 3), "label"] == "deeper (generation 3: population.revision.beta=5.0)"
    # unrelated runs still compare, every step, no fork step; a branch of several runs (seeds) pools them
    apart = sandbox.compare([p, [family["one"], family["other"]]])
    assert apart.attrs["fork_step"] == 1 and set(apart["step"]) == {1, 2, 3}
    unrelated = compare_branches([p, family["other"]])
    assert unrelated.attrs["fork_step"] is None and set(unrelated["step"]) == {0, 1, 2, 3}
    twin = tmp_path / "elsewhere" / "parent"
    shutil.copytree(p, twin)
    assert list(dict.fromkeys(compare_branches([p, twin])["label"])) == ["parent", "parent [2]"]
    pooled = compare_branches([[p, family["other"]]]).set_index("step")
    both = [pd.read_csv(d / "generations.csv").set_index("generation")["cooperation"][3] for d in (p, family["other"])]
    assert tuple(pooled.loc[3, ["mean", "ci_low", "ci_high", "n"]]) == pytest.approx(
        mean_ci(both, bounds=(0.0, 1.0)), nan_ok=True
    )


def test_a_society_s_branches_have_cis_across_its_runs(family: dict[str, Path]) -> None:
    society, policy = family["society"], family["policy"]
    table = sandbox.compare([society, policy])
    assert table.attrs["fork_step"] == 1 and set(table["step"]) == {1} and set(table["n"]) == {2}
    series = pd.read_csv(policy / "episodes.csv")
    shares = series[(series["interaction"] == "assistant-proposer") & series["proposal_legal"] & (series["epoch"] == 1)]
    per_run = shares.groupby("run")["offered_share"].mean()
    row = table[table["branch"] == str(policy)].iloc[0]
    assert (row["mean"], row["ci_low"], row["ci_high"]) == pytest.approx(mean_ci(per_run, bounds=(0.0, 1.0))[:3])
    assert row["figure"] == "assistant offered share" and row["ci_low"] < row["mean"] < row["ci_high"]
    # every step drawn, the fork marked; a kind of its own axis
    figure = divergence_figure([society, policy, family["parent"]])
    axes = figure.get_axes()
    assert [ax.get_ylabel() for ax in axes] == ["assistant offered share", "cooperation"]
    assert [len(line.get_xdata()) for line in axes[0].get_lines()][:2] == [2, 2]
    assert axes[0].get_lines()[-1].get_label() == "fork (epoch 1)"


def test_compare_names_a_run_it_cannot_read(family: dict[str, Path], tmp_path: Path) -> None:
    unfinished = make_fork(family["parent"], 2, out=tmp_path / "unfinished")
    with pytest.raises(UsageError, match="unfinished is not finished"):
        compare_branches([family["parent"], unfinished])
    with pytest.raises(UsageError, match="no such run directory"):
        compare_branches([tmp_path / "nothing"])
    with pytest.raises(UsageError, match="at least one"):
        compare_branches([])


def test_sandbox_compare_prints_the_branches_and_writes_the_figure(family: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "branches.png"
    result = runner.invoke(app, ["compare", str(family["society"]), str(family["policy"]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "assistant offered share per epoch" in text and "from the fork at epoch 1" in text
    assert "state.policy=Share" in text and "(" in text and "%" in text
    written = pd.read_csv(out.with_suffix(".csv"))
    assert out.is_file() and list(written["step"]) == [1, 1] and "ci_low" in written.columns
    # a population parent with a fork
    out = tmp_path / "population.png"
    result = runner.invoke(app, ["compare", str(family["parent"]), str(family["one"]), "--out", str(out)])
    assert result.exit_code == 0 and "cooperation per generation" in " ".join(result.output.split())
    assert out.is_file()
    # SCAI runs of no common lineage keep the paper's layout; --branches compares them as branches
    paper = tmp_path / "paper.png"
    result = runner.invoke(app, ["compare", str(family["society"]), "--out", str(paper)])
    assert result.exit_code == 0 and "panel" in pd.read_csv(paper.with_suffix(".csv")).columns
    result = runner.invoke(app, ["compare", str(family["society"]), "--branches", "--out", str(paper)])
    assert result.exit_code == 0 and "figure" in pd.read_csv(paper.with_suffix(".csv")).columns
    # different kinds compare; DIR,DIR is one branch of several runs
    mixed = tmp_path / "mixed.png"
    pooled = f"{family['parent']},{family['other']}"
    result = runner.invoke(app, ["compare", str(family["society"]), pooled, "--out", str(mixed)])
    assert result.exit_code == 0, result.output
    assert set(pd.read_csv(mixed.with_suffix(".csv"))["n"]) == {2}
    # an unfinished run: exit 2 naming it, nothing written
    unfinished = make_fork(family["parent"], 2, out=tmp_path / "unfinished")
    bad = tmp_path / "bad.png"
    result = runner.invoke(app, ["compare", str(family["parent"]), str(unfinished), "--out", str(bad)])
    assert result.exit_code == 2 and "unfinished" in result.output and "resume" in result.output
    assert not bad.exists() and not bad.with_suffix(".csv").exists()
    result = runner.invoke(app, ["compare", str(family["parent"]), "--out", str(tmp_path / "x.svg")])
    assert result.exit_code == 2 and "PNG" in result.output
