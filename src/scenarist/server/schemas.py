"""Request bodies of the API (responses are the store's views, :mod:`scenarist.store.sql.records`).

The Veval models take what Veval's SDK sends (see ``veval/wire.py``); timestamps in
``+00:00`` and ``Z`` forms both parse. Unknown fields are kept (``extra="allow"``) so a
newer Veval client loses nothing.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from scenarist.model.certificate import ReplayCertificate
from scenarist.model.items import ItemSummary, ScenarioRunRecord

__all__ = [
    "Ident",
    "ItemsBody",
    "KeyCreateBody",
    "ScenarioRunBody",
    "SnapshotBody",
    "VevalItemResult",
    "VevalStep",
    "VevalTrace",
]


MAX_COUNT = 2**31 - 1
"""Counts land in 32-bit integer columns (PostgreSQL's ``integer``)."""


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("contains a NUL character, which no id or name holds")
    return value


Ident = Annotated[str, AfterValidator(_no_nul)]
"""An id or a name: what lands in an indexed column or is looked up (PostgreSQL refuses
NUL in text, even to compare)."""


class VevalStep(BaseModel):
    """One step of a Veval trace (flat, pre-order, parent by ``parent_step_id``)."""

    model_config = ConfigDict(extra="allow")

    step_id: str = Field(min_length=1, max_length=200)  # in the document only: NUL is fine
    parent_step_id: str | None = None
    name: str = Field(max_length=1000)
    type: str | None = "custom"
    input: Any = None
    output: Any = None
    status: str | None = "success"
    error: str | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None
    duration_ms: float | None = None
    cost_usd: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    model: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class VevalTrace(BaseModel):
    """A trace as Veval's ``POST /v1/traces`` carries it."""

    model_config = ConfigDict(extra="allow")

    trace_id: Ident = Field(min_length=1, max_length=200)
    agent_name: Ident | None = Field(default=None, max_length=1000)
    input: Any = None
    output: Any = None
    status: Ident | None = Field(default="success", max_length=32)
    error: str | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None
    duration_ms: float | None = None
    total_cost_usd: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    steps: list[VevalStep] = Field(default_factory=list)


class VevalItemResult(BaseModel):
    """One item in Veval's run summary; ``trace_id`` and timings are our additions."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    passed: bool
    failures: list[Any] = Field(default_factory=list)
    judgments: list[Any] = Field(default_factory=list)
    trace_id: Ident | None = None
    duration_ms: float | None = None
    cost_usd: float | None = None


class ScenarioRunBody(BaseModel):
    """A scenario run summary: Veval's ``{passed, pass_count, fail_count, results}``, or
    ours (a ``ScenarioRunRecord`` with ``items``). Missing ids and times are filled in."""

    passed: bool
    pass_count: int = Field(ge=0, le=MAX_COUNT)
    fail_count: int = Field(ge=0, le=MAX_COUNT)
    results: list[VevalItemResult] = Field(default_factory=list)
    items: list[ItemSummary] = Field(default_factory=list)
    run_id: Ident | None = Field(default=None, min_length=1, max_length=200)
    started_at: datetime | None = None
    ended_at: datetime | None = None
    duration_ms: float | None = None
    cost_usd: float | None = None
    error: str | None = None
    inline_items: bool = False
    certificate: ReplayCertificate | None = None
    """The replay certificate of its trace-backed items (ours; Veval sends none)."""

    def to_record(self, scenario_name: str) -> tuple[ScenarioRunRecord, dict[str, Any] | None]:
        """The stored summary, and what it has no field for (Veval's judgments)."""
        now = datetime.now(UTC)
        started = self.started_at or self.ended_at or now
        items = list(self.items) or [
            ItemSummary(
                name=result.name or f"item {index}",
                passed=result.passed,
                failures=[str(f) for f in result.failures],
                trace_id=result.trace_id,
                duration_ms=result.duration_ms or 0.0,
                cost_usd=result.cost_usd,
            )
            for index, result in enumerate(self.results)
        ]
        judgments = {str(i): r.judgments for i, r in enumerate(self.results) if r.judgments}
        record = ScenarioRunRecord(
            run_id=self.run_id or "run_" + secrets.token_hex(12),
            scenario_name=scenario_name,
            started_at=started,
            ended_at=self.ended_at or started,
            duration_ms=self.duration_ms or 0.0,
            passed=self.passed,
            pass_count=self.pass_count,
            fail_count=self.fail_count,
            cost_usd=self.cost_usd,
            error=self.error,
            items=items,
            inline_items=self.inline_items,
            certificate=self.certificate,
        )
        return record, ({"judgments": judgments} if judgments else None)


class ItemsBody(BaseModel):
    """The whole list of a scenario's items (replaces what was stored)."""

    items: list[dict[str, Any]] = Field(max_length=10_000)


class SnapshotBody(BaseModel):
    """A snapshot to store under ``name`` (a new version if the name exists).

    Ours carries the ``snapshot`` document. Veval's SDK sends either ``trace_id`` (take the
    snapshot of that stored trace) or ``source_trace_id`` and ``steps`` (a run's steps).
    """

    name: Ident = Field(min_length=1, max_length=1000)
    snapshot: dict[str, Any] | None = None
    trace_id: Ident | None = Field(default=None, min_length=1, max_length=1000)
    source_trace_id: Ident | None = Field(default=None, max_length=1000)
    steps: list[dict[str, Any]] | None = None
    pinned: bool = False


class KeyCreateBody(BaseModel):
    scopes: list[str] = Field(default_factory=lambda: ["ingest", "read"])
    name: Ident | None = Field(default=None, max_length=200)
    projects: list[Ident] | None = Field(
        default=None,
        max_length=100,
        description="the only projects the key opens (none: every project; for a caller "
        "whose key is limited to projects, its own projects)",
    )
