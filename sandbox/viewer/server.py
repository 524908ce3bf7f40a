"""The viewer's web server: read-only, serving the runs under one folder and the viewer's own assets, no network.

Routes (all GET):

* `/`: the viewer (one page; `static/app.js` draws the list, the run pages and the transcripts);
* `/static/app.js`, `/static/app.css`, `/static/plotly.min.js` (from the installed `plotly` package), the network
  view's `network.js` with its vendored libraries (`graphology.umd.min.js`, `sigma.min.js`), and `sweep.js`;
* `/api/runs`: every run's row (`sandbox.viewer.catalog`);
* `/api/run?path=P`: a run's row and its page's sections (`sandbox.viewer.page`);
* `/api/transcripts?path=P&file=F&offset=&limit=&run=&epoch=&agent=&role=&text=`: one page of calls;
* `/files/P`: a file inside the runs folder: an image shown, any other file downloaded, each under a sandboxing
  content security policy (`FILES_CSP`: no script, no form, its own origin).

Safe by construction: a path is taken relative to the runs folder and refused (404) when it is absolute, holds
`..`, or resolves (symlinks followed) outside the folder; nothing writes; the browser side shows every text through
`textContent`. A run page is read when asked, so a run in progress shows its latest files; the page polls.
"""

from __future__ import annotations

import ipaddress
import json
import math
import socket
import threading
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Route

from sandbox.base.errors import SandboxError, UsageError
from sandbox.core import kinds
from sandbox.core.run_dir import SUMMARY
from sandbox.viewer.catalog import Catalog
from sandbox.viewer.page import is_run_dir, run_page
from sandbox.viewer.transcripts import FILTERS, MEMORY_MB, Transcripts

__all__ = [
    "Running",
    "asset",
    "bind",
    "create_app",
    "finite",
    "hosts_for",
    "inside",
    "is_local",
    "page_html",
    "run_json",
    "to_json",
    "url_of",
]

