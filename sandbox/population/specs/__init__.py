"""The population kind's games, one module each: the `game:` block's settings and what the game plugs into the
kind (`common.PopulationGameSpec`). A new game is a module here and a line in `sandbox.population.scenario`'s
`GameSpec`."""
