"""One answer to "which database", and how commands name it."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarist.store.location import database_label, resolve_database_url


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SCENARIST_DATABASE_URL", raising=False)


def test_the_default_is_scenarist_db_under_the_home(tmp_path: Path) -> None:
    expected = (tmp_path / "home" / "scenarist.db").resolve()
    assert resolve_database_url() == f"sqlite+aiosqlite:///{expected}"
    assert database_label() == str(expected)


def test_the_environment_then_an_explicit_url_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCENARIST_DATABASE_URL", "postgres://ci@db/runs")
    assert resolve_database_url() == "postgresql+asyncpg://ci@db/runs"
    assert resolve_database_url(tmp_path / "x.db") == f"sqlite+aiosqlite:///{tmp_path / 'x.db'}"


def test_a_relative_file_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_database_url("runs.db") == f"sqlite+aiosqlite:///{tmp_path / 'runs.db'}"
    assert database_label("sqlite:///runs.db") == "runs.db"


def test_labels_never_show_a_password() -> None:
    label = database_label("postgresql://ci:s3cret@db.internal:5432/scenarist")
    assert label == "postgresql://ci:***@db.internal:5432/scenarist"
    assert "s3cret" not in label
    assert database_label("postgresql://ci@db/x") == "postgresql://ci@db/x"
