"""Where a run's time and tokens went: its LLM calls by step (a society's epoch, a population's generation) and by
role, read from its transcript, written as `costs.csv` when the run finishes (`write_summary`).

Columns: `step` (the call's epoch or generation; empty for a call outside every step, such as an evaluation after
the run), `role`, `calls`, `cache_hits` (answered by the sandbox's response cache: no model call), `errors`,
`input_tokens`, `output_tokens`, `latency_p50_s` and `latency_p95_s` (over the calls a model answered, cache hits
left out; empty where there is none), and `usd` where the scenario prices the role's model (`models.ROLE.price`,
dollars per million tokens; empty otherwise). Every call of the transcript is in exactly one row, so the rows add
up to the run's totals (`summary.json`'s `llm_usage`, the viewer's calls and tokens).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from sandbox.core.run_dir import TRANSCRIPTS, atomic_write_text

__all__ = ["COSTS", "COST_COLUMNS", "TIMINGS", "cost_table", "read_costs", "write_costs"]

COSTS = "costs.csv"
TIMINGS = ("latency_p50_s", "latency_p95_s")  # timings: a rerun (or a resumed run, its calls from the cache) differs
COST_COLUMNS = (
    "step",
    "role",
    "calls",
    "cache_hits",
    "errors",
    "input_tokens",
    "output_tokens",
    "latency_p50_s",
    "latency_p95_s",
    "usd",
)


class Priced(Protocol):
    def cost(self, input_tokens: int, output_tokens: int) -> float: ...


def cost_table(records: Iterable[Mapping[str, Any]], prices: Mapping[str, Priced] | None = None) -> pd.DataFrame:
    """The calls of `records` (a transcript's) by step and role (`COST_COLUMNS`), steps in order, the calls outside
    every step last; `prices`: each role's price (`Price`), for the `usd` column.

    >>> records = [{"epoch": 0, "role": "user", "cache_hit": False, "input_tokens": 10, "output_tokens": 2,
    ...             "latency_s": 0.5}, {"epoch": 0, "role": "user", "cache_hit": True, "input_tokens": 10,
    ...             "output_tokens": 2, "latency_s": 0.0}]
    >>> cost_table(records)[["step", "role", "calls", "cache_hits", "input_tokens", "latency_p50_s"]].to_dict("records")
    [{'step': 0, 'role': 'user', 'calls': 2, 'cache_hits': 1, 'input_tokens': 20, 'latency_p50_s': 0.5}]
    """
    rows = [
        (
            -1 if r.get("epoch") is None else int(r["epoch"]),
            str(r.get("role")),
            bool(r.get("cache_hit")),
            r.get("error") is not None,
            int(r.get("input_tokens") or 0),
            int(r.get("output_tokens") or 0),
            float(r.get("latency_s") or 0.0),
        )
        for r in records
    ]
    calls = pd.DataFrame(rows, columns=["step", "role", "cache_hit", "error", "input", "output", "latency"])
    table = []
    for (step, role), group in calls.groupby(["step", "role"], sort=True):
        answered = group.loc[~group["cache_hit"], "latency"].to_numpy()
        price = (prices or {}).get(str(role))
        tokens_in, tokens_out = int(group["input"].sum()), int(group["output"].sum())
        table.append(
            {
                "step": None if step == -1 else int(step),
                "role": role,
                "calls": len(group),
                "cache_hits": int(group["cache_hit"].sum()),
                "errors": int(group["error"].sum()),
                "input_tokens": tokens_in,
                "output_tokens": tokens_out,
                "latency_p50_s": round(float(np.percentile(answered, 50)), 4) if len(answered) else None,
                "latency_p95_s": round(float(np.percentile(answered, 95)), 4) if len(answered) else None,
                "usd": round(price.cost(tokens_in, tokens_out), 6) if price is not None else None,
            }
        )
    frame = pd.DataFrame(table, columns=list(COST_COLUMNS))
    if len(frame):  # the calls outside every step last
        frame = frame.iloc[np.argsort(frame["step"].isna().to_numpy(), kind="stable")].reset_index(drop=True)
    frame["step"] = frame["step"].astype("Int64")
    return frame


def write_costs(run: Path) -> pd.DataFrame | None:
    """Write the run directory's `costs.csv` from its transcript, priced at its scenario's prices; None (nothing
    written) for a run without a transcript or without a call in it."""
    from sandbox.llm.transcript import iter_transcript

    transcript = run / TRANSCRIPTS
    if not transcript.is_file():
        return None
    table = cost_table(iter_transcript(transcript), _prices(run))  # streamed: 20,000 calls' records were 76 MB
    if table.empty:  # no call made (a scripted population): no table
        return None
    atomic_write_text(run / COSTS, table.to_csv(index=False))
    return table


def read_costs(run: Path | str) -> pd.DataFrame:
    """The run directory's `costs.csv` (an empty table with its columns where there is none)."""
    file = Path(run) / COSTS
    if not file.is_file():
        return pd.DataFrame(columns=list(COST_COLUMNS))
    return pd.read_csv(file, dtype={"step": "Int64"})


def _prices(run: Path) -> dict[str, Priced]:
    """The roles' prices of the run's scenario (none when it cannot be read: a kind not installed here)."""
    from sandbox.base.errors import SandboxError
    from sandbox.core.scenario_files import load_run_scenario
    from sandbox.llm.resolve import scenario_prices

    try:
        return scenario_prices(load_run_scenario(run), by="role")
    except (SandboxError, OSError, ValueError):
        return {}
