"""Alembic, driven from code: the migrations ship inside the package (``migrations/``)
and run on the store's own connection, so no ``alembic.ini`` is needed.

``render_as_batch=True`` makes later ``ALTER``s work on SQLite (Alembic copies the table).
On PostgreSQL an advisory lock keeps two servers starting at once from racing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection
    from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["MIGRATIONS_DIR", "alembic_config", "current_revision", "head_revision", "upgrade"]

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_LOCK_KEY = 5_317_001  # any constant: the advisory lock's name


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic config for our migrations, bound to ``connection`` (for ``env.py``)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str | None:
    """The latest migration shipped with this version of scenarist."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def _upgrade(connection: Connection, revision: str) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text(f"SELECT pg_advisory_xact_lock({_LOCK_KEY})"))
    command.upgrade(alembic_config(connection), revision)


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Bring the database to ``revision`` (the latest by default), in one transaction."""
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade, revision)


def _current(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


async def current_revision(engine: AsyncEngine) -> str | None:
    """The revision the database is at (``None`` before the first migration)."""
    async with engine.connect() as connection:
        return await connection.run_sync(_current)
