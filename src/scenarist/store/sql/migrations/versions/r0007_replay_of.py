"""``traces.replay_of``: the trace a replay replayed (its ``metadata.replay_of``), indexed
by ``(project, replay_of, sort_at)``, so the trace page lists a trace's replays with one
range read instead of a scan of every trace's document. Existing replays get it from
their stored document.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None

_BATCH = 500


def upgrade() -> None:
    with op.batch_alter_table("traces") as batch:
        batch.add_column(sa.Column("replay_of", sa.String(200), nullable=True))
    op.create_index(
        "ix_traces_project_replay_of_sort_at", "traces", ["project", "replay_of", "sort_at"]
    )
    traces = sa.table(
        "traces",
        sa.column("project", sa.String),
        sa.column("trace_id", sa.String),
        sa.column("is_replay", sa.Boolean),
        sa.column("document", sa.Text),
        sa.column("replay_of", sa.String),
    )
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(traces.c.project, traces.c.trace_id, traces.c.document).where(
            traces.c.is_replay == sa.true()
        )
    ).all()
    updates = []
    for project, trace_id, document in rows:
        try:
            original = (json.loads(document).get("metadata") or {}).get("replay_of")
        except (ValueError, AttributeError):
            continue
        if isinstance(original, str) and 0 < len(original) <= 200:
            updates.append({"p": project, "t": trace_id, "r": original})
    statement = (
        traces.update()
        .where(traces.c.project == sa.bindparam("p"), traces.c.trace_id == sa.bindparam("t"))
        .values(replay_of=sa.bindparam("r"))
    )
    for start in range(0, len(updates), _BATCH):
        connection.execute(statement, updates[start : start + _BATCH])


def downgrade() -> None:
    op.drop_index("ix_traces_project_replay_of_sort_at", table_name="traces")
    with op.batch_alter_table("traces") as batch:
        batch.drop_column("replay_of")
