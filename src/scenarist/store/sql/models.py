"""The tables (SQLAlchemy 2 declarative models). The migrations in ``migrations/`` create
exactly these; a test compares the two.

Every table keeps the full document it came from (``document``, compact JSON text) next
to the columns queries filter and sort on, so the API can return what was stored without
re-deriving it, and new queries need only a migration that adds a column and an index.
Times are stored in UTC without a zone (``UTCDateTime``), the same on both back ends.
``sort_at`` is the start time, or the time of ingestion when a run or trace has none, so
lists always have a total order (``sort_at``, then the id).

Projects are tenants (``docs/design/projects.md``): every row of runs, scenario results,
check results, traces, scenario items and snapshots has a ``project``, first in its
primary key, so ids are unique per project and one project's writes can never meet
another's rows. The column has no default: a write that forgets its project fails
instead of landing in ``default``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    TypeDecorator,
    false,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "ApiKeyRow",
    "Base",
    "CheckResultRow",
    "ProjectRow",
    "ReviewRow",
    "RevokedSessionRow",
    "RunRow",
    "ScenarioItemRow",
    "ScenarioResultRow",
    "SnapshotRow",
    "TraceRow",
    "UTCDateTime",
    "table_of",
]

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """Aware datetimes in, aware UTC datetimes out; stored as naive UTC."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value  # type: ignore[no-any-return]


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class ApiKeyRow(Base):
    """An API key: its public id, the SHA-256 of the whole key (never the key), scopes."""

    __tablename__ = "api_keys"

    key_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    key_hash: Mapped[str] = mapped_column(String(64))
    scopes: Mapped[str] = mapped_column(String(200))
    name: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    projects: Mapped[str | None] = mapped_column(Text)  # JSON list; NULL: every project


class ProjectRow(Base):
    """A project that has been written to (``default`` always exists): what the
    dashboard's project switcher lists, without scanning the runs."""

    __tablename__ = "projects"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class RevokedSessionRow(Base):
    """A dashboard session ended by ``POST /logout`` before its cookie expires: its
    cookie opens nothing any more. Kept until ``expires_at`` (then the cookie is dead
    anyway and the row is deleted)."""

    __tablename__ = "revoked_sessions"

    session_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (Index(None, "expires_at"),)


class RunRow(Base):
    """A suite run (from a run log) or a Veval-style scenario run (``kind``)."""

    __tablename__ = "runs"

    project: Mapped[str] = mapped_column(String(64), primary_key=True)
    run_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    name: Mapped[str | None] = mapped_column(String)
    sort_at: Mapped[datetime] = mapped_column(UTCDateTime())
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    ingested_at: Mapped[datetime] = mapped_column(UTCDateTime())
    duration_ms: Mapped[float | None] = mapped_column(Float)
    total_count: Mapped[int] = mapped_column(Integer)
    passed_count: Mapped[int] = mapped_column(Integer)
    failed_count: Mapped[int] = mapped_column(Integer)
    errored_count: Mapped[int] = mapped_column(Integer)
    skipped_count: Mapped[int] = mapped_column(Integer)
    pass_rate: Mapped[float | None] = mapped_column(Float)
    cost_usd: Mapped[float | None] = mapped_column(Float)
    tokens_in: Mapped[int] = mapped_column(Integer)
    tokens_out: Mapped[int] = mapped_column(Integer)
    complete: Mapped[bool] = mapped_column(Boolean)
    git_commit: Mapped[str | None] = mapped_column(String(100))
    git_branch: Mapped[str | None] = mapped_column(String)
    format_version: Mapped[int | None] = mapped_column(Integer)
    document: Mapped[str] = mapped_column(Text)
    extra: Mapped[str | None] = mapped_column(Text)
    pinned: Mapped[bool] = mapped_column(Boolean, server_default=false())
    subset: Mapped[bool] = mapped_column(Boolean, server_default=false())
    """The run ran part of its suite (a ``-k``/``--tag`` selection, or fewer scenarios than
    the suite's usual set), so it is no suite-wide point on a trend; migration 0010."""

    __table_args__ = (
        PrimaryKeyConstraint("project", "run_id"),
        Index(None, "sort_at", "run_id"),
        Index(None, "kind", "name", "sort_at"),
        Index(None, "project", "sort_at", "run_id"),
    )


class ScenarioResultRow(Base):
    """One scenario's result in one run (a Veval-style run has exactly one)."""

    __tablename__ = "scenario_results"

    project: Mapped[str] = mapped_column(String(64), primary_key=True)
    run_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    scenario_name: Mapped[str] = mapped_column(String)
    status: Mapped[str] = mapped_column(String(16))
    sort_at: Mapped[datetime] = mapped_column(UTCDateTime())
    duration_ms: Mapped[float | None] = mapped_column(Float)
    cost_usd: Mapped[float | None] = mapped_column(Float)
    tokens_in: Mapped[int] = mapped_column(Integer)
    tokens_out: Mapped[int] = mapped_column(Integer)
    tags: Mapped[str] = mapped_column(Text)
    runs_executed: Mapped[int] = mapped_column(Integer)
    flaky: Mapped[bool] = mapped_column(Boolean)
    check_count: Mapped[int] = mapped_column(Integer)
    no_checks: Mapped[bool] = mapped_column(Boolean)
    document: Mapped[str | None] = mapped_column(Text)
    repeats_passed: Mapped[int | None] = mapped_column(Integer)
    """With ``--repeat``: how many repeats passed, of ``repeats_total`` decided ones
    (``NULL``: one run, counted from ``status``); migration 0008."""
    repeats_total: Mapped[int | None] = mapped_column(Integer)
    rate_verdict: Mapped[str | None] = mapped_column(String(16))
    """The verdict against a required pass rate (``pass``/``fail``/``inconclusive``)."""
    suite_name: Mapped[str] = mapped_column(String, server_default="")
    """The suite the scenario ran in (its run's name; ``""`` for a Veval-style run or an
    unnamed suite): a scenario is known by (project, suite, name); migration 0010."""

    __table_args__ = (
        PrimaryKeyConstraint("project", "run_id", "position"),
        ForeignKeyConstraint(
            ["project", "run_id"], ["runs.project", "runs.run_id"], ondelete="CASCADE"
        ),
        Index(None, "scenario_name", "sort_at"),
        Index(None, "sort_at"),
        Index(None, "project", "scenario_name", "sort_at"),
        Index(None, "project", "scenario_name", "suite_name", "sort_at"),
    )


