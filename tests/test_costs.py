"""Where a run's time and tokens go (`sandbox.core.costs`): its calls by step and role add up to the run's totals,
for a society and for an LLM population over a loopback OpenAI-compatible server; priced where the scenario gives
prices; shown by the command line and the viewer."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sandbox.base.files import read_json
from sandbox.core.costs import COSTS, cost_table, read_costs
from sandbox.llm.accounting import TokenLedger
from sandbox.llm.budget import Price
from sandbox.llm.transcript import read_transcript
from sandbox.viewer.catalog import Catalog


def _totals(costs: pd.DataFrame) -> dict[str, tuple[int, int, int, int]]:
    sums = costs.groupby("role")[["calls", "cache_hits", "input_tokens", "output_tokens"]].sum()
    return {str(role): tuple(int(v) for v in row) for role, row in sums.iterrows()}  # type: ignore[misc]


def test_a_societys_calls_by_epoch_add_up_to_its_totals(tmp_path: Path) -> None:
    from sandbox.api import run
    from tests.conftest import scai_models, scai_scenario

    result = run(scai_scenario(), out=tmp_path / "society", models=scai_models())
    path = Path(result.path)
    costs = read_costs(path)
    usage = read_json(path / "summary.json")["llm_usage"]
    expected = {r: (u["calls"], u["cache_hits"], u["input_tokens"], u["output_tokens"]) for r, u in usage.items()}
    assert _totals(costs) == expected and sum(u["calls"] for u in usage.values()) > 0
    epochs = sorted({int(s) for s in costs["step"].dropna()})
    assert epochs == list(range(len(epochs))) and len(epochs) >= 2  # one row a role and epoch
    assert costs["usd"].isna().all()  # no price given
    answered = costs[costs["calls"] > costs["cache_hits"]]
    assert (answered["latency_p95_s"] >= answered["latency_p50_s"]).all()
    row = Catalog(tmp_path).row(path.resolve())  # the viewer's figures of the run: the same calls and tokens
    assert row["calls"] == costs["calls"].sum()
    assert row["tokens"] == costs["input_tokens"].sum() + costs["output_tokens"].sum()


def test_an_llm_populations_calls_by_generation_add_up_over_a_loopback_server(tmp_path: Path) -> None:
    from tests.test_population_naming import naming_over_loopback

    result, requests, _ = naming_over_loopback(tmp_path / "run", latency_s=0.01)
    assert result.exit_code == 0, result.output
    path = tmp_path / "run"
    costs = read_costs(path)
    ledger = TokenLedger.from_transcript(read_transcript(path / "transcripts.jsonl")).totals()
    expected = {r: (u["calls"], u["cache_hits"], u["input_tokens"], u["output_tokens"]) for r, u in ledger.items()}
    assert _totals(costs) == expected
    assert costs["calls"].sum() - costs["cache_hits"].sum() == requests > 0  # every call that reached the server
    generations = read_json(path / "summary.json")["generations_played"]
    assert sorted(int(s) for s in costs["step"].dropna()) == list(range(generations))
    assert (costs["latency_p50_s"] >= 0.01).all()  # the server's latency, seen per generation
    assert "LLM calls by step and role" in result.output
    total = next(line for line in result.output.splitlines() if "total" in line)
    assert f"{costs['calls'].sum():,}" in total and f"{costs['input_tokens'].sum():,}" in total


def test_the_cost_is_priced_by_role_and_the_table_keeps_its_columns() -> None:
    records = [
        {"epoch": g, "role": role, "cache_hit": False, "input_tokens": 1_000, "output_tokens": 100, "latency_s": 0.1}
        for g in (0, 1)
        for role in ("user", "meta")
    ] + [{"epoch": None, "role": "judge", "cache_hit": False, "input_tokens": 50, "output_tokens": 5, "latency_s": 1}]
    table = cost_table(records, {"user": Price(input=2.0, output=10.0)})
    user = table[table["role"] == "user"]
    assert user["usd"].tolist() == [0.003, 0.003]  # 1,000 x $2 + 100 x $10 per million tokens
    assert table[table["role"] == "meta"]["usd"].isna().all()  # no price: no cost, not a cost of 0
    assert table["step"].isna().tolist() == [False] * 4 + [True]  # a call outside every step comes last
    assert list(table.columns) == list(pd.read_csv(pd.io.common.StringIO(table.to_csv(index=False))).columns)
    assert COSTS == "costs.csv"
