"""The population benchmarks: scripted dynamics and actors (`scripted`), LLM populations against a loopback server
(`llm`)."""
