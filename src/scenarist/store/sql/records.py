"""What the store's queries return: plain pydantic models, also the API's responses.

Lists are pages: ``items`` plus ``next_cursor`` (``None`` on the last page). A cursor is
opaque to clients: URL-safe base64 of the sort key of the last row returned, so the next
page starts strictly after it even while new rows arrive.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field, computed_field

from scenarist.errors import UserError

__all__ = [
    "ApiKeyInfo",
    "CheckResultView",
    "HistoryPoint",
    "IngestResult",
    "Page",
    "RunDetail",
    "RunSummary",
    "ScenarioHistory",
    "ScenarioResultView",
    "SnapshotInfo",
    "TracePage",
    "TraceSummary",
    "decode_cursor",
    "encode_cursor",
]

T = TypeVar("T")


def encode_cursor(*key: Any) -> str:
    """An opaque cursor for the sort key ``key`` (datetimes as ISO strings)."""
    values = [v.isoformat() if isinstance(v, datetime) else v for v in key]
    raw = json.dumps(values, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, *, size: int, kinds: tuple[type, ...] = ()) -> list[Any]:
    """The sort key inside ``cursor``; a cursor we did not make is a ``UserError``.
    ``kinds``: the type of each value (default: every value a string; times are ISO
    strings), so a forged value never reaches the query (a driver error, a 500)."""
    invalid = f"invalid cursor {cursor!r}: pass back a next_cursor value"
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        values = json.loads(raw)
    except (binascii.Error, ValueError) as exc:
        raise UserError(invalid) from exc
    if not isinstance(values, list) or len(values) != size:
        raise UserError(invalid)
    for value, kind in zip(values, kinds or (str,) * size, strict=True):
        if not isinstance(value, kind) or isinstance(value, bool):
            raise UserError(invalid)
    return values


class Page(BaseModel, Generic[T]):
    """One page of a list, and the cursor of the next one (``None``: this is the last)."""

    items: list[T]
    next_cursor: str | None = None


class IngestResult(BaseModel):
    """The answer to a run-log upload: ``created`` is false when the run was already stored."""

    run_id: str
    created: bool
    scenario_count: int
    check_count: int


class RunSummary(BaseModel):
    """One run in a list: what a runs table shows."""

    run_id: str
    kind: str
    name: str | None
    started_at: datetime | None
    ended_at: datetime | None
    ingested_at: datetime
    duration_ms: float | None
    total_count: int
    passed_count: int
    failed_count: int
    errored_count: int
    skipped_count: int
    pass_rate: float | None
    cost_usd: float | None
    tokens_in: int
    tokens_out: int
    complete: bool
    git_commit: str | None
    git_branch: str | None
    subset: bool = False
    """The run ran part of its suite (a selection, or fewer scenarios than usual)."""


class CheckResultView(BaseModel):
    step_index: int
    check_index: int
    check_kind: str | None
    check_name: str | None
    status: str
    message: str | None


class ScenarioResultView(BaseModel):
    """One scenario of a run, with its check verdicts."""

    position: int
    scenario_name: str
    suite_name: str = ""
    """Its run's suite (``""``: a Veval-style run or an unnamed suite)."""
    status: str
    duration_ms: float | None
    cost_usd: float | None
    tokens_in: int
    tokens_out: int
    tags: list[str]
    runs_executed: int
    flaky: bool
    check_count: int
    no_checks: bool
    checks: list[CheckResultView] = Field(default_factory=list)
    error: str | None = None
    """An errored scenario's first step error, described (``StepError.describe``: what
    raised, the message, the user's line); ``None`` otherwise."""
    outcome: str | None = None
    """``"budget"`` for a scenario the run's budget did not start (its ``status`` is
    ``"error"``, as giskard-checks code sees it); ``None`` otherwise."""
    repeats_passed: int | None = None
    """With repeats: how many passed, of ``repeats_total`` (``None`` without repeats)."""
    repeats_total: int | None = None
    rate_verdict: str | None = None
    """Against a required pass rate: ``pass`` / ``fail`` / ``inconclusive``."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def repeat_interval(self) -> tuple[float, float] | None:
        """The Wilson 95% interval of the repeats' pass rate (``None`` without repeats)."""
        return _interval(self.repeats_total, self.repeats_passed)


class RunDetail(RunSummary):
    """One run with its header and footer (or Veval-style summary) and its scenarios."""

    document: dict[str, Any]
    scenarios: list[ScenarioResultView]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def certificate(self) -> dict[str, Any] | None:
        """The run's replay certificate (the run log header's, or a Veval-style run's
        record's); ``None``: not a replay nor a recording, or stored before it existed."""
        header = self.document.get("header")
        found = header.get("certificate") if isinstance(header, dict) else None
        found = found or self.document.get("certificate")
        return found if isinstance(found, dict) else None


class HistoryPoint(BaseModel):
    run_id: str
    run_kind: str
    started_at: datetime
    status: str
    duration_ms: float | None
    cost_usd: float | None
    flaky: bool
    repeats_passed: int | None = None
    repeats_total: int | None = None
    rate_verdict: str | None = None
    suite_name: str = ""
    """The suite the result ran in (``""``: a Veval-style run or an unnamed suite)."""
    subset: bool = False
    """Its run ran part of the suite."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def repeat_interval(self) -> tuple[float, float] | None:
        """The Wilson 95% interval of the repeats' pass rate (``None`` without repeats)."""
        return _interval(self.repeats_total, self.repeats_passed)


def _interval(runs: int | None, passed: int | None) -> tuple[float, float] | None:
    if runs is None or passed is None:
        return None
    from scenarist.model.stats import wilson_interval

    return wilson_interval(runs, passed)


class ScenarioHistory(BaseModel):
    """A scenario's results across runs, newest first, and the pass rate over them."""

    scenario_name: str
    suite_name: str | None = None
    """The suite whose scenario this is (``""``: Veval-style runs and unnamed suites;
    ``None``: every suite's results)."""
    points: list[HistoryPoint]
    pass_rate: float | None
    next_cursor: str | None = None


class TraceSummary(BaseModel):
    trace_id: str
    agent_name: str | None
    status: str
    started_at: datetime | None
    duration_ms: float | None
    cost_usd: float | None
    span_count: int
    is_replay: bool
    replay_of: str | None = None
    """The trace this one replays, when it is a replay of a stored trace."""
    input_preview: str | None = None
    """The start of the trace's input as text (at most 200 characters)."""
    output_preview: str | None = None
    """The start of the trace's output as text (at most 200 characters)."""


TRACE_SUMMARY_COLUMNS = (
    "trace_id",
    "agent_name",
    "status",
    "started_at",
    "duration_ms",
    "cost_usd",
    "span_count",
    "is_replay",
    "replay_of",
)


class TracePage(Page[TraceSummary]):
    """A page of the trace list. A text search bounded to ``search_window`` traces (the
    dashboard's) that ran out of window before the page filled says where it stopped:
    ``searched_to`` is the start of the oldest trace it read, and ``next_cursor`` searches
    on from there."""

    search_window: int | None = None
    searched_to: datetime | None = None


class SnapshotInfo(BaseModel):
    name: str
    version: int
    trace_id: str | None
    created_at: datetime
    pinned: bool


class ApiKeyInfo(BaseModel):
    """An API key as listed: never the key itself, which is shown once at creation."""

    key_id: str
    name: str | None
    scopes: list[str]
    created_at: datetime
    revoked_at: datetime | None
    projects: list[str] | None = None  # None: every project
