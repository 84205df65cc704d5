"""Scenario identity and subset runs: ``scenario_results.suite_name`` (the run's name, so a
scenario is known by project, suite and name; indexed ``(project, scenario_name,
suite_name, sort_at)``) and ``runs.subset`` (the run ran part of its suite). Existing rows
get both: the suite from their run, ``subset`` from the counts of the suite's earlier runs
(the rule ingestion uses, ``scenarist.store.sql._subset``, copied here so this migration
keeps meaning what it meant).

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None

_INDEX = "ix_scenario_results_project_scenario_name_suite_name_sort_at"
_BATCH = 500

# Plain ALTER TABLE, not a batch (see 0008): a batch copies ``scenario_results`` and
# dropping the old copy would cascade to ``check_results``.


def _is_subset(total: int, earlier: list[int]) -> bool:
    """Fewer scenarios than the most common count of the newest 10 earlier full runs."""
    recent = earlier[:10]
    if not recent:
        return False
    usual = max(recent, key=lambda n: (recent.count(n), n))
    return total < usual


def upgrade() -> None:
    op.add_column(
        "scenario_results", sa.Column("suite_name", sa.String(), server_default="", nullable=False)
    )
    op.add_column(
        "runs", sa.Column("subset", sa.Boolean(), server_default=sa.false(), nullable=False)
    )
    runs = sa.table(
        "runs",
        sa.column("project", sa.String),
        sa.column("run_id", sa.String),
        sa.column("kind", sa.String),
        sa.column("name", sa.String),
        sa.column("sort_at", sa.DateTime),
        sa.column("total_count", sa.Integer),
        sa.column("subset", sa.Boolean),
    )
    results = sa.table(
        "scenario_results",
        sa.column("project", sa.String),
        sa.column("run_id", sa.String),
        sa.column("suite_name", sa.String),
    )
    connection = op.get_bind()
    suite_of = (
        sa.select(sa.func.coalesce(runs.c.name, ""))
        .where(
            runs.c.project == results.c.project,
            runs.c.run_id == results.c.run_id,
            runs.c.kind == "suite",
        )
        .scalar_subquery()
    )
    connection.execute(results.update().values(suite_name=sa.func.coalesce(suite_of, "")))
    rows = connection.execute(
        sa.select(runs.c.project, runs.c.run_id, runs.c.name, runs.c.total_count)
        .where(runs.c.kind == "suite", runs.c.name.is_not(None))
        .order_by(runs.c.project, runs.c.name, runs.c.sort_at, runs.c.run_id)
    ).all()
    earlier: dict[tuple[str, str], list[int]] = {}
    updates = []
    for project, run_id, name, total in rows:
        counts = earlier.setdefault((project, name), [])
        if _is_subset(total, list(reversed(counts))):
            updates.append({"p": project, "r": run_id})
        else:
            counts.append(total)  # a subset is not part of the suite's usual set
    statement = (
        runs.update()
        .where(runs.c.project == sa.bindparam("p"), runs.c.run_id == sa.bindparam("r"))
        .values(subset=True)
    )
    for start in range(0, len(updates), _BATCH):
        connection.execute(statement, updates[start : start + _BATCH])
    op.create_index(
        _INDEX, "scenario_results", ["project", "scenario_name", "suite_name", "sort_at"]
    )


def downgrade() -> None:
    op.drop_index(_INDEX, table_name="scenario_results")
    op.drop_column("runs", "subset")
    op.drop_column("scenario_results", "suite_name")
