"""Old import path of :class:`~scenarist.store.sql.SqlStore` (kept as a thin alias)."""

from scenarist.store.sql.store import SqlStore

__all__ = ["SqlStore"]
