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

__all__ = ["CHARS_PER_TOKEN", "dry_run_table", "least_minutes", "limit_lines"]

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
    if rows:
        for line in limit_lines(pd.DataFrame(rows)):
            out_console.print(line, soft_wrap=True)
    note = f" {skipped} runs are of kinds without a dry run and are not estimated." if skipped else ""
    out_console.print(
        f"Counts assume every answer is legal the first time (a model's illegal answers add calls); "
        f"tokens count the calls that reach a model (not cache hits); prompt tokens are characters / "
        f"{CHARS_PER_TOKEN:g}.{note}",
        soft_wrap=True,
    )


def least_minutes(spec: str, calls: int, tokens: int) -> float | None:
    """The fewest minutes `calls` calls of `tokens` tokens in all take under an `openai:` spec's rate limits (each of
    its endpoints keeps `requests_per_minute` and `tokens_per_minute`; `sandbox.llm.rate`); None without limits.

    >>> least_minutes("openai:m@http://a/v1,http://b/v1?requests_per_minute=600", 3000, 0)  # 1,200 a minute
    2.5
    >>> least_minutes("openai:m?tokens_per_minute=1000", 1, 5000), least_minutes("embedded", 10, 10) is None
    (5.0, True)
    """
    if not spec.startswith("openai:"):
        return None
    from sandbox.llm.endpoints import parse_endpoints

    parsed = parse_endpoints(spec.removeprefix("openai:"))
    endpoints = max(1, len(parsed.urls))
    bounds = [
        amount / (limit * endpoints)
        for amount, limit in ((calls, parsed.requests_per_minute), (tokens, parsed.tokens_per_minute))
        if limit is not None
    ]
    return max(bounds) if bounds else None


def limit_lines(frame: Any) -> list[str]:
    """A line for each model whose endpoints have rate limits: the least time its calls take under them (the calls of
    every role of that model, which share its endpoints)."""
    lines = []
    by_model = frame.groupby("model", sort=True)[["calls", "prompt_tokens", "max_answer_tokens"]].sum()
    for model, row in by_model.iterrows():
        tokens = int(row["prompt_tokens"] + row["max_answer_tokens"])
        minutes = least_minutes(str(model), int(row["calls"]), tokens)
        if minutes is not None:
            lines.append(
                f"Under {model}'s rate limits its {int(row['calls']):,} calls ({tokens:,} tokens at most) take at "
                f"least {_duration(minutes * 60)}."
            )
    return lines


def _duration(seconds: float) -> str:
    """Seconds as a person reads them.

    >>> _duration(42.4), _duration(150), _duration(7300)
    ('42 s', '2 min 30 s', '2 h 1 min')
    """
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"
