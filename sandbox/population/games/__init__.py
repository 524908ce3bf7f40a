"""The population games, one folder a game: `games/<game>/` holds its rules (where only populations play it), its
settings (`spec`), its plug-ins of the engine, its LLM players, its report and figures; its `__init__` holds its
`GameEntry`, which the registry (`sandbox.population.registry`) finds by the entry point `sandbox.population_games`.
"""
