"""Projects: a ``projects`` table (``default`` in it); ``project`` on runs, scenario
results, traces and scenario items ("default" for every existing row);
``api_keys.projects`` (``NULL``: every project); the indexes of the per-project lists.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from scenarist.store.sql.models import UTCDateTime

revision = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None

_SCOPED = ("runs", "scenario_results", "traces", "scenario_items")
_INDEXES = {
    "ix_runs_project_sort_at_run_id": ("runs", ["project", "sort_at", "run_id"]),
    "ix_scenario_results_project_scenario_name_sort_at": (
        "scenario_results",
        ["project", "scenario_name", "sort_at"],
    ),
    "ix_traces_project_sort_at_trace_id": ("traces", ["project", "sort_at", "trace_id"]),
    "ix_scenario_items_project_scenario_name_position": (
        "scenario_items",
        ["project", "scenario_name", "position"],
    ),
}


def upgrade() -> None:
    projects = op.create_table(
        "projects",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_projects"),
    )
    op.bulk_insert(projects, [{"name": "default", "created_at": datetime.now(UTC)}])
    for table in _SCOPED:
        with op.batch_alter_table(table) as batch:
            batch.add_column(
                sa.Column("project", sa.String(64), server_default="default", nullable=False)
            )
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("projects", sa.Text(), nullable=True))
    for name, (table, columns) in _INDEXES.items():
        op.create_index(name, table, columns)


def downgrade() -> None:
    for name, (table, _) in _INDEXES.items():
        op.drop_index(name, table_name=table)
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("projects")
    for table in _SCOPED:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("project")
    op.drop_table("projects")
