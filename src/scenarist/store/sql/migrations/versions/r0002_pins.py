"""Pins for retention: ``runs.pinned`` and ``traces.pinned`` (false for existing rows).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    for table in ("runs", "traces"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(
                sa.Column("pinned", sa.Boolean(), server_default=sa.false(), nullable=False)
            )


def downgrade() -> None:
    for table in ("runs", "traces"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("pinned")
