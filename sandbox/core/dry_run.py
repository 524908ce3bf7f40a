"""Dry runs on the command line: the LLM calls and tokens per role and model that runs would take, no model called.

Each kind estimates its own runs (`sandbox.core.kinds.RunKind.dry_run`; the
society kind's plays the run with a stand-in model, `sandbox.scai.dry_run`);
`sandbox run --dry-run` and `sandbox sweep --dry-run` print this table.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table

from sandbox.core import kinds
from sandbox.core.commands import console, out_console

__all__ = ["CHARS_PER_TOKEN", "dry_run_table"]

# Characters of message text per prompt token, the chat template's tokens included: 3.43 on the embedded Qwen2.5
# model's `make run` transcript (30,722 characters, 8,959 prompt tokens; README, "Measuring"). An estimate for
# any other tokenizer.
CHARS_PER_TOKEN = 3.4


def dry_run_table(runs: list[tuple[str, Any]], title: str) -> None:
    """Play `runs` ((kind name, scenario) pairs) with their kinds' dry runs (a kind without one is counted as not
    estimated) and print
    per role and model: calls, cache hits, estimated prompt tokens, the most answer tokens, and dollars where
    priced."""
    import pandas as pd

    from sandbox.llm.resolve import scenario_prices

    rows, skipped = [], 0
    with console.status(f"playing {len(runs)} runs with a stand-in model (no model is called)"):
        for name, scenario in runs:
            kind = kinds.get(name)
            if not kind.has("dry_run"):
                skipped += 1
                continue
            table, prices = kind.call("dry_run", scenario), scenario_prices(scenario)
            for row in table.to_dict("records"):
                spec = row.get("model")  # a kind may name the model of a role its scenario's models do not hold
                if not isinstance(spec, str):
                    config = getattr(scenario.models, row["role"])
                    spec = getattr(config, "spec", config)  # a role's ModelConfig, or a bare spec (a distillation's)
                price = prices.get(spec)
                usd = price.cost(row["prompt_tokens"], row["max_answer_tokens"]) if price else None
                rows.append({**row, "model": spec, "usd": usd})
    out = Table(title=title, title_justify="left")
    columns = ("calls", "cache_hits", "prompt_tokens", "max_answer_tokens")
    for column in (
        "role",
        "model",
        "calls",
        "cache hits",
        "prompt tokens (est.)",
        "answer tokens (at most)",
        "US$ (at most)",
    ):
        out.add_column(column, justify="left" if column in ("role", "model") else "right")
    if rows:
        frame = pd.DataFrame(rows)
        totals = frame.groupby(["role", "model"], sort=True).agg({**{c: "sum" for c in columns}, "usd": "sum"})
        priced = frame.groupby(["role", "model"], sort=True)["usd"].apply(lambda u: u.notna().all())
        for (role, model), row in totals.iterrows():
            usd = f"{row['usd']:.4f}" if priced[(role, model)] else "-"
            out.add_row(role, model, *(str(int(row[c])) for c in columns), usd)
        out.add_row("all", "", *(str(int(frame[c].sum())) for c in columns), "")
    out_console.print(out)
    note = f" {skipped} runs are of kinds without a dry run and are not estimated." if skipped else ""
    out_console.print(
        f"Counts assume every answer is legal the first time (a model's illegal answers add calls); "
        f"tokens count the calls that reach a model (not cache hits); prompt tokens are characters / "
        f"{CHARS_PER_TOKEN:g}.{note}",
        soft_wrap=True,
    )
