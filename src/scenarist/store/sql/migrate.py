"""Alembic, driven from code: the migrations ship inside the package (``migrations/``)
and run on the store's own connection, so no ``alembic.ini`` is needed.

``render_as_batch=True`` makes later ``ALTER``s work on SQLite (Alembic copies the table).
On PostgreSQL an advisory lock keeps two servers starting at once from racing.

Alembic is imported only to migrate: every command that opens the store first asks
:func:`is_current`, a plain read of Alembic's version table against
:data:`HEAD_REVISION`; importing Alembic and loading its scripts cost ~0.15-0.3 s of CPU a
command (``bench/replay_at_scale.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.engine import Connection
    from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = [
    "HEAD_REVISION",
    "MIGRATIONS_DIR",
    "alembic_config",
    "current_revision",
    "head_revision",
    "is_current",
    "upgrade",
]

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
HEAD_REVISION = "0010"
"""The newest migration in ``migrations/versions`` (a test checks it is Alembic's head):
raise it with each new migration."""
_LOCK_KEY = 5_317_001  # any constant: the advisory lock's name


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic config for our migrations, bound to ``connection`` (for ``env.py``)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str | None:
    """The latest migration shipped with this version of scenarist (Alembic's answer)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def _upgrade(connection: Connection, revision: str) -> None:
    from alembic import command

    if connection.dialect.name == "postgresql":
        connection.execute(text(f"SELECT pg_advisory_xact_lock({_LOCK_KEY})"))
    command.upgrade(alembic_config(connection), revision)


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Bring the database to ``revision`` (the latest by default), in one transaction."""
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade, revision)


async def is_current(engine: AsyncEngine) -> bool:
    """Whether the database is at :data:`HEAD_REVISION`: one row in Alembic's version
    table, that revision. ``False`` when the query fails (no version table: a new
    database) or reads anything else (an older schema, a newer scenarist's): then
    :func:`upgrade` runs and migrates, or refuses, as it would have. An error opening the
    connection is raised, as :func:`upgrade` would raise it."""
    async with engine.connect() as connection:
        try:
            found = (
                await connection.execute(text("SELECT version_num FROM alembic_version"))
            ).all()
        except DBAPIError:
            return False
    return len(found) == 1 and found[0][0] == HEAD_REVISION


def _current(connection: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


async def current_revision(engine: AsyncEngine) -> str | None:
    """The revision the database is at (``None`` before the first migration)."""
    async with engine.connect() as connection:
        return await connection.run_sync(_current)
