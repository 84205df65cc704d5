"""Stores: where agent runs, scenario runs, scenario items and snapshots are kept.

``SqlStore`` (SQLite by default, PostgreSQL by URL) is the store for every local use;
``RemoteStore`` talks to a scenarist server; ``MemoryStore`` is for tests. The SQL and
remote stores load on first use, so ``import scenarist.store`` loads no database driver.
"""

from typing import TYPE_CHECKING

from scenarist._lazy import lazy_attributes
from scenarist.store.base import Store
from scenarist.store.memory import MemoryStore

if TYPE_CHECKING:
    from scenarist.store.remote import RemoteStore
    from scenarist.store.sql.store import SqlStore

__all__ = [
    "MemoryStore",
    "RemoteStore",
    "SqlStore",
    "Store",
]

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "RemoteStore": "scenarist.store.remote",
        "SqlStore": "scenarist.store.sql.store",
    },
)
