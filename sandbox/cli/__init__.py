"""The command line (`sandbox`): run, resume and evaluate any kind of run (`runs`), validate, schema, models, bench
and the shipped examples (`tools`); each registered kind adds its own commands on the same app
(`sandbox.core.commands.app`)."""

from sandbox.cli.runs import app, main

__all__ = ["app", "main"]
