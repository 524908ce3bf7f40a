"""The commons (GovSim's fishery, Piatti et al.): its rules (`rules`), settings (`spec`), plug-in (`game`), its typed
state and table rows (`records`), the fishers (`fishers`), their discussion (`chat`) and memory (`memory`), and its
report (`report`)."""

from sandbox.population.registry import GameEntry

__all__ = ["GAME"]

GAME = GameEntry(
    kind="commons",
    title=("The commons: GovSim's fishery (Piatti et al.), LLM fishers who talk, remember and harvest a shared stock"),
    spec="sandbox.population.games.commons.spec:CommonsSpec",
    plugins={
        "game": "sandbox.population.games.commons.game:CommonsGame",
    },
    edits="state.stock=40",
    conformance={"game": "sandbox.population.games.commons.conformance:CASE"},
    headline="stock",
    tables={
        "talk": "talk.csv",
        "notes": "notes.csv",
    },
)
