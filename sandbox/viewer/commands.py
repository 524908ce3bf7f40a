"""The viewer's commands: `sandbox view [RUNS_DIR]` and `sandbox report RUN --out FILE.html`."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from sandbox.base.errors import SandboxError, UsageError
from sandbox.base.extras import require
from sandbox.core.commands import app, console, fail


@app.command()
def view(
    runs_dir: Annotated[Path, typer.Argument(help="The folder of runs to show (every run directory under it).")] = Path(
        "runs"
    ),
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on; beyond 127.0.0.1 anyone who reaches it reads the runs.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on (0: a free one).")] = 0,
    open_it: Annotated[bool, typer.Option("--open", help="Open the viewer in the default browser.")] = False,
) -> None:
    """Show the runs under a folder in the browser: the list, each run's charts, tables, policies and transcripts,
    updated live while a run is in progress (read-only; Ctrl-C stops it). Needs the viewer extra."""
    try:
        require("viewer", what="sandbox view")
        if not runs_dir.is_dir():
            raise UsageError(
                f"{runs_dir} is not a folder (give the folder your runs are in, e.g. `sandbox view runs/`)"
            )
        import uvicorn

        from sandbox.viewer.server import bind, create_app, hosts_for, is_local, url_of

        sock = bind(host, port)
    except SandboxError as error:
        raise fail(error) from None
    if not is_local(host):
        console.print(
            f"[bold yellow]warning:[/] listening on {escape(host)}, beyond this machine: anyone who reaches it can "
            "read these runs (the viewer has no login)"
        )
    url = url_of(sock)
    console.print(
        f"sandbox view: {escape(str(runs_dir.resolve()))} at [bold]{escape(url)}[/] (Ctrl-C stops it)", soft_wrap=True
    )
    if open_it:
        webbrowser.open(url)
    app_ = create_app(runs_dir, hosts=hosts_for(host))
    server = uvicorn.Server(uvicorn.Config(app_, log_level="warning", lifespan="off"))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    out: Annotated[Path | None, typer.Option("--out", help="The HTML file to write (default RUN/report.html).")] = None,
    open_it: Annotated[bool, typer.Option("--open", help="Open the report in the default browser.")] = False,
) -> None:
    """Write a run's page as one self-contained HTML file (scripts, styles, figures and transcripts inline; it
    loads nothing from the network), to attach to a paper or send to a colleague. Needs the viewer extra."""
    try:
        require("viewer", what="sandbox report")
        from sandbox.viewer.report import build_report

        path = build_report(run_dir, out or run_dir / "report.html", open_it=open_it)
    except SandboxError as error:
        raise fail(error) from None
    console.print(f"report: [bold]{escape(str(path))}[/] ({path.stat().st_size / 1e6:.1f} MB)", soft_wrap=True)


@app.command()
def track(
    run_dir: Annotated[Path, typer.Argument(help="A finished run directory (a sweep logs each cell as a child run).")],
    uri: Annotated[
        str | None,
        typer.Option("--uri", help="MLflow tracking URI (default: the run's tracking block, else file:./mlruns)."),
    ] = None,
    experiment: Annotated[
        str | None, typer.Option("--experiment", help="MLflow experiment (default: the scenario's name).")
    ] = None,
) -> None:
    """Log a finished run to MLflow now: one made without tracking, or whose store could not be reached (needs the
    tracking extra)."""
    from sandbox.viewer.catalog import find_runs
    from sandbox.viewer.page import is_run_dir

    try:
        require("tracking", what="sandbox track")
        if not run_dir.is_dir() or not is_run_dir(run_dir) or not (run_dir / "summary.json").is_file():
            raise UsageError(f"{run_dir} is not a finished run directory (no summary.json)")
        runs = [
            run_dir,
            *(
                p
                for sub in sorted(run_dir.iterdir())
                if sub.is_dir()
                for p in find_runs(sub)
                if (p / "summary.json").is_file()
            ),
        ]
    except SandboxError as error:
        raise fail(error) from None
    from sandbox.viewer.tracking import TRACKING, track_finished, tracking_of

    block = tracking_of(run_dir) or {}
    logged = run_dir / TRACKING
    if logged.is_file() and (uri or experiment):
        raise fail(
            UsageError(
                f"{run_dir} is logged to MLflow already ({logged}); --uri and --experiment are for a run not logged yet"
            )
        )
    config = {"uri": uri or block.get("uri") or "file:./mlruns", "experiment": experiment or block.get("experiment")}
    run_id = track_finished(run_dir, config)
    for inner in runs[1:]:
        track_finished(inner)
    console.print(
        f"logged {run_dir} to MLflow run {run_id} ({len(runs) - 1} runs inside as its children)",
        soft_wrap=True,
        markup=False,
    )
