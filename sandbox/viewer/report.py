"""`sandbox report RUN --out FILE.html`: a run's page as one self-contained HTML file, no network.

The file holds the viewer's script and styles inline, the run's rendered page (`server.run_json`), its figures as
`data:` URIs, its transcripts' calls and Plotly (and, for a page with a network view, sigma.js and graphology). Plotly's script is 4.8 MB; it is stored gzip-compressed in base64
(about 1.9 MB) and unpacked by the browser's own `DecompressionStream`. A Content-Security-Policy in the file lets
the page load nothing from outside it (no request leaves the machine, even from a file sent by mail).

A report keeps to `LIMIT_MB` (5 MB) by default: its calls (about 3 KB each, prompts inline) are an even sample of
each transcript, as many as `CALL_BUDGET` bytes hold, and the page says how many were left out and how to include
them. `transcripts` chooses: `"sample"` (the default; `max_calls` sets the sample's size), `"all"` (every call;
`max_calls` keeps the first ones) or `"none"`. A report over the limit is still written, with a warning
(`Report.warning`): the user asked for it.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import re
import webbrowser
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox.base.errors import UsageError
from sandbox.core.run_dir import atomic_write_text
from sandbox.viewer.catalog import Catalog
from sandbox.viewer.page import data_uri, is_run_dir
from sandbox.viewer.server import SECTION_SCRIPTS, asset, finite, page_html, run_json
from sandbox.viewer.transcripts import Transcripts

__all__ = [
    "CALL_BUDGET",
    "CSP",
    "LIMIT_MB",
    "TRANSCRIPTS",
    "NetworkView",
    "Report",
    "build_report",
    "network_html",
    "pick_calls",
    "report_data",
]

LIMIT_MB = 5  # a report's size by default, at most
CALL_BUDGET = 2_500_000  # bytes of calls a default report holds (Plotly and the page take the rest of LIMIT_MB)
TRANSCRIPTS = ("sample", "all", "none")
CSP = (
    "default-src 'none'; script-src 'unsafe-inline' blob:; style-src 'unsafe-inline'; img-src data: blob:; "
    "connect-src 'none'; font-src data:"
)


@dataclass(frozen=True)
class Report:
    """A written report: its file, its size, the calls it holds and left out, and a warning when it is over
    `LIMIT_MB` (the user asked for more)."""

    path: Path
    bytes: int
    calls: int
    left_out: int
    transcripts: str = "sample"

    @property
    def warning(self) -> str | None:
        if self.bytes <= LIMIT_MB * 1_000_000:
            return None
        why = {
            "all": "a browser may be slow to open it; --transcripts sample keeps it small",
            "sample": "a browser may be slow to open it; a smaller --max-calls, or --transcripts none, makes it smaller",
        }.get(self.transcripts, "its figures and tables alone pass it")
        return f"the report is {self.bytes / 1e6:.1f} MB, over the {LIMIT_MB} MB a report keeps to by default ({why})"


def _script(text: str) -> str:
    """`text` safe inside a `<script>` element (no `</script>` or `<!--` can end it)."""
    return re.sub(r"<(/script|!--)", r"<\\\1", text, flags=re.IGNORECASE)


def pick_calls(total: int, *, transcripts: str, max_calls: int | None, fit: int) -> list[int]:
    """The calls (by number) of a transcript of `total` calls that a report holds: none, the first `max_calls`
    (all), or an even sample of `max_calls` or, by default, `fit` calls (sample).

    >>> pick_calls(10, transcripts="sample", max_calls=None, fit=4)
    [0, 2, 5, 7]
    >>> pick_calls(10, transcripts="all", max_calls=3, fit=4), pick_calls(10, transcripts="none", max_calls=3, fit=4)
    ([0, 1, 2], [])
    """
    if transcripts == "none":
        return []
    if transcripts == "all":
        return list(range(total if max_calls is None else min(total, max_calls)))
    keep = min(total, fit if max_calls is None else max_calls)
    return [j * total // keep for j in range(keep)] if keep else []


def _left_out_note(run: Path, file: str, held: int, total: int, transcripts: str, size: int) -> str | None:
    """What a report's transcript section says when it holds fewer than every call."""
    if held == total:
        return None
    how = f"sandbox report {run} --transcripts all"
    if transcripts == "none":
        kept = f"This report holds none of the {total:,} calls of {file}"
    elif transcripts == "sample":
        kept = f"This report holds {held:,} of the {total:,} calls of {file}, an even sample (about one in {total // max(held, 1):,})"
    else:
        kept = f"This report holds the first {held:,} of the {total:,} calls of {file}"
    return f"{kept}. To include every call: {how} (about {size / 1e6:.0f} MB more); sandbox view {run.parent} shows them all."


