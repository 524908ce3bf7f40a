"""The society engine's benchmarks and their fixtures: scripted fake models at a fixed latency
(`engine.fake_model`, `engine.fake_scai_models`) and a loopback OpenAI-compatible server (`server`).

Every figure they produce is a timing figure, never a simulation result. The
kinds register the benchmarks (`sandbox.kinds.RunKind.benchmarks`); `sandbox
bench NAME` runs them.
"""
