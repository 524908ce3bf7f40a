"""The ultimatum game among members who follow and revise principles, SCAI's assistant among them: settings
(`spec`), plug-in (`game`), its typed state and table rows (`records`), its LLM players and MetaLMs (`players`)
and report (`report`); its rules are shared (`sandbox.rules.ultimatum`)."""

from sandbox.population.registry import GameEntry

__all__ = ["GAME"]

GAME = GameEntry(
    kind="ultimatum",
    title=(
        "The ultimatum game among members who follow and revise principles, with SCAI's fixed users and assistant "
        "as members"
    ),
    spec="sandbox.population.games.ultimatum.spec:UltimatumSpec",
    plugins={
        "game": "sandbox.population.games.ultimatum.game:UltimatumGame",
    },
    edits="state.agents.2.strategy=TEXT",
    conformance={"game": "sandbox.population.games.ultimatum.conformance:CASE"},
    headline="mean_offered_share",
    tables={
        "episodes": "episodes.csv",
        "norms": "norms.csv",
        "revisions": "revisions.csv",
    },
)
