"""SCAI run directories side by side, in the paper's layout: `sandbox compare RUN_DIR...` and `compare_runs`.

Each run directory is placed in the panel of its design, as the paper's
figures group them: one group of users (Fig. 3a left), mixed societies
(Fig. 3a middle), users with manners (Fig. 3c), and the assistant-assistant
design (Fig. A-1). In a panel each run directory has its colour: the
assistant's offered share per epoch as a solid line with its 95% CI across
runs, the users' as a dashed line. `comparison_table` gives the figures
behind it: per run directory and epoch, users, assistant and the gap with
their CIs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from sandbox.base.errors import UsageError
from sandbox.base.files import read_csv
from sandbox.core import run_dir as layout
from sandbox.core.run_dir import RunDirectory
from sandbox.core.scenario_files import load_run_scenario
from sandbox.scai.metrics import epoch_summary
from sandbox.scai.scenario import Scenario

PANELS = {
    "one group": "One group (Fig. 3a, left)",
    "mixed": "Mixed societies (Fig. 3a, middle)",
    "manners": "Manners (Fig. 3c)",
    "assistant-assistant": "Assistant-assistant (Fig. A-1)",
}
COLUMNS = ["run_dir", "scenario", "panel", "label", "epoch", "group", "mean", "ci_low", "ci_high", "n"]


def panel(scenario: Scenario) -> str:
    """The paper's panel a scenario belongs to."""
    assert scenario.assistant is not None
    if scenario.assistant.interactions.assistant_assistant:
        return "assistant-assistant"
    if len(scenario.society.norms) > 1:
        return "mixed"
    if any(share.manner != "neutral" for share in scenario.society.manners):
        return "manners"
    return "one group"


def label(scenario: Scenario) -> str:
    """What the society is, in a few words: `selfish`, `80% selfish, 20% altruistic`, `altruistic, rude`."""
    norms = scenario.society.norms
    text = norms[0].norm if len(norms) == 1 else ", ".join(f"{round(100 * n.proportion)}% {n.norm}" for n in norms)
    manners = [m.manner for m in scenario.society.manners if m.manner != "neutral"]
    return ", ".join([text, *manners])


def _load(path: Path) -> tuple[Scenario, pd.DataFrame]:
    run_dir = RunDirectory.open(path)
    scenario = load_run_scenario(run_dir.path)
    epochs = run_dir / layout.EPOCHS
    if scenario.assistant is None or not epochs.is_file():
        raise UsageError(
            f"{run_dir.path} is not a finished SCAI run (no {layout.EPOCHS}); compare reads SCAI runs "
            "(sandbox compare --branches puts any runs' headline figures per step side by side)"
        )
    if run_dir.status().get("status") != "complete":
        raise UsageError(f"{run_dir.path} is not finished; resume it first: sandbox resume {run_dir.path}")
    return scenario, epoch_summary(read_csv(epochs))


def comparison_table(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Per run directory, epoch (1-based) and group (users, assistant, gap): the offered share's mean and 95% CI."""
    if not paths:
        raise UsageError("compare needs at least one run directory")
    frames = []
    for path in paths:
        scenario, summary = _load(Path(path))
        shares = summary[summary["metric"] == "offered_share"].copy()
        shares["epoch"] = shares["epoch"] + 1
        shares = shares.assign(run_dir=str(path), scenario=scenario.name, panel=panel(scenario), label=label(scenario))
        frames.append(shares[COLUMNS])
    return pd.concat(frames, ignore_index=True)


def compare_runs(paths: Sequence[str | Path], title: str = "", table: pd.DataFrame | None = None) -> Figure:
    """One axis per panel present, every run directory overlaid in its panel (see the module's docstring).

    `table`: `comparison_table(paths)`, when it is at hand already.
    """
    table = comparison_table(paths) if table is None else table
    present = [p for p in PANELS if (table["panel"] == p).any()]
    fig = Figure(figsize=(5.2 * len(present), 4.2))
    axes = fig.subplots(1, len(present), squeeze=False)[0]
    colours = ["#c44e52", "#4c72b0", "#55a868", "#8172b2", "#dd8452", "#937860", "#da8bc3", "#8c8c8c", "#ccb974"]
    for ax, name in zip(axes, present):
        in_panel = table[table["panel"] == name]
        for i, (_, frame) in enumerate(in_panel.groupby("run_dir", sort=False)):
            colour = colours[i % len(colours)]
            tag = f"{frame['scenario'].iloc[0]} ({frame['label'].iloc[0]})"
            for group, style in (("assistant", "-"), ("users", "--")):
                rows = frame[frame["group"] == group].sort_values("epoch")
                ax.plot(
                    rows["epoch"],
                    rows["mean"],
                    style,
                    marker="o" if group == "assistant" else None,
                    color=colour,
                    label=f"{tag}: {group}",
                    lw=1.8 if group == "assistant" else 1.0,
                )
                if group == "assistant":
                    ax.fill_between(
                        rows["epoch"],
                        rows["ci_low"].astype(float),
                        rows["ci_high"].astype(float),
                        color=colour,
                        alpha=0.15,
                        lw=0,
                    )
        ax.set_ylim(-0.02, 1.05)
        ax.set_xlabel("epoch")
        ax.set_ylabel("offered share")
        ax.set_title(PANELS[name], fontsize=10)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.legend(fontsize=7, loc="best")
    banded = bool(((table["ci_high"].astype(float) - table["ci_low"].astype(float)) > 0).any())
    said = "solid, 95% CI across runs" if banded else "solid; one run each: no interval"
    fig.suptitle(title or f"Offered share: assistant ({said}) and users (dashed)", fontsize=11)
    fig.tight_layout()
    return fig
