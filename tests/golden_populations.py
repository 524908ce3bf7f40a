"""Golden tables: every shipped population scenario (and one society) at a small size on the scripted models.

The tables were recorded before the population loops moved onto the one LangGraph engine (issue 49), so that the
move is checked to keep every table, row for row, for the same seed. Timing columns (`seconds`, costs.csv's latencies) are left out: they
are the only columns a rerun may change. What the game decided is compared exactly and measured floats within the
tolerance `sandbox replay` states (`sandbox.engine.table_check`), so that the tables hold on another machine, whose
kernels round otherwise (issue 61; `tests/test_another_machine.py` checks them there). Re-recorded since where the
recorded value was an accident of rounding: `ultimatum_assistant_member/clusters.csv` (a cluster of two texts named
by the last digit of their centrality, now by their holders) and `vallinder_hughes_punishment/norm_diversity.csv`
(a drift of -1e-17 written as -0.0). Issue 63 added `held.csv` and `costs.csv` (new tables, every other file kept),
and re-recorded the norm map's four tables of the ten runs whose norms' play tells apart texts the embedding puts
together (`sandbox.population.norm_map.combined_distances`: ultimatum_small's selfish and altruistic norms, the donor
runs' "give 1 tenth" and "give 9 tenths").

    python -m tests.golden_populations record           # write tests/golden/ anew (only on purpose: the reference)
    python -m tests.golden_populations record NAME ...  # record these scenarios only (a new one)
"""

from __future__ import annotations

import io
import re
import sys
import zlib
from pathlib import Path
from typing import Any

import pandas as pd

from sandbox.base.errors import ScenarioError
from sandbox.core.scenario_files import parse_kind
from sandbox.engine.table_check import compare_table
from sandbox.population.kind import load
from sandbox.population.scenario import empty_members

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
SCENARIOS = ROOT / "scenarios" / "population"
TIMING = {"seconds", "latency_p50_s", "latency_p95_s"}  # costs.csv's latencies are timings too
# What a run writes that is not a table of results (run.json, summary.json with its timings, the store, plots).
TABLES = (".csv",)


def shipped() -> list[str]:
    """The shipped population scenarios (the sweeps aside: their cells are population scenarios run as they are)."""
    return sorted(p.stem for p in SCENARIOS.glob("*.yaml") if "sweep" not in p.stem)


def small(name: str) -> Any:
    """The scenario at a small size: few generations, and the fewest agents (of a few tried) that it accepts."""
    scenario = load(SCENARIOS / f"{name}.yaml")
    data = scenario.model_dump(mode="json")
    block = data["population"]
    kind = block["game"].get("kind", "matrix")
    llm = kind != "matrix" or block["game"].get("play") == "llm"
    block["generations"] = min(block["generations"], 3)
    if block.get("actors", 1) > 1:
        block["actors"] = 2
    sizes = [block["agents"]] if kind == "commons" else [6, 8, 10, 12, 16, 20] if llm else [64, 100]
    if block["network"]["kind"] == "edges":
        sizes = [block["agents"]]
    for agents in sizes:
        block["agents"] = min(agents, scenario.population.agents)
        try:
            candidate = parse_kind("population", data, name)
        except ScenarioError:
            continue
        if not empty_members(candidate.population):
            return candidate
    raise ValueError(f"{name}: no small size validates")


def models_for(scenario: Any) -> dict[str, Any]:
    """The tests' scripted players of the scenario's game (their answers are never simulation results)."""
    from sandbox.llm.scripted import scripted
    from tests.test_population_commons import Fisher
    from tests.test_population_matrix_llm import Members
    from tests.test_population_naming import Copier
    from tests.test_population_ultimatum import Players

    game = scenario.population.game
    kind = getattr(game, "kind", "matrix")
    if kind == "matrix":
        return {"user": Members().model()} if game.play == "llm" else {}
    if kind == "ultimatum":
        from tests.conftest import scripted_reading

        players = Players()
        model = scripted(
            [
                (r"explain what a principle means", scripted_reading),
                (r"reason for your proposal", "Because my principle says so."),
                (r".", players),
            ]
        )
        return {"user": model, "assistant": model, "meta": model}
    if kind == "donor":
        return {"user": scripted([(r".", _donor)]), "judge": scripted([(r"moves follow its strategy", _judge)])}
    if kind in ("naming", "commons"):
        return {"user": {"naming": Copier, "commons": Fisher}[kind]().model()}
    return _case_models(scenario)


