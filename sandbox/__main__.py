"""`python -m sandbox`: the same commands as the `sandbox` entry point."""

from sandbox.cli import main

main()
