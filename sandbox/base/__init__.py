"""The base layer: errors and their exit codes, the strict scenario model, files, registries, seeds, statistics,
what a float's last digits may do (ties and tolerances: `rounding`), the job loop, running a coroutine from
synchronous code, and the optional extras. It imports nothing of the sandbox above it."""
