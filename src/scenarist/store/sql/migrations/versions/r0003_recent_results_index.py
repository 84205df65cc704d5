"""An index on ``scenario_results.sort_at``: the dashboard overview reads the results of
the newest runs (its flaky and newly broken scenarios) by time, not by scenario name.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


# A plain CREATE INDEX on both back ends: nothing here needs SQLite's table copy.
def upgrade() -> None:
    op.create_index("ix_scenario_results_sort_at", "scenario_results", ["sort_at"])


def downgrade() -> None:
    op.drop_index("ix_scenario_results_sort_at", table_name="scenario_results")
