"""Social Contract AI (Fränken et al. 2023): an assistant whose policy a MetaLM rewrites from observed interactions.

The package holds everything SCAI adds to a society run: its scenario block
(`config`), the graph layer the society engine calls through one hook
(`layer`: the first policy, the assistant's pairs and players, the meta step,
the run's SCAI tables), the evidence the MetaLM reads (`nodes`), the metrics
(`metrics`), generalisation (`evaluate`), plots (`plots`) and the command
line's tables (`commands`). The actors, the AssistantLM and the MetaLM, live in
`agents/`. Nothing is imported here, so `sandbox.scai.scenario` can read `config` without loading the rest.

Public modules for other methods (the only ones they may import; import-linter checks it): `config` (the
`assistant:` block and the generalisation conditions) and `metrics` (offered-share bins, epoch tables).
"""
