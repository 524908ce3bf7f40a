"""The public goods game with punishment (Fehr & Gächter 2000; Fischbacher & Gächter 2010): its rules and the
literature's scripted types (`rules`), settings (`spec`), plug-in (`game`), LLM members (`players`), report and
tables' rows (`report`) and conformance case (`conformance`)."""

from sandbox.population.registry import GameEntry

__all__ = ["GAME"]

GAME = GameEntry(
    kind="public_goods",
    title=(
        "The public goods game in groups, with an optional punishment stage (Fehr & Gächter 2000): the "
        "literature's scripted free riders, conditional cooperators and punishers, and LLM members who follow norms"
    ),
    spec="sandbox.population.games.public_goods.spec:PublicGoodsSpec",
    plugins={"game": "sandbox.population.games.public_goods.game:PublicGoodsGame"},
    conformance={"game": "sandbox.population.games.public_goods.conformance:CASE"},
    edits="state.agents.2.strategy=TEXT",
    headline="mean_contribution",
    tables={"punishments": "punishments.csv", "norms": "norms.csv"},
    fixed=("group_size", "matching"),
)
