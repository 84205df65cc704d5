"""The first schema: runs, scenario and check results, traces, items, snapshots, API keys.

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from scenarist.store.sql.models import UTCDateTime

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("key_id", sa.String(64), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("scopes", sa.String(200), nullable=False),
        sa.Column("name", sa.String(200), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("revoked_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("key_id", name="pk_api_keys"),
    )
    op.create_table(
        "runs",
        sa.Column("run_id", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("name", sa.String(), nullable=True),
        sa.Column("sort_at", UTCDateTime(), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=True),
        sa.Column("ended_at", UTCDateTime(), nullable=True),
        sa.Column("ingested_at", UTCDateTime(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        sa.Column("total_count", sa.Integer(), nullable=False),
        sa.Column("passed_count", sa.Integer(), nullable=False),
        sa.Column("failed_count", sa.Integer(), nullable=False),
        sa.Column("errored_count", sa.Integer(), nullable=False),
        sa.Column("skipped_count", sa.Integer(), nullable=False),
        sa.Column("pass_rate", sa.Float(), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("tokens_in", sa.Integer(), nullable=False),
        sa.Column("tokens_out", sa.Integer(), nullable=False),
        sa.Column("complete", sa.Boolean(), nullable=False),
        sa.Column("git_commit", sa.String(100), nullable=True),
        sa.Column("git_branch", sa.String(), nullable=True),
        sa.Column("format_version", sa.Integer(), nullable=True),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("extra", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("run_id", name="pk_runs"),
    )
    op.create_index("ix_runs_sort_at_run_id", "runs", ["sort_at", "run_id"])
    op.create_index("ix_runs_kind_name_sort_at", "runs", ["kind", "name", "sort_at"])
    op.create_table(
        "scenario_results",
        sa.Column("run_id", sa.String(200), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("scenario_name", sa.String(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("sort_at", UTCDateTime(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("tokens_in", sa.Integer(), nullable=False),
        sa.Column("tokens_out", sa.Integer(), nullable=False),
        sa.Column("tags", sa.Text(), nullable=False),
        sa.Column("runs_executed", sa.Integer(), nullable=False),
        sa.Column("flaky", sa.Boolean(), nullable=False),
        sa.Column("check_count", sa.Integer(), nullable=False),
        sa.Column("no_checks", sa.Boolean(), nullable=False),
        sa.Column("document", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.run_id"],
            name="fk_scenario_results_run_id_runs",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "position", name="pk_scenario_results"),
    )
    op.create_index(
        "ix_scenario_results_scenario_name_sort_at",
        "scenario_results",
        ["scenario_name", "sort_at"],
    )
    op.create_table(
        "check_results",
        sa.Column("run_id", sa.String(200), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("step_index", sa.Integer(), nullable=False),
        sa.Column("check_index", sa.Integer(), nullable=False),
        sa.Column("scenario_name", sa.String(), nullable=False),
        sa.Column("check_kind", sa.String(200), nullable=True),
        sa.Column("check_name", sa.String(), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("sort_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id", "position"],
            ["scenario_results.run_id", "scenario_results.position"],
            name="fk_check_results_run_id_scenario_results",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "run_id", "position", "step_index", "check_index", name="pk_check_results"
        ),
    )
    op.create_index(
        "ix_check_results_scenario_name_check_name_sort_at",
        "check_results",
        ["scenario_name", "check_name", "sort_at"],
    )
    op.create_table(
        "traces",
        sa.Column("trace_id", sa.String(200), nullable=False),
        sa.Column("agent_name", sa.String(), nullable=True),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("sort_at", UTCDateTime(), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=True),
        sa.Column("ended_at", UTCDateTime(), nullable=True),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("span_count", sa.Integer(), nullable=False),
        sa.Column("is_replay", sa.Boolean(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("trace_id", name="pk_traces"),
    )
    op.create_index("ix_traces_sort_at_trace_id", "traces", ["sort_at", "trace_id"])
    op.create_index("ix_traces_agent_name_sort_at", "traces", ["agent_name", "sort_at"])
    op.create_index("ix_traces_status_sort_at", "traces", ["status", "sort_at"])
    op.create_table(
        "scenario_items",
        sa.Column("item_id", sa.String(64), nullable=False),
        sa.Column("scenario_name", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=True),
        sa.Column("trace_id", sa.String(200), nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("item_id", name="pk_scenario_items"),
    )
    op.create_index(
        "ix_scenario_items_scenario_name_position",
        "scenario_items",
        ["scenario_name", "position"],
    )
    op.create_index("ix_scenario_items_trace_id", "scenario_items", ["trace_id"])
    op.create_table(
        "snapshots",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("trace_id", sa.String(200), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("pinned", sa.Boolean(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("name", "version", name="pk_snapshots"),
    )
    op.create_index("ix_snapshots_trace_id", "snapshots", ["trace_id"])


def downgrade() -> None:
    for table in (
        "snapshots",
        "scenario_items",
        "traces",
        "check_results",
        "scenario_results",
        "runs",
        "api_keys",
    ):
        op.drop_table(table)
