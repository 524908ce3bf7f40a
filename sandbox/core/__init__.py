"""The core: the run-kind contract and registry (`kinds`), scenario files of any kind, run directories, `RunResult`,
budgets, `summary.json`, the command line's app (`commands`), the dry-run table and the benchmark dispatcher. The core
finds the kinds through the registry and imports no method."""
