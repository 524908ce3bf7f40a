"""The society engine: a society of LLM users (and an assistant) playing a game epoch after epoch on LangGraph.

* `scenario`: `SocietyScenario`, the base of every society kind's file (SCAI's adds its `assistant:` block);
* `state`, `context`, `nodes`, `graph`: the society state machine (pair -> play -> score, and a method's layer);
* `runner`: resolve the models per role, build the societies, drive the graph, write the results;
* `results`, `plots`: the episodes and metrics tables, the summary, the plots;
* `benchmarks`, `loopback_server`: the engine's benchmarks, and an OpenAI-compatible server on loopback for them.

Social Contract AI (`sandbox.scai`) is a method on top of it, as every other method is on its engine.
The state machine is built by a factory (`sandbox.society.graph.build_society_graph`), never at import time.
"""
