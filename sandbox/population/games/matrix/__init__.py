"""A symmetric 2x2 game between neighbours: scripted `axelrod` strategies under payoff imitation (the plug-in
`scripted`; the catalogue of strategies and their match table in `strategies`, one generation's play in `dynamics`,
the matches on Ray actors in `actors`), or LLM members who follow norm texts (`llm`; its typed state and table rows in
`llm_records`, its players and their matches in `llm_players`); settings in `spec`, tables, figures and runs side by
side in `report`."""

from sandbox.population.registry import GameEntry

__all__ = ["GAME"]

GAME = GameEntry(
    kind="matrix",
    title=(
        "A symmetric 2x2 game between neighbours: scripted axelrod strategies under payoff imitation (Szabo & "
        "Toke's Fermi rule, Santos & Pacheco's proportional rule, Nowak & May's best neighbour, mutation), or LLM "
        "members who follow norm texts (Tennant et al.'s prompt)"
    ),
    spec="sandbox.population.games.matrix.spec:MatrixSpec",
    plugins={
        "scripted": "sandbox.population.games.matrix.scripted:ScriptedMatrixGame",
        "llm": "sandbox.population.games.matrix.llm:LLMMatrixGame",
    },
    edits="state.agents.2.strategy=TEXT",
    conformance={
        "scripted": "sandbox.population.games.matrix.conformance:SCRIPTED",
        "llm": "sandbox.population.games.matrix.conformance:LLM",
    },
    headline="cooperation",
    tables={
        "moves": "moves.csv",
        "norms": "norms.csv",
        "revisions": "revisions.csv",
    },
    fixed=("play",),
    scale={
        "members": [{"strategy": "Always cooperate with the other agent.", "share": 1.0}],
        "network": {"kind": "ring"},
        "game": {"kind": "matrix", "play": "llm", "turns": 1},
        "revision": {"rule": "imitate"},
    },
    scale_on_actors=True,
)
