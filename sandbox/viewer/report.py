"""`sandbox report RUN --out FILE.html`: a run's page as one self-contained HTML file, no network.

The file holds the viewer's script and styles inline, the run's rendered page (`server.run_json`), its figures as
`data:` URIs, every call of its transcripts (up to `MAX_CALLS` a file) and Plotly. Plotly's script is 4.8 MB;
it is stored gzip-compressed in base64 (about 1.9 MB) and unpacked by the browser's own `DecompressionStream`,
which keeps a report of a small run under 5 MB. A Content-Security-Policy in the file lets the page load nothing
from outside it (no request leaves the machine, even from a file sent by mail).
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import webbrowser
from pathlib import Path
from typing import Any

from sandbox.base.errors import UsageError
from sandbox.core.run_dir import atomic_write_text
from sandbox.viewer.catalog import Catalog
from sandbox.viewer.page import data_uri, is_run_dir
from sandbox.viewer.server import asset, finite, page_html, run_json
from sandbox.viewer.transcripts import Transcripts

__all__ = ["CSP", "MAX_CALLS", "build_report", "report_data"]

MAX_CALLS = 20_000  # calls of one transcript kept in a report; the report says when it holds fewer
CSP = (
    "default-src 'none'; script-src 'unsafe-inline' blob:; style-src 'unsafe-inline'; img-src data: blob:; "
    "connect-src 'none'; font-src data:"
)


def _script(text: str) -> str:
    """`text` safe inside a `<script>` element (no `</script>` or `<!--` can end it)."""
    return re.sub(r"<(/script|!--)", r"<\\\1", text, flags=re.IGNORECASE)


def report_data(run: Path) -> dict[str, Any]:
    """What a report embeds: the run's page (figures inline) and its transcripts' calls."""
    run = run.resolve()
    root = run.parent
    page = run_json(root, run, Catalog(root), link=lambda name: data_uri(run / name))
    calls: dict[str, Any] = {}
    reader = Transcripts()
    for section in page["sections"]:
        if section["type"] == "transcripts":
            rows = reader.rows(run / section["file"])
            calls[section["file"]] = rows[:MAX_CALLS]
            if len(rows) > MAX_CALLS:
                section["title"] += f" (the first {MAX_CALLS:,} of {len(rows):,} calls; `sandbox view` shows all)"
    return {"run": page, "transcripts": calls}


def build_report(run: Path | str, out: Path | str, *, open_it: bool = False) -> Path:
    """Write the run directory `run`'s page to `out` (one HTML file) and return its path; `UsageError` when `run`
    is not a run directory. With `open_it`, open it in the default browser."""
    run, out = Path(run), Path(out)
    if not run.is_dir() or not is_run_dir(run):
        raise UsageError(f"{run} is not a run directory (no scenario.yaml, run.json or summary.json)")
    if out.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"--out {out}: a report is an .html file")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: the folder {out.parent} does not exist")
    data = json.dumps(finite(report_data(run)), ensure_ascii=False, default=str).replace("<", "\\u003c")
    plotly = base64.b64encode(gzip.compress(asset("plotly.min.js"), compresslevel=9, mtime=0)).decode()
    loader = (
        "window.plotlyReady = (async () => {"
        f"const bytes = Uint8Array.from(atob('{plotly}'), (c) => c.charCodeAt(0));"
        "const text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text();"
        "const url = URL.createObjectURL(new Blob([text], { type: 'text/javascript' }));"
        "await new Promise((ok, no) => { const s = document.createElement('script'); s.src = url; s.onload = ok;"
        " s.onerror = () => no(new Error('Plotly did not load')); document.head.append(s); });"
        "})();"
    )
    head = (
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<style>{asset('app.css').decode()}</style>"
        f"<script>window.SANDBOX_REPORT = {data};</script>"
        f"<script>{loader}</script>"
        f"<script>{_script(asset('app.js').decode())}</script>"
    )
    atomic_write_text(out, page_html(report=head))
    if open_it:
        webbrowser.open(out.resolve().as_uri())
    return out