ASSETS = ("app.js", "app.css", "network.js", "graphology.umd.min.js", "sigma.min.js", "sweep.js")
# the scripts of the sections that have their own, by section type: the network view's with its libraries, vendored
# from the npm registry with their licenses (static/VENDORED.md), and the sweep chart's
SECTION_SCRIPTS = {"network": ("graphology.umd.min.js", "sigma.min.js", "network.js"), "sweep": ("sweep.js",)}
VENDORED = {  # sha256 of each vendored file, as static/VENDORED.md says where it came from
    "sigma.min.js": "be6f790da9c1856765b1c430de3b1aac50433223361870edb3097a9868218a88",
    "graphology.umd.min.js": "dc337efa23903f61e064c8e7e7f93a429e6855dccfc2458802b4ed30c621c087",
}
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
# The page may load only what this server (or the report itself) holds: no request leaves the machine.
CSP = (
    "default-src 'none'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; connect-src 'self'; font-src 'self' data:; form-action 'none'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
# A run's files (`/files/`) are the run's, not the viewer's: each is served in a sandbox (a unique origin, no
# script, no form), and only images open in the browser; any other file (an HTML page, a table) is downloaded.
FILES_CSP = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; form-action 'none'"
INLINE = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg"}


def asset(name: str) -> bytes:
    """One of the viewer's assets: `app.js`, `app.css`, `index.html`, or `plotly.min.js` from `plotly`."""
    if name == "plotly.min.js":
        return resources.files("plotly").joinpath("package_data", "plotly.min.js").read_bytes()
    return resources.files("sandbox.viewer").joinpath("static", name).read_bytes()


def inside(root: Path, relative: str) -> Path | None:
    """`root / relative` when `relative` is a relative path without `..` that stays inside `root` once every
    symlink is resolved; None otherwise (the server answers 404)."""
    if not isinstance(relative, str) or "\\" in relative or "\x00" in relative:
        return None
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts:
        return None
    target = (root / pure).resolve()
    return target if target == root.resolve() or target.is_relative_to(root.resolve()) else None


def is_local(host: str) -> bool:
    """Whether `host` is a loopback address or name (the server warns when it listens beyond)."""
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def page_html(*, report: str | None = None) -> str:
    """The viewer's HTML: with `report` (a `<script>` block of the report's data and inline assets) a
    self-contained file, else a shell that loads the assets from this server."""
    html = asset("index.html").decode()
    if report is None:
        head = (
            '<link rel="stylesheet" href="/static/app.css">'
            '<script src="/static/plotly.min.js"></script>'
            + "".join(f'<script src="/static/{name}"></script>' for names in SECTION_SCRIPTS.values() for name in names)
            + '<script src="/static/app.js" defer></script>'
        )
        return html.replace("<!--HEAD-->", head)
    return html.replace("<!--HEAD-->", report)


def run_json(root: Path, path: Path, catalog: Catalog, link: Callable[[str], str] | None = None) -> dict[str, Any]:
    """A run's row, headline figures (`summary.json`'s) and rendered page: what `/api/run` answers and a report
    embeds. `link(name)`: the URL of a file of the run's (default: this server's `/files/`)."""
    relative = path.relative_to(root.resolve()).as_posix() if path != root.resolve() else "."
    base = "" if relative == "." else relative
    row = catalog.row(path)
    try:
        kind = kinds.get(row["kind"]) if row.get("kind") else None
    except SandboxError:  # a kind not installed here: the default page
        kind = None
    file = inside(root, f"{base}/{SUMMARY}" if base else SUMMARY)  # not through a symlink out of the folder
    try:
        summary = json.loads(file.read_text(encoding="utf-8")) if file is not None and file.is_file() else {}
    except (OSError, ValueError, RecursionError):  # the row says why (corrupt)
        summary = {}
    link = link or (lambda name: "/files/" + quote(f"{base + '/' if base else ''}{name}"))
    return {
        "row": row,
        "summary": summary if isinstance(summary, dict) else {},
        "sections": run_page(path, base=base, kind=kind, link=link),
    }


def finite(value: Any) -> Any:
    """`value` with every NaN or infinity as None (JSON has neither; a summary may hold a NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def to_json(content: Any) -> bytes:
    """`content` as the server sends it: NaN and infinities as null, every character past ASCII escaped (so a
    folder name that is not UTF-8, held as lone surrogates, is sent as `\\udcff`, never a 500)."""
    return json.dumps(finite(content), ensure_ascii=True, allow_nan=False, default=str, separators=(",", ":")).encode()


def hosts_for(host: str) -> list[str]:
    """The Host headers the server answers: this machine's names when it listens on loopback (a page elsewhere
    that points its own name at 127.0.0.1, DNS rebinding, is refused); any when it listens beyond."""
    if not is_local(host):
        return ["*"]
    return ["127.0.0.1", "localhost", "::1", "[::1]", host]


def create_app(root: Path | str, *, hosts: list[str] | None = None, transcript_memory_mb: int = MEMORY_MB) -> Starlette:
    """The viewer over the runs under `root` (read-only); `hosts`: the Host headers it answers (`hosts_for`);
    `transcript_memory_mb`: what the transcripts' indexes may hold (`sandbox.viewer.transcripts`)."""
    root = Path(root).resolve()
    catalog = Catalog(root)
    transcripts = Transcripts(max_bytes=transcript_memory_mb << 20)

    def respond(content: Any, status: int = 200) -> Response:
        return Response(to_json(content), status_code=status, media_type="application/json", headers=HEADERS)

    def missing() -> Response:
        return Response("not found", status_code=404, media_type="text/plain", headers=HEADERS)

    def run_path(request: Request) -> Path | None:
        path = inside(root, request.query_params.get("path", ""))
        return path if path is not None and path.is_dir() and is_run_dir(path) else None

    def index(request: Request) -> Response:
        return HTMLResponse(page_html(), headers={**HEADERS, "Content-Security-Policy": CSP})

    def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in (*ASSETS, "plotly.min.js"):
            return missing()
        media = "text/css" if name.endswith(".css") else "text/javascript"
        return Response(
            asset(name),
            media_type=media,
            headers={"Cache-Control": "max-age=3600", "X-Content-Type-Options": "nosniff"},
        )

    def runs(request: Request) -> Response:
        return respond({"root": str(root), "runs": catalog.rows()})

    def run(request: Request) -> Response:
        path = run_path(request)
        if path is None:
            return missing()
        try:
            return respond(run_json(root, path, catalog))
        except Exception as error:  # a run's files are not ours: one that cannot be read is shown, never a 500
            row = catalog.row(path)
            text = f"{type(error).__name__}: {str(error)[:300]}"
            return respond({"row": row, "summary": {}, "sections": [{"type": "error", "title": "", "text": text}]})

    def calls(request: Request) -> Response:
        path = run_path(request)
        file = inside(path, request.query_params.get("file", "transcripts.jsonl")) if path is not None else None
        if file is None or not file.is_file() or file.suffix != ".jsonl":
            return missing()
        query = request.query_params
        try:
            offset, limit = int(query.get("offset", 0)), int(query.get("limit", 50))
        except ValueError:
            return respond({"error": "offset and limit are whole numbers"}, 400)
        return respond(
            transcripts.query(
                file, offset=offset, limit=limit, text=query.get("text", ""), **{k: query.get(k) for k in FILTERS}
            )
        )

    def files(request: Request) -> Response:
        path = inside(root, request.path_params["path"])
        if path is None or not path.is_file():
            return missing()
        inline = path.suffix.lower() in INLINE
        return FileResponse(
            path,
            headers={
                **HEADERS,
                "Content-Security-Policy": FILES_CSP,
                "Content-Disposition": "inline" if inline else "attachment",
            },
        )

    routes = [
        Route("/", index),
        Route("/static/{name}", static),
        Route("/api/runs", runs),
        Route("/api/run", run),
        Route("/api/transcripts", calls),
        Route("/files/{path:path}", files),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=hosts or hosts_for("127.0.0.1"))]
    return Starlette(routes=routes, middleware=middleware)


def bind(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening socket on `host:port` (port 0: a free one); `UsageError` when it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise UsageError(f"--host {host} --port {port}: cannot listen there ({error.strerror})") from None
    sock.listen(128)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"


class Running:
    """A viewer served from a thread of this process (tests, benchmarks, notebooks): `.url`, then `.stop()`."""

    def __init__(self, root: Path | str, host: str = "127.0.0.1", port: int = 0) -> None:
        import uvicorn

        self.sock = bind(host, port)
        self.url = url_of(self.sock)
        app = create_app(root, hosts=hosts_for(host))
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and self.thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
