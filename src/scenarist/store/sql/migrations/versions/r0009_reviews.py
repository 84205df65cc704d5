"""``reviews``: people's reviews of scenario results (an expected failure with its expiry,
a comment, a verdict override), one row per change, never updated nor deleted.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from scenarist.store.sql.models import UTCDateTime

revision = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "reviews",
        sa.Column("project", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(200), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("review_id", sa.String(32), nullable=False),
        sa.Column("scenario_name", sa.String(), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("verdict", sa.String(16), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("expires_at", UTCDateTime(), nullable=True),
        sa.Column("reviewer", sa.String(200), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("project", "run_id", "position", "review_id", name="pk_reviews"),
    )


def downgrade() -> None:
    op.drop_table("reviews")
