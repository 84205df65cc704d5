"""``scenario_results.repeats_passed`` / ``repeats_total`` / ``rate_verdict``: a scenario's
repeated runs (``--repeat``) as counts, and its verdict against a required pass rate, so
comparing two runs tests each scenario's pass counts (Fisher's exact test) without
loading its document. Existing rows keep ``NULL``: one run, counted from ``status``.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None


# Plain ALTER TABLE, not a batch: SQLite adds (and, from 3.35, drops) a nullable column in
# place, while a batch copies the table, and dropping the old copy would cascade to
# ``check_results`` (its foreign key deletes the checks of every scenario).


def upgrade() -> None:
    op.add_column("scenario_results", sa.Column("repeats_passed", sa.Integer(), nullable=True))
    op.add_column("scenario_results", sa.Column("repeats_total", sa.Integer(), nullable=True))
    op.add_column("scenario_results", sa.Column("rate_verdict", sa.String(16), nullable=True))


def downgrade() -> None:
    for column in ("rate_verdict", "repeats_total", "repeats_passed"):
        op.drop_column("scenario_results", column)
