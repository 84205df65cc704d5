"""The store a client uses when it is given none: the database ``scenarist serve`` reads.

:class:`~scenarist.store.sql.store.SqlStore` on the one answer to "which database"
(:mod:`scenarist.store.location`: ``SCENARIST_DATABASE_URL``, else
``$SCENARIST_HOME/scenarist.db``), so a run made without a server shows up in the
dashboard with nothing else to set up, and ``scenarist replay``, ``traces`` and ``items``
see what ``Client()`` recorded. SQLAlchemy is imported here, on first use, never by
``import scenarist``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scenarist.store.sql.store import SqlStore

__all__ = ["default_store"]


def default_store(project: str | None = None) -> SqlStore:
    """A :class:`SqlStore` on the default database (engines are shared per event loop,
    so making one is cheap), on ``project`` (default ``SCENARIST_PROJECT``, else
    ``"default"``)."""
    from scenarist.store.sql.store import SqlStore

    return SqlStore(project=project)