def report_data(
    run: Path, *, transcripts: str = "sample", max_calls: int | None = None, budget: int = CALL_BUDGET
) -> dict[str, Any]:
    """What a report embeds: the run's page (figures inline) and the calls of its transcripts it keeps
    (`pick_calls`, a default sample sized to `budget` bytes; each transcript section gets a `note` when calls were
    left out, and `held`/`total`)."""
    if transcripts not in TRANSCRIPTS:
        raise UsageError(f"--transcripts {transcripts}: choose one of {', '.join(TRANSCRIPTS)}")
    if max_calls is not None and max_calls < 0:
        raise UsageError(f"--max-calls {max_calls}: a count of calls, 0 or more")
    run = run.resolve()
    root = run.parent
    page = run_json(root, run, Catalog(root), link=lambda name: data_uri(run / name))
    calls: dict[str, Any] = {}
    reader = Transcripts(keep=1)
    sections = [s for s in page["sections"] if s["type"] == "transcripts"]
    for section in sections:
        file = run / section["file"]
        total = reader.count(file)
        size = file.stat().st_size
        fit = int(budget / len(sections) // max(size / max(total, 1), 1))
        picked = pick_calls(total, transcripts=transcripts, max_calls=max_calls, fit=fit)
        calls[section["file"]] = reader.rows(file, picked)
        section["held"], section["total"] = len(picked), total
        section["note"] = _left_out_note(run, section["file"], len(picked), total, transcripts, size)
    return {"run": page, "transcripts": calls}


def build_report(
    run: Path | str,
    out: Path | str,
    *,
    transcripts: str = "sample",
    max_calls: int | None = None,
    open_it: bool = False,
) -> Report:
    """Write the run directory `run`'s page to `out` (one HTML file) and return what was written; `UsageError` when
    `run` is not a run directory or an option is out of range. `transcripts` and `max_calls`: which calls it holds
    (`pick_calls`). With `open_it`, open it in the default browser."""
    run, out = Path(run), Path(out)
    if not run.is_dir() or not is_run_dir(run):
        raise UsageError(f"{run} is not a run directory (no scenario.yaml, run.json or summary.json)")
    if out.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"--out {out}: a report is an .html file")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: the folder {out.parent} does not exist")
    embedded = report_data(run, transcripts=transcripts, max_calls=max_calls)
    html = _html(embedded)
    if len(html.encode()) > LIMIT_MB * 1_000_000 and transcripts == "sample" and max_calls is None:
        # the page itself (its tables, figures) took more than its share: a smaller sample keeps the limit
        calls = len(json.dumps(finite(embedded["transcripts"]), ensure_ascii=False, default=str).encode())
        room = LIMIT_MB * 1_000_000 * 0.98 - (len(html.encode()) - calls)
        embedded = report_data(run, transcripts=transcripts, budget=max(0, int(CALL_BUDGET * room / max(calls, 1))))
        html = _html(embedded)
    atomic_write_text(out, html)
    if open_it:
        webbrowser.open(out.resolve().as_uri())
    sections = [s for s in embedded["run"]["sections"] if s["type"] == "transcripts"]
    return Report(
        path=out,
        bytes=out.stat().st_size,
        calls=sum(s["held"] for s in sections),
        left_out=sum(s["total"] - s["held"] for s in sections),
        transcripts=transcripts,
    )


@functools.cache
def _plotly() -> str:
    """Plotly's script, gzip-compressed, in base64 (1.9 MB of the 4.8)."""
    return base64.b64encode(gzip.compress(asset("plotly.min.js"), compresslevel=9, mtime=0)).decode()


@dataclass(frozen=True)
class NetworkView:
    """A run's network view for a notebook: shown inline (an `<iframe>` holding the page, `network_html`), or saved
    as an HTML file that opens offline (`save`)."""

    html: str
    height: int = 860

    def _repr_html_(self) -> str:
        import html

        return (
            f'<iframe srcdoc="{html.escape(self.html, quote=True)}" style="width:100%;height:{self.height}px;border:0" '
            'sandbox="allow-scripts"></iframe>'
        )

    def save(self, path: Path | str) -> Path:
        """Write the page to `path` (an .html file) and return it."""
        atomic_write_text(Path(path), self.html)
        return Path(path)


def network_html(run: Path | str) -> str | None:
    """The run directory's network view alone as one self-contained HTML page (the viewer's script, the network's
    scripts and data; no Plotly, about 300 KB and the data), for a notebook (`PopulationResult.network_view`);
    None when the run's page has no network view."""
    run = Path(run).resolve()
    page = run_json(run.parent, run, Catalog(run.parent))
    network = [s for s in page["sections"] if s["type"] == "network"]
    if not network:
        return None
    return _html({"run": {**page, "sections": network, "summary": {}}, "transcripts": {}}, plotly=False)


def _html(embedded: dict[str, Any], *, plotly: bool = True) -> str:
    """The report's HTML: the viewer's page with `embedded` (`report_data`), its script, styles and Plotly inline
    (`plotly=False`: a page without charts, a network view's)."""
    data = json.dumps(finite(embedded), ensure_ascii=False, default=str).replace("<", "\\u003c")
    # the scripts of the page's own sections (the network view's 260 KB), where it has them
    types = {s["type"] for s in embedded["run"]["sections"]}
    extra = [name for kind, names in SECTION_SCRIPTS.items() if kind in types for name in names]
    if not plotly:
        loader = ""
    else:
        loader = (
            "window.plotlyReady = (async () => {"
            f"const bytes = Uint8Array.from(atob('{_plotly()}'), (c) => c.charCodeAt(0));"
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
        + "".join(f"<script>{_script(asset(name).decode())}</script>" for name in extra)
        + f"<script>{_script(asset('app.js').decode())}</script>"
    )
    return page_html(report=head)
