"""Alembic's entry point for our migrations: run on the connection the store passes in
(see :mod:`scenarist.store.sql.migrate`); there is no ``alembic.ini`` and no offline mode."""

from __future__ import annotations

from alembic import context

from scenarist.store.sql.models import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError(
        "scenarist's migrations run through scenarist.store.admin.db_upgrade (or the server "
        "at start), not the alembic command line"
    )
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=True,
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
