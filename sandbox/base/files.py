"""Reading the files a command is given: scenario YAML, a run directory's JSON, CSV and text, with errors that
name the file.

A file that is missing, not UTF-8 text, or not what its name says (JSON,
CSV) is bad input: `UnreadableFileError` (exit 2) names it and says why,
instead of a traceback from deep inside a reader.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from sandbox.base.errors import ScenarioError, UsageError

__all__ = ["UnreadableFileError", "read_csv", "read_json", "read_jsonl", "read_text", "read_yaml"]


class UnreadableFileError(UsageError):
    """A file a command reads is missing, not text, or not in its format. Nothing was written."""

    def __init__(self, path: Path | str, why: str) -> None:
        self.path, self.why = Path(path), why
        super().__init__(f"{path}: {why}")

    def __reduce__(self) -> tuple[Any, ...]:  # picklable, for a sweep's worker processes
        return (type(self), (str(self.path), self.why))


def read_text(path: Path | str) -> str:
    """The file's text (UTF-8)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise UnreadableFileError(path, f"not UTF-8 text (byte {error.start}: {error.reason})") from None
    except OSError as error:
        raise UnreadableFileError(path, f"cannot read the file: {error.strerror or error}") from None


def read_json(path: Path | str) -> Any:
    """The file's JSON."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UnreadableFileError(
            path, f"not valid JSON: line {error.lineno}, column {error.colno}: {error.msg}"
        ) from None
    except RecursionError:
        raise UnreadableFileError(path, "not valid JSON: nested too deeply") from None


def read_jsonl(path: Path | str) -> list[Any]:
    """The file's JSON lines (blank lines skipped)."""
    rows = []
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except (json.JSONDecodeError, RecursionError) as error:
                raise UnreadableFileError(path, f"line {number} is not valid JSON: {error}") from None
    return rows


def read_csv(path: Path | str, **kwargs: Any) -> Any:
    """The file as a pandas DataFrame (`kwargs` go to `pandas.read_csv`)."""
    import pandas as pd

    if not Path(path).is_file():
        raise UnreadableFileError(path, "no such file")
    try:
        return pd.read_csv(path, **kwargs)
    except UnicodeDecodeError as error:
        raise UnreadableFileError(path, f"not UTF-8 text (byte {error.start}: {error.reason})") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise UnreadableFileError(path, f"not a CSV table: {error}") from None
    except OSError as error:
        raise UnreadableFileError(path, f"cannot read the file: {error.strerror or error}") from None


def read_yaml(path: str | Path) -> Any:
    """The parsed YAML of a scenario file; `ScenarioError` naming the file when it is unreadable, not UTF-8 text,
    not YAML, or nested too deeply for the parser."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ScenarioError(str(path), [("", f"not UTF-8 text (byte {error.start}: {error.reason})")]) from None
    except OSError as error:
        raise ScenarioError(str(path), [("", f"cannot read the file: {error.strerror or error}")]) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise ScenarioError(str(path), [("", f"not valid YAML: {where}{problem}")]) from None
    except RecursionError:  # the parser recurses once per level of nesting
        raise ScenarioError(str(path), [("", "nested too deeply to read (thousands of levels)")]) from None
