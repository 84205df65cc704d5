"""The store a client uses when it is given none: the same database the server reads.

With the server extra installed (``scenarist[server]``: SQLAlchemy and aiosqlite), the
default is :class:`scenarist.store.sql.store.SqlStore` on ``SCENARIST_DATABASE_URL`` or
``$SCENARIST_HOME/scenarist.db``, the very file ``scenarist serve`` opens: a run made
without a server shows up in the dashboard with nothing else to set up. Without the extra
it is :class:`~scenarist.store.sqlite.LocalStore` (stdlib ``sqlite3``, ``local.db`` in
the same folder), so the core library needs no database driver.
"""

from __future__ import annotations

from scenarist.store.base import Store

__all__ = ["default_store", "shared_database_available"]


def shared_database_available() -> bool:
    """Whether the server's database layer can be used (its extra is installed)."""
    try:
        import aiosqlite  # noqa: F401
        import sqlalchemy  # noqa: F401
    except ImportError:
        return False
    return True


def default_store() -> Store:
    """The server's database when its extra is installed, else the stdlib local store."""
    if shared_database_available():
        from scenarist.store.sql.store import SqlStore

        return SqlStore()
    from scenarist.store.sqlite import LocalStore

    return LocalStore()
