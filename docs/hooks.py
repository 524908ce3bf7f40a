"""MkDocs hook: the site's front page is README.md, whose links point into docs/ so that they work on GitHub.

docs/index.md holds one snippet line, `--8<-- "README.md"`. MkDocs calls `on_page_markdown` before the
Markdown extensions run, so the snippet is not yet expanded when the hook sees the page, and MkDocs checks the
links after it is: README's `[Quick start](docs/quickstart.md)` would point at docs/docs/quickstart.md. On the
index page only, the hook therefore includes README.md where the snippet line stands (what pymdownx.snippets
would do) and rewrites its links `](docs/` to `](`. Every other page is left to the snippets extension.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_DOCS_LINK = re.compile(r"\]\(docs/")
_SNIPPET = re.compile(r'^--8<-- "(?P<path>[^"]+\.md)"\s*$', re.MULTILINE)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """On the index page: include the Markdown snippets it names, then rewrite `](docs/` to `](`."""
    if page.file.src_uri != "index.md":
        return markdown
    root = Path(config["config_file_path"]).parent

    def include(match: re.Match[str]) -> str:
        return (root / match["path"]).read_text(encoding="utf-8")

    return _DOCS_LINK.sub("](", _SNIPPET.sub(include, markdown))
