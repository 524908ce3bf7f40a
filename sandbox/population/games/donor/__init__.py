"""Vallinder and Hughes' donor game: its rules (`rules`), settings (`spec`), plug-in (`game`), its typed state and
table rows (`records`), its agents' start and selection (`agents`), LLM players (`players`), their norm book and
revisions (`norms`), the judge of play against the written strategy (`fidelity`) and its report (`report`: table,
figure, runs side by side)."""

from sandbox.population.registry import GameEntry

__all__ = ["GAME"]

GAME = GameEntry(
    kind="donor",
    title=(
        "Vallinder & Hughes' donor game: LLM agents write their strategies and revise them by selection, "
        "reflection, imitation or mutation"
    ),
    spec="sandbox.population.games.donor.spec:DonorSpec",
    plugins={
        "game": "sandbox.population.games.donor.game:DonorGame",
    },
    edits="state.agents.2.strategy=TEXT",
    conformance={"game": "sandbox.population.games.donor.conformance:CASE"},
    headline="mean_donated_share",
    tables={
        "donations": "donations.csv",
        "norms": "norms.csv",
        "revisions": "revisions.csv",
        "fidelity": "fidelity.csv",
    },
    benchmarks={"fidelity": "sandbox.population.games.donor.fidelity:bench_fidelity"},
    scale={
        "members": [{"strategy": "llm", "share": 1.0}],
        "network": {"kind": "ring"},
        "game": {"kind": "donor", "pairing": "network", "rounds": 2},
        "revision": {"rule": "select", "survivors": 0.5},
    },
)
