"""The viewer's commands: `sandbox view [RUNS_DIR]` and `sandbox report RUN --out FILE.html`."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.text import Text

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
    transcript_memory_mb: Annotated[
        int,
        typer.Option(
            "--transcript-memory-mb",
            min=1,
            help="Memory for the indexes of the transcripts opened (about 230 bytes a call, 700 more with a game's "
            "note; the least recently read is let go first). Pages of calls are read from disk.",
        ),
    ] = 256,
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
    app_ = create_app(runs_dir, hosts=hosts_for(host), transcript_memory_mb=transcript_memory_mb)
    server = uvicorn.Server(uvicorn.Config(app_, log_level="warning", lifespan="off"))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    out: Annotated[Path | None, typer.Option("--out", help="The HTML file to write (default RUN/report.html).")] = None,
    transcripts: Annotated[
        str,
        typer.Option(
            "--transcripts",
            help="The calls the report holds: sample (default: an even sample that keeps the report under 5 MB), "
            "all (every call) or none.",
        ),
    ] = "sample",
    max_calls: Annotated[
        int | None,
        typer.Option("--max-calls", min=0, help="With sample: the sample's size; with all: keep the first N calls."),
    ] = None,
    open_it: Annotated[bool, typer.Option("--open", help="Open the report in the default browser.")] = False,
) -> None:
    """Write a run's page as one self-contained HTML file (scripts, styles, figures and calls inline; it loads
    nothing from the network), to attach to a paper or send to a colleague. It keeps to 5 MB by default: a long
    run's calls are sampled, and the report says how many it left out. Needs the viewer extra."""
    try:
        require("viewer", what="sandbox report")
        from sandbox.viewer.report import build_report

        written = build_report(
            run_dir, out or run_dir / "report.html", transcripts=transcripts, max_calls=max_calls, open_it=open_it
        )
    except SandboxError as error:
        raise fail(error) from None
    held = f"{written.calls:,} calls" + (f", {written.left_out:,} left out" if written.left_out else "")
    console.print(Text(f"report: {written.path} ({written.bytes / 1e6:.1f} MB, {held})"), soft_wrap=True, emoji=False)
    if written.warning:
        console.print(Text(f"warning: {written.warning}", style="bold yellow"), soft_wrap=True, emoji=False)


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
