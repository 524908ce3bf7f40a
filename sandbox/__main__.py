"""`python -m sandbox`: the same commands as the `sandbox` entry point."""

from sandbox.cli.runs import main

main()
