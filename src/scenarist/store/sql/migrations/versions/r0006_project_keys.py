"""Projects are tenants: ``project`` leads the primary key of runs, scenario results,
check results, traces, scenario items and snapshots, so an id is unique per project.
Check results and snapshots get the column (a check result takes its scenario result's
project; every existing snapshot goes to ``default``); the child tables' foreign keys
carry the project; the ``project`` columns lose their ``default`` server default (a write
must name its project). Items and snapshots are looked up by ``(project, trace_id)``.

A scenario result whose project differs from its run's (a Veval scenario run posted by
one project with another project's run id, before this revision) belonged to no run of
its own project: it is deleted with its check results, so it no longer shows in the
other project's run.

On SQLite each table is rebuilt (Alembic's batch mode); the order is children first, so
no table is ever dropped while another table's foreign key still refers to it (a rebuild
drops the old table, which with foreign keys on would cascade to the children).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None

_PROJECT = sa.String(64)


def _project_column(batch: object) -> None:
    batch.alter_column(  # type: ignore[attr-defined]
        "project", existing_type=_PROJECT, existing_nullable=False, server_default=None
    )


def upgrade() -> None:
    # 1. scenario results written into another project's run: not that run's, not kept
    op.execute(
        "DELETE FROM check_results WHERE EXISTS (SELECT 1 FROM scenario_results s, runs r "
        "WHERE s.run_id = check_results.run_id AND s.position = check_results.position "
        "AND r.run_id = s.run_id AND r.project <> s.project)"
    )
    op.execute(
        "DELETE FROM scenario_results WHERE project <> "
        "(SELECT r.project FROM runs r WHERE r.run_id = scenario_results.run_id)"
    )
    # 2. the new columns, filled
    with op.batch_alter_table("check_results") as batch:
        batch.add_column(sa.Column("project", _PROJECT, server_default="default", nullable=False))
    op.execute(
        "UPDATE check_results SET project = (SELECT s.project FROM scenario_results s "
        "WHERE s.run_id = check_results.run_id AND s.position = check_results.position)"
    )
    with op.batch_alter_table("snapshots") as batch:
        batch.add_column(sa.Column("project", _PROJECT, server_default="default", nullable=False))
    # 3. children first: their old foreign keys go, their keys lead with the project
    with op.batch_alter_table("check_results") as batch:
        batch.drop_constraint("fk_check_results_run_id_scenario_results", type_="foreignkey")
        batch.drop_constraint("pk_check_results", type_="primary")
        batch.create_primary_key(
            "pk_check_results", ["project", "run_id", "position", "step_index", "check_index"]
        )
        _project_column(batch)
    with op.batch_alter_table("scenario_results") as batch:
        batch.drop_constraint("fk_scenario_results_run_id_runs", type_="foreignkey")
        batch.drop_constraint("pk_scenario_results", type_="primary")
        batch.create_primary_key("pk_scenario_results", ["project", "run_id", "position"])
        _project_column(batch)
    for table, key in (("runs", "run_id"), ("traces", "trace_id"), ("scenario_items", "item_id")):
        with op.batch_alter_table(table) as batch:
            batch.drop_constraint(f"pk_{table}", type_="primary")
            batch.create_primary_key(f"pk_{table}", ["project", key])
            _project_column(batch)
    with op.batch_alter_table("snapshots") as batch:
        batch.drop_constraint("pk_snapshots", type_="primary")
        batch.create_primary_key("pk_snapshots", ["project", "name", "version"])
        _project_column(batch)
    # 4. the foreign keys again, now carrying the project (parents first)
    with op.batch_alter_table("scenario_results") as batch:
        batch.create_foreign_key(
            "fk_scenario_results_project_runs",
            "runs",
            ["project", "run_id"],
            ["project", "run_id"],
            ondelete="CASCADE",
        )
    with op.batch_alter_table("check_results") as batch:
        batch.create_foreign_key(
            "fk_check_results_project_scenario_results",
            "scenario_results",
            ["project", "run_id", "position"],
            ["project", "run_id", "position"],
            ondelete="CASCADE",
        )
    # 5. references to a trace are looked up within its project
    for table in ("scenario_items", "snapshots"):
        op.drop_index(f"ix_{table}_trace_id", table_name=table)
        op.create_index(f"ix_{table}_project_trace_id", table, ["project", "trace_id"])


def downgrade() -> None:
    """Back to global ids: only possible while no id is used by two projects (the
    primary key would refuse the duplicates); snapshots lose their project."""
    for table in ("scenario_items", "snapshots"):
        op.drop_index(f"ix_{table}_project_trace_id", table_name=table)
        op.create_index(f"ix_{table}_trace_id", table, ["trace_id"])
    with op.batch_alter_table("check_results") as batch:
        batch.drop_constraint("fk_check_results_project_scenario_results", type_="foreignkey")
        batch.drop_constraint("pk_check_results", type_="primary")
        batch.create_primary_key(
            "pk_check_results", ["run_id", "position", "step_index", "check_index"]
        )
        batch.drop_column("project")
    with op.batch_alter_table("scenario_results") as batch:
        batch.drop_constraint("fk_scenario_results_project_runs", type_="foreignkey")
        batch.drop_constraint("pk_scenario_results", type_="primary")
        batch.create_primary_key("pk_scenario_results", ["run_id", "position"])
        batch.alter_column("project", existing_type=_PROJECT, server_default="default")
    for table, key in (("runs", "run_id"), ("traces", "trace_id"), ("scenario_items", "item_id")):
        with op.batch_alter_table(table) as batch:
            batch.drop_constraint(f"pk_{table}", type_="primary")
            batch.create_primary_key(f"pk_{table}", [key])
            batch.alter_column("project", existing_type=_PROJECT, server_default="default")
    with op.batch_alter_table("snapshots") as batch:
        batch.drop_constraint("pk_snapshots", type_="primary")
        batch.create_primary_key("pk_snapshots", ["name", "version"])
        batch.drop_column("project")
    with op.batch_alter_table("scenario_results") as batch:
        batch.create_foreign_key(
            "fk_scenario_results_run_id_runs",
            "runs",
            ["run_id"],
            ["run_id"],
            ondelete="CASCADE",
        )
    with op.batch_alter_table("check_results") as batch:
        batch.create_foreign_key(
            "fk_check_results_run_id_scenario_results",
            "scenario_results",
            ["run_id", "position"],
            ["run_id", "position"],
            ondelete="CASCADE",
        )