def _case_models(scenario: Any) -> dict[str, Any]:
    """Another game's: its conformance case's scripted rule (`GameEntry.conformance`), for every role it reads."""
    from sandbox.core.kinds import resolve
    from sandbox.llm.scripted import scripted
    from sandbox.population.registry import entry_of

    game, block = scenario.population.game, scenario.population
    answer = resolve(entry_of(game.kind).conformance[game.plugin()]).answer
    if answer is None:
        return {}
    model = scripted(
        [
            (
                r".",
                lambda messages, kwargs: answer(messages[0].content if len(messages) > 1 else "", messages[-1].content),
            )
        ]
    )
    return {role: model for role in game.roles(block)}


def _donor(messages: Any, kwargs: Any) -> str:
    """A strategy gives a tenth per the prompt's checksum; a donation gives the share its strategy names (half by
    default), as `Donate, x` where punishment is on; a punishment comes where a checksum says so."""
    text = messages[-1].content
    if "How many units do you give up" not in text:
        return f"Critique: it went as it went.\nMy strategy will be to give {zlib.crc32(text.encode()) % 10} tenths."
    tenths = re.findall(r"give (\d) tenths", messages[0].content + text)
    have = float(re.search(r"You currently have ([\d.]+) units", text).group(1))
    amount = f"{have * (int(tenths[-1]) if tenths else 5) / 10:.2f}"
    if "Punish, x" not in text:
        return f"Justification: my strategy.\nAnswer: {amount}"
    verb = "Punish" if zlib.crc32(text.encode()) % 7 == 0 else "Donate"
    return f"Justification: my strategy.\nAnswer: {verb}, {amount}"


def _judge(messages: Any, kwargs: Any) -> str:
    return "Yes" if zlib.crc32(messages[-1].content.encode()) % 3 else "No"


def tables(path: Path) -> dict[str, str]:
    """Every table of a run directory as CSV text, without its timing columns."""
    found = {}
    for table in sorted(path.glob("*.csv")):
        frame = pd.read_csv(table, keep_default_na=False, dtype=str)
        found[table.name] = frame.drop(columns=[c for c in frame.columns if c in TIMING]).to_csv(index=False)
    return found


def run_small(name: str, out: Path) -> dict[str, str]:
    """Run the shipped scenario `name` small into `out`; its tables."""
    from sandbox.population.run import run_population

    scenario = small(name)
    return tables(run_population(scenario, out, models=models_for(scenario)))


def society_tables(out: Path) -> dict[str, str]:
    """The default society, small, on SCAI's scripted models."""
    from sandbox.api import run
    from tests.conftest import scai_models, scai_scenario

    path = run(scai_scenario(), out=out, models=scai_models())
    return tables(Path(path.path))


def record(names: list[str] | None = None) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        runs: dict[str, Any] = {
            f"population/{name}": lambda out, n=name: run_small(n, out) for name in (names or shipped())
        }
        if not names:
            runs["society/scai_small"] = society_tables
        for label, play in runs.items():
            folder = GOLDEN / label
            folder.mkdir(parents=True, exist_ok=True)
            for old in folder.glob("*.csv"):
                old.unlink()
            for table, text in play(Path(tmp) / label.replace("/", "-")).items():
                (folder / table).write_text(text, encoding="utf-8")
            print(label, sorted(p.name for p in folder.glob("*.csv")))


def differences(expected: dict[str, str], found: dict[str, str]) -> list[str]:
    """What differs between two runs' tables, one line a table: the first differing row, its generation or epoch,
    the column and both values. What the game decided must match exactly, measured floats within the tolerance of
    `sandbox.engine.table_check` (the same rule as `sandbox replay`)."""
    lines = [f"{t}: missing" for t in expected if t not in found]
    lines += [f"{t}: not expected" for t in found if t not in expected]
    for t in sorted(set(expected) & set(found)):
        old, new = (pd.read_csv(io.StringIO(x), dtype=str, keep_default_na=False) for x in (expected[t], found[t]))
        check = compare_table(t, old, new, where=_step, sides=("the recording", "this run"))
        if not check.identical:
            lines.append(check.line())
    return lines


def _step(row: pd.Series) -> str:
    return next((f" ({key} {row[key]})" for key in ("generation", "epoch") if key in row.index), "")


if __name__ == "__main__":
    if sys.argv[1:2] != ["record"]:
        raise SystemExit(__doc__)
    record(sys.argv[2:] or None)
