"""Populations whose norms emerge: every agent revises its own strategy or norm, on a network.

This part holds scripted members (the `axelrod` library's strategies) under
payoff imitation (the Fermi rule), Nowak & May's best-neighbour rule and
mutation, on the networks of `societies.network`, so that the dynamics are
checked against evolutionary game theory without an LLM. Public modules:
`sandbox.population.scenario` (the `population:` block) and
`sandbox.population.run` (`run_population`, `resume_population`).
"""
