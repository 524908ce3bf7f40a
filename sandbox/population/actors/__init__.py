"""Populations on Ray actors: scripted matches cut into blocks (`scripted`), LLM members with a share of the
endpoints each (`llm`)."""
