"""What a population run shows: the command line's tables (`cli`), figures (`plots`), readers across runs
(`across_runs`) and the viewer's page (`view`)."""
