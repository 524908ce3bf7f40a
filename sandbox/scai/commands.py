"""SCAI on the command line: a run's epochs (after `sandbox run`), its generalisation (`sandbox evaluate`), and
run directories side by side (`sandbox compare`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sandbox.base.files import read_json


def scai_table(scai: dict[str, Any], out_console: Console) -> None:
    """The per-epoch table of a SCAI run: users, assistant, gap and acceptance, mean (95% CI) across runs."""

    def cell(value: dict[str, Any] | None) -> str:
        if not value or value["mean"] is None:
            return "n/a"
        ci = "" if value["ci_low"] is None else f" ({value['ci_low']:.0%}–{value['ci_high']:.0%})"
        return f"{value['mean']:.0%}{ci}"

    table = Table(title="Social Contract AI: offered share per epoch, mean (95% CI) across runs", title_justify="left")
    for column in ("epoch", "users", "assistant", "gap", "users accept", "assistant accepts"):
        table.add_column(column, justify="right")
    for epoch, row in scai["per_epoch"].items():
        gap = row.get("gap_offered_share")
        gap_text = "n/a" if not gap or gap["mean"] is None else f"{gap['mean']:+.0%}"
        table.add_row(
            str(int(epoch) + 1),
            cell(row.get("users_offered_share")),
            cell(row.get("assistant_offered_share")),
            gap_text,
            cell(row.get("users_acceptance_rate")),
            cell(row.get("assistant_acceptance_rate")),
        )
    out_console.print(table)
    bins = ", ".join(f"{b['bin']} {b['runs']}" for b in scai["final_policy_bins"])
    out_console.print(
        f"final policies by the assistant's offered share: {bins}; "
        f"illegal revisions {scai['illegal_revisions']} of {scai['policy_revisions']}"
    )


def evaluation_table(path: Path, out_console: Console) -> None:
    """The table `sandbox evaluate` prints: the final policies' offered share per condition."""
    evaluation = read_json(path / "summary.json")["evaluation"]
    table = Table(title="Final policies under new conditions: the assistant's offered share", title_justify="left")
    for column in ("condition", "offered share", "95% CI", "runs", "accepted", "illegal"):
        table.add_column(column, justify="left" if column == "condition" else "right")
    for name, row in evaluation.items():
        share = row["offered_share"]
        ci = "n/a" if share["ci_low"] is None else f"{share['ci_low']:.1%} – {share['ci_high']:.1%}"
        mean = "n/a" if share["mean"] is None else f"{share['mean']:.1%}"
        accepted = row.get("acceptance_rate")
        table.add_row(
            name,
            mean,
            ci,
            str(share["n"]),
            "" if accepted is None else f"{accepted:.0%}",
            str(row.get("illegal_proposals", "")),
        )
    out_console.print(table)
    out_console.print(
        f"results in [bold]{escape(str(path / 'evaluation.csv'))}[/] and {escape(str(path / 'generalisation.png'))}"
    )


def compare_command(run_dirs: list[Path], out: Path, out_console: Console) -> None:
    """`sandbox compare`: the overlay figure at `out`, its table beside it as CSV, and the gaps printed."""
    from sandbox.core.commands import check_figure_out, write_figure
    from sandbox.scai.compare import compare_runs, comparison_table

    check_figure_out(out)
    table = comparison_table(run_dirs)  # reads and checks every directory before anything is written
    write_figure(compare_runs(run_dirs, table=table), table, out)
    shown = Table(title="Offered share, first and last epoch: mean (95% CI) across runs", title_justify="left")
    for column in ("run directory", "panel", "society", "users", "assistant", "gap first", "gap last"):
        shown.add_column(column, justify="left" if column in ("run directory", "panel", "society") else "right")

    def cell(rows: Any, group: str, epoch: int, sign: bool = False) -> str:
        row = rows[(rows["group"] == group) & (rows["epoch"] == epoch)]
        if row.empty or row["mean"].isna().all():
            return "n/a"
        mean, low, high = (float(row[k].iloc[0]) for k in ("mean", "ci_low", "ci_high"))
        text = f"{mean:+.0%}" if sign else f"{mean:.0%}"
        return text if low != low else f"{text} ({low:.0%}..{high:.0%})"

    for run_dir, rows in table.groupby("run_dir", sort=False):
        first, last = int(rows["epoch"].min()), int(rows["epoch"].max())
        shown.add_row(
            str(run_dir),
            str(rows["panel"].iloc[0]),
            str(rows["label"].iloc[0]),
            cell(rows, "users", last),
            cell(rows, "assistant", last),
            cell(rows, "gap", first, True),
            cell(rows, "gap", last, True),
        )
    out_console.print(shown)
    out_console.print(f"figure in [bold]{escape(str(out))}[/], table in {escape(str(out.with_suffix('.csv')))}")
