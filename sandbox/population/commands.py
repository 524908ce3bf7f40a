"""The population kind's command-line helpers: a progress bar over generations and the result's table."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sandbox.base.files import read_csv, read_json

__all__ = ["generations_table", "with_progress"]

console = Console(emoji=False)  # a path prints as written (`a:x:b`, no emoji); markup in it is escaped


def with_progress(
    total: int, done: int, run: Callable[[Callable[[int], None], Callable[[Any], None] | None], Path], calls: int = 0
) -> Path:
    """Call `run(hook, on_call)` under a bar that `hook(generation)` advances, as every kind's CLI runs: a
    `SandboxError` (bad input, a budget reached, a failed run) exits with its code, printed; Ctrl-C says how to
    resume and exits 130. With `calls` (the LLM calls expected, `sandbox run --dry-run`'s count), a second bar
    counts the calls as they finish (`on_call`), with calls per second and the time left (None: no such bar)."""
    from sandbox.core.commands import progress_bar
    from sandbox.core.commands import with_progress as guarded

    bar = progress_bar(None, rate=bool(calls))
    task = bar.add_task("generations", total=total, completed=done)
    counter = bar.add_task("LLM calls", total=calls, rate=True) if calls else None
    on_call = None if counter is None else lambda _: bar.advance(counter)
    return guarded(
        lambda: run(lambda _: bar.advance(task), on_call),
        bar,
        "interrupted: the finished generations are kept; `sandbox resume RUN_DIR` plays the rest",
    )


def generations_table(path: Path | Any, rows: int = 6) -> None:
    """Cooperation and the strategies' shares at a few generations, first and last included."""
    path = Path(path)
    gens = read_csv(path / "generations.csv")
    summary = read_json(path / "summary.json")
    by_game = _GAME_TABLES.get(summary.get("game"))
    if by_game:
        by_game(path, gens, summary)
        return
    shares = [c for c in gens.columns if c.startswith("share ")]
    table = Table(
        title=f"{summary['scenario']}: {summary['agents']} agents, {summary['network']} network "
        f"(mean degree {summary['mean_degree']:.1f}), rule {summary['rule']}"
    )
    for column in ["generation", "cooperation", *[c.removeprefix("share ") for c in shares]]:
        table.add_column(column, justify="right")
    step = max(1, (len(gens) - 1) // max(1, rows - 1))
    picks = sorted(set(range(0, len(gens), step)) | {len(gens) - 1})
    for i in picks:
        row = gens.iloc[i]
        table.add_row(str(int(row["generation"])), f"{row['cooperation']:.1%}", *[f"{row[c]:.1%}" for c in shares])
    console.print(table)
    console.print(f"results in [bold]{escape(str(path))}[/]: population.csv, generations.csv, cooperation.png")


def _donor_table(path: Path, gens: Any, summary: dict[str, Any]) -> None:
    table = Table(title=f"{summary['scenario']}: {summary['agents']} agents, donor game, {summary['model']}")
    for column in ("generation", "mean donated share", "mean final resources", "survivors - others", "illegal"):
        table.add_column(column, justify="right")
    for _, row in gens.iterrows():
        table.add_row(
            str(int(row["generation"])),
            f"{row['mean_donated_share']:.1%}",
            f"{row['mean_final_resources']:.1f}",
            f"{row['survivor_gap']:+.2f}",
            f"{row['illegal_rate']:.1%}",
        )
    console.print(table)
    slope = summary.get("donation_slope_per_generation")
    console.print(
        f"donation slope: {'n/a' if slope is None else f'{100 * slope:+.2f} points'} per generation; "
        f"{summary['calls']} calls"
    )
    console.print(
        f"results in [bold]{escape(str(path))}[/]: population.csv, donations.csv, norms.csv, generations.csv, "
        "donations.png"
    )


def _scripted_naming_table(path: Path, gens: Any, summary: dict[str, Any], rows: int = 6) -> None:
    table = Table(
        title=f"{summary['scenario']}: {summary['agents']} scripted agents, naming game ({summary['update']})"
    )
    shares = [c for c in gens.columns if c.startswith("share ")]
    for column in ("generation", "interactions", *(f"only {c.removeprefix('share ')}" for c in shares), "several"):
        table.add_column(column, justify="right")
    table.add_column("names held", justify="right")
    step = max(1, (len(gens) - 1) // max(1, rows - 1))
    for i in sorted(set(range(0, len(gens), step)) | {len(gens) - 1}):
        row = gens.iloc[i]
        table.add_row(
            str(int(row["generation"])),
            str(int(row["interactions"])),
            *[f"{row[c]:.1%}" for c in shares],
            f"{row['multiple_share']:.1%}",
            str(int(row["total_names"])),
        )
    console.print(table)
    at = summary.get("consensus_at")
    reached = "not reached" if at is None else f"after {at} interactions ({summary['consensus_per_agent']} per agent)"
    console.print(f"consensus: {reached}; no model calls")
    console.print(f"results in [bold]{escape(str(path))}[/]: generations.csv, population.csv, naming.png")


def _naming_table(path: Path, gens: Any, summary: dict[str, Any]) -> None:
    if summary.get("play") == "scripted":
        _scripted_naming_table(path, gens, summary)
        return
    table = Table(title=f"{summary['scenario']}: {summary['agents']} agents, naming game, {summary['model']}")
    for column in ("generation", "success rate", "dominant name", "its share", "committed name's share", "illegal"):
        table.add_column(column, justify="right")
    for _, row in gens.iterrows():
        committed = "" if row["committed_share"] != row["committed_share"] else f"{row['committed_share']:.0%}"
        table.add_row(
            str(int(row["generation"])),
            f"{row['success_rate']:.0%}",
            str(row["dominant"]),
            f"{row['dominant_share']:.0%}",
            committed,
            f"{row['illegal_rate']:.1%}",
        )
    console.print(table)
    at = summary.get("consensus_at")
    reached = (
        "not reached"
        if at is None
        else f"on {summary['consensus_name']} after {at} interactions ({summary['consensus_per_agent']} per agent)"
    )
    console.print(f"consensus: {reached}; {summary['calls']} calls")
    console.print(
        f"results in [bold]{escape(str(path))}[/]: interactions.csv, population.csv, generations.csv, naming.png"
    )


def _commons_table(path: Path, gens: Any, summary: dict[str, Any]) -> None:
    table = Table(title=f"{summary['scenario']}: {summary['agents']} fishers, GovSim's fishery, {summary['model']}")
    for column in (
        "month",
        "stock",
        "asked",
        "caught",
        "left",
        "sustainable each",
        "over-usage",
        "agreed limit",
        "chat",
        "illegal",
    ):
        table.add_column(column, justify="right")
    for _, row in gens.iterrows():
        limit = "" if row["agreed_limit"] != row["agreed_limit"] else str(int(row["agreed_limit"]))
        table.add_row(
            str(int(row["generation"]) + 1),
            str(int(row["stock"])),
            str(int(row["asked"])),
            str(int(row["caught"])),
            str(int(row["left"])) + (" collapsed" if row["collapsed"] else ""),
            str(int(row["sustainable"])),
            f"{row['over_usage']:.0%}",
            limit,
            str(int(row["talk_steps"])),
            f"{row['illegal_rate']:.0%}",
        )
    console.print(table)
    console.print(
        f"survival {summary['survival_months']} of {summary['months']} months; total gain "
        f"{summary['total_gain']:g} tons, efficiency {summary['efficiency']:.2f}, equality "
        f"{summary['equality']:.2f}, over-usage {summary['over_usage']:.0%}; {summary['calls']} calls"
    )
    console.print(
        f"results in [bold]{escape(str(path))}[/]: population.csv, generations.csv, talk.csv, notes.csv, commons.png"
    )


def _ultimatum_table(path: Path, gens: Any, summary: dict[str, Any]) -> None:
    table = Table(title=f"{summary['scenario']}: {summary['agents']} agents, ultimatum game, rule {summary['rule']}")
    for column in ("generation", "offered share", "members'", "fixed members'", "assistant's", "acceptance", "illegal"):
        table.add_column(column, justify="right")
    share = lambda v: "" if v != v or v == "" else f"{float(v):.0%}"
    for _, row in gens.iterrows():
        table.add_row(
            str(int(row["generation"])),
            share(row["mean_offered_share"]),
            share(row["members_offered_share"]),
            share(row["fixed_offered_share"]),
            share(row["assistant_offered_share"]),
            share(row["acceptance_rate"]),
            f"{row['illegal_rate']:.1%}",
        )
    console.print(table)
    console.print(
        f"{summary['norm_versions']} principles, {summary['revisions_changed']} revisions changed one, "
        f"{summary['illegal_revisions']} illegal; {summary['calls']} calls"
    )
    console.print(
        f"results in [bold]{escape(str(path))}[/]: episodes.csv, population.csv, norms.csv, revisions.csv, "
        "generations.csv, ultimatum.png"
    )


def _matrix_llm_table(path: Path, gens: Any, summary: dict[str, Any]) -> None:
    table = Table(
        title=f"{summary['scenario']}: {summary['agents']} LLM members, {summary['matrix_game']}, rule "
        f"{summary['rule']}"
    )
    for column in ("generation", "cooperation", "mean payoff", "illegal"):
        table.add_column(column, justify="right")
    for _, row in gens.iterrows():
        cooperation = "" if row["cooperation"] != row["cooperation"] else f"{row['cooperation']:.0%}"
        table.add_row(
            str(int(row["generation"])), cooperation, f"{row['mean_payoff']:.2f}", f"{row['illegal_rate']:.1%}"
        )
    console.print(table)
    console.print(
        f"{summary['norm_versions']} principles, {summary['revisions_changed']} revisions changed one; "
        f"{summary['calls']} calls"
    )
    console.print(
        f"results in [bold]{escape(str(path))}[/]: moves.csv, population.csv, norms.csv, revisions.csv, "
        "generations.csv, cooperation.png"
    )


_GAME_TABLES: dict[str, Callable[[Path, Any, dict[str, Any]], None]] = {
    "donor": _donor_table,
    "naming": _naming_table,
    "commons": _commons_table,
    "ultimatum": _ultimatum_table,
    "matrix_llm": _matrix_llm_table,
}  # a scripted matrix game's summary names its matrix game; its table is above
