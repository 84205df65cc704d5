"""Old import path of the local store. ``LocalStore`` is now the SQL store on a SQLite
file (``LocalStore(path)`` is ``SqlStore(path)``); the stdlib store it named is gone and
an existing ``local.db`` is imported once (see :mod:`scenarist.store._legacy`)."""

from __future__ import annotations

from pathlib import Path

from scenarist.store.location import scenarist_home
from scenarist.store.sql.store import SqlStore as LocalStore

__all__ = ["LocalStore", "default_store_path"]


def default_store_path() -> Path:
    """``$SCENARIST_HOME/scenarist.db``: the default database file."""
    return scenarist_home() / "scenarist.db"
