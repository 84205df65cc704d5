"""Which database: the one answer ``Client()``, every CLI command, the pytest plugin and
``scenarist serve`` share.

``SCENARIST_DATABASE_URL`` when it is set, else the SQLite file
``$SCENARIST_HOME/scenarist.db`` (``SCENARIST_HOME`` defaults to ``./.scenarist``). An
explicit URL (``Client(store=SqlStore(url))``, ``scenarist serve --database-url``) wins
over both. Plain URLs get their async driver (``sqlite://`` → aiosqlite,
``postgresql://`` → asyncpg) and a bare file path means a SQLite file, resolved to an
absolute path so that two processes in different folders never disagree about a relative
one. Standard library only: printing where a run went loads no database driver.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from scenarist._home import scenarist_home

__all__ = [
    "database_label",
    "default_database_url",
    "resolve_database_url",
]

_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
}


def default_database_url() -> str:
    """``sqlite+aiosqlite:///<absolute path of $SCENARIST_HOME/scenarist.db>``."""
    return f"sqlite+aiosqlite:///{(scenarist_home() / 'scenarist.db').resolve()}"


def resolve_database_url(url: str | os.PathLike[str] | None = None) -> str:
    """The async SQLAlchemy URL for ``url``, else ``SCENARIST_DATABASE_URL``, else the
    default file."""
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    url = url or os.environ.get("SCENARIST_DATABASE_URL") or None
    if url is None:
        return default_database_url()
    if "://" not in url:  # a file path
        return f"sqlite+aiosqlite:///{Path(url).resolve()}"
    scheme, rest = url.split("://", 1)
    return f"{_DRIVERS.get(scheme, scheme)}://{rest}"


def database_label(url: str | None = None) -> str:
    """How commands name the database they used: the file of a SQLite database, else the
    URL without its password (``postgresql://ci:***@db/scenarist``)."""
    resolved = resolve_database_url(url)
    scheme, _, rest = resolved.partition("://")
    if scheme.startswith("sqlite"):
        return rest[1:]  # sqlite:///relative.db, sqlite:////absolute.db
    parts = urlsplit(resolved)
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}:***@{host}"
    return urlunsplit((scheme.split("+", 1)[0], netloc, parts.path, parts.query, ""))