class CheckResultRow(Base):
    """One check verdict (step ``step_index``, ``check_index`` within the step)."""

    __tablename__ = "check_results"

    project: Mapped[str] = mapped_column(String(64), primary_key=True)
    run_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    step_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    check_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    scenario_name: Mapped[str] = mapped_column(String)
    check_kind: Mapped[str | None] = mapped_column(String(200))
    check_name: Mapped[str | None] = mapped_column(String)
    status: Mapped[str] = mapped_column(String(16))
    message: Mapped[str | None] = mapped_column(Text)
    sort_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (
        PrimaryKeyConstraint("project", "run_id", "position", "step_index", "check_index"),
        ForeignKeyConstraint(
            ["project", "run_id", "position"],
            [
                "scenario_results.project",
                "scenario_results.run_id",
                "scenario_results.position",
            ],
            ondelete="CASCADE",
        ),
        Index(None, "scenario_name", "check_name", "sort_at"),
    )


class TraceRow(Base):
    """One agent run (a ``TraceRecord``), searchable by agent, status and time."""

    __tablename__ = "traces"

    project: Mapped[str] = mapped_column(String(64), primary_key=True)
    trace_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    agent_name: Mapped[str | None] = mapped_column(String)
    status: Mapped[str] = mapped_column(String(32))
    sort_at: Mapped[datetime] = mapped_column(UTCDateTime())
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    duration_ms: Mapped[float | None] = mapped_column(Float)
    cost_usd: Mapped[float | None] = mapped_column(Float)
    span_count: Mapped[int] = mapped_column(Integer)
    is_replay: Mapped[bool] = mapped_column(Boolean)
    document: Mapped[str] = mapped_column(Text)
    pinned: Mapped[bool] = mapped_column(Boolean, server_default=false())
    replay_of: Mapped[str | None] = mapped_column(String(200))
    """The trace this one replays (``metadata.replay_of``): the trace page's replays."""

    __table_args__ = (
        PrimaryKeyConstraint("project", "trace_id"),
        Index(None, "sort_at", "trace_id"),
        Index(None, "agent_name", "sort_at"),
        Index(None, "status", "sort_at"),
        Index(None, "project", "sort_at", "trace_id"),
        Index(None, "project", "replay_of", "sort_at"),
    )


class ScenarioItemRow(Base):
    """One item of a named Veval-style scenario, in ``position`` order."""

    __tablename__ = "scenario_items"

    project: Mapped[str] = mapped_column(String(64), primary_key=True)
    item_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    scenario_name: Mapped[str] = mapped_column(String)
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str | None] = mapped_column(String)
    trace_id: Mapped[str | None] = mapped_column(String(200))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    document: Mapped[str] = mapped_column(Text)

    __table_args__ = (
        PrimaryKeyConstraint("project", "item_id"),
        Index(None, "scenario_name", "position"),
        Index(None, "project", "trace_id"),
        Index(None, "project", "scenario_name", "position"),
    )


class SnapshotRow(Base):
    """One version of a named snapshot of one project; the highest version is the
    current one."""

    __tablename__ = "snapshots"

    project: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String, primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    trace_id: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    pinned: Mapped[bool] = mapped_column(Boolean)
    document: Mapped[str] = mapped_column(Text)

    __table_args__ = (
        PrimaryKeyConstraint("project", "name", "version"),
        Index(None, "project", "trace_id"),
    )


class ReviewRow(Base):
    """One human review of a scenario result: ``expect`` (an expected failure until
    ``expires_at``), ``unexpect``, ``comment``, ``override`` (``verdict`` with its
    ``reason``) or ``clear_override``; by ``reviewer`` (the key id) at ``created_at``.
    Rows are only ever added: a result's review is the fold of its rows (migration 0009).

    No foreign key to ``scenario_results``: a re-ingested or pruned run never deletes the
    history of what people said about it."""

    __tablename__ = "reviews"

    project: Mapped[str] = mapped_column(String(64), primary_key=True)
    run_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    review_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    scenario_name: Mapped[str] = mapped_column(String)
    action: Mapped[str] = mapped_column(String(16))
    verdict: Mapped[str | None] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(Text)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    reviewer: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (PrimaryKeyConstraint("project", "run_id", "position", "review_id"),)


def table_of(model: type[Base]) -> Table:
    """The Core ``Table`` of a model (typed: ``__table__`` is only a ``FromClause``)."""
    table = model.__table__
    assert isinstance(table, Table)
    return table
