"""Figures of sweeps over seeds beside a paper's: the shared long table and plot, and the moral sweep's figure."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sandbox.society.plots import plot_beside_paper, sweep_seeds


def _seeds_csv() -> pd.DataFrame:
    """Two settings of a sweep's `seeds.csv`: the grid key varies, the runs key does not."""
    rows = []
    for reward, cc in (("game", 0.01), ("utilitarian", 0.9)):
        row = {"runs": 1, "training.reward": reward, "seeds": 5}
        for name, value in (("C|C", cc), ("D|D", 1 - cc)):
            row |= {
                f"summary.final_action_rates.{name}.mean": value,
                f"summary.final_action_rates.{name}.ci_low": value - 0.05,
                f"summary.final_action_rates.{name}.ci_high": value + 0.05,
            }
        rows.append(row)
    return pd.DataFrame(rows)


def test_a_sweeps_seeds_become_one_row_per_setting_and_figure() -> None:
    table = sweep_seeds(
        _seeds_csv(),
        {
            "C|C": "summary.final_action_rates.C|C",
            "D|D": "summary.final_action_rates.D|D",
            "illegal": "summary.final_illegal_rate",
        },
    )
    assert list(table["setting"].unique()) == ["reward game", "reward utilitarian"]  # only what varies names a setting
    cc = table[(table["setting"] == "reward utilitarian") & (table["figure"] == "C|C")].iloc[0]
    assert (cc["mean"], cc["ci_low"], cc["ci_high"], cc["seeds"]) == (0.9, 0.85, 0.9 + 0.05, 5)
    assert table[table["figure"] == "illegal"]["mean"].isna().all()  # a field the sweep lacks is missing, not 0


def test_ours_and_the_papers_bars_share_the_axis_unless_asked_not_to(tmp_path: Path) -> None:
    table = sweep_seeds(_seeds_csv(), {"C|C": "summary.final_action_rates.C|C"})
    paper = {"utilitarian": {"C|C": 0.8}, "game": {"D|D": 1.0}}
    fig = plot_beside_paper(table, paper, ylabel="share", ours="ours", theirs="paper")
    ours, theirs = fig.axes
    assert [round(p.get_height(), 2) for p in ours.patches] == [0.01, 0.9]
    assert [round(p.get_height(), 2) for p in theirs.patches] == [0.8]  # the paper's D|D is not one of our figures
    assert ours.get_shared_y_axes().joined(ours, theirs)
    apart = plot_beside_paper(table, paper, ylabel="share", ours="ours", theirs="paper", same_axis=False)
    assert not apart.axes[0].get_shared_y_axes().joined(*apart.axes)


def test_the_moral_sweep_figure_draws_every_action_type_beside_fig_2a(tmp_path: Path) -> None:
    from sandbox.moral.plots import PAPER_FIG2A, plot_sweep_actions

    fig = plot_sweep_actions(_seeds_csv(), "tiny")
    ours, theirs = fig.axes
    assert "5 seeds" in ours.get_title() and "Fig. 2a" in theirs.get_title()
    assert len(theirs.patches) == sum(len(v) for v in PAPER_FIG2A.values())
    fig.savefig(tmp_path / "moral.png")
    assert (tmp_path / "moral.png").stat().st_size > 10_000


def test_the_proxy_sweep_figure_reads_the_labeling_summary_fields(tmp_path: Path) -> None:
    """Built as the sweep builds it: each run's summary.json flattened (`sweep.run._flatten`), the objective
    written as JSON, then `seed_table`."""
    import json

    from sandbox.proxy.plots import PAPER_ULTIMATUM, plot_sweep_accuracy
    from sandbox.sweep.run import _flatten, seed_table

    rows = []
    for objective, llm in (
        ({"name": "reject_below_share", "threshold": 0.3}, 0.6),
        ({"name": "reject_below_amount", "threshold": 10}, 0.4),
    ):
        for seed, jitter in enumerate((-0.02, 0.0, 0.02)):
            summary = {
                "accuracy": {
                    "llm": {"accuracy": llm + jitter, "auc": 0.7},
                    "no_objective": {"accuracy": 0.5},
                    "supervised": {"accuracy": 0.9},
                    "random": {"accuracy": 0.5},
                },
                "agent_accuracy": {"llm": {"mean": llm + jitter, "ci_low": 0.0, "ci_high": 1.0, "seeds": 3}},
            }
            rows.append(
                {
                    "run": f"run-{len(rows)}",
                    "status": "complete",
                    "proxy.objective": json.dumps(objective),
                    "seed": seed,
                    **{f"summary.{k}": v for k, v in _flatten(summary).items()},
                }
            )
    fig = plot_sweep_accuracy(seed_table(pd.DataFrame(rows)), "embedded")
    ours, theirs = fig.axes
    assert [t.get_text() for t in ours.get_xticklabels()] == ["objective reject < 30%", "objective reject < $10"]
    heights = [round(p.get_height(), 2) for p in ours.patches]
    assert heights == [0.6, 0.4, 0.5, 0.5, 0.9, 0.9, 0.6, 0.4]  # LLM, No-Objective, SL, the agent; per objective
    assert len(theirs.patches) == sum(len(v) for v in PAPER_ULTIMATUM.values())
