"""Reviewing a scenario result, shared by the API (``/api/runs/{id}/scenarios/{n}/reviews``)
and the scenario page's form: mark a failure expected until a date, comment, override
the verdict (``pass``/``fail`` with a reason), or undo the mark or the override.

Who reviewed is the caller's key id (a dashboard session's key; ``local`` in open mode,
where no key exists). An unknown result is :class:`ResultNotFound` (404); a review that
makes no sense (an expected pass, a date in the past, an override without a reason) is a
``UserError`` naming the field (422). No SQL here: everything goes through the store.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Any

from fastapi import Request
from pydantic import BaseModel, Field, field_validator

from scenarist.errors import UserError
from scenarist.model.status import FAILING
from scenarist.store.sql.reviews import ReviewAction, ReviewState, fold_reviews
from scenarist.store.sql.store import SqlStore

__all__ = ["ResultNotFound", "ReviewBody", "review_result", "review_state", "reviewer_of"]

OPEN_MODE_REVIEWER = "local"


class ResultNotFound(Exception):
    """The run has no such scenario result (in this project)."""


class ReviewBody(BaseModel):
    """One review change. ``expect``: an expected failure until ``expires_at`` (a date or
    a time, in the future; a date means the end of that day, UTC), ``reason`` optional;
    ``unexpect``: counts again now; ``comment``: ``reason`` is the comment; ``override``:
    ``verdict`` (``pass``/``fail``) and its ``reason``; ``clear_override``: the run's own
    verdict again."""

    action: ReviewAction
    reason: str | None = Field(default=None, max_length=5000)
    verdict: str | None = Field(default=None, description="pass or fail (override)")
    expires_at: date | datetime | None = Field(default=None, description="expect: until when")

    @field_validator("reason")
    @classmethod
    def _strip(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None


def reviewer_of(request: Request) -> str:
    """The caller's key id (a Bearer key's or a session's), ``local`` in open mode."""
    for name in ("api_key_id", "session_key_id"):
        found = getattr(request.state, name, None)
        if found:
            return str(found)
    return OPEN_MODE_REVIEWER


def _expiry(value: datetime | date | None, now: datetime) -> datetime:
    if value is None:
        raise UserError(
            "expires_at is required to mark a failure expected: give a date (YYYY-MM-DD)"
        )
    if not isinstance(value, datetime):
        value = datetime.combine(value, time.max, UTC)
    elif value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    if value <= now:
        raise UserError(
            f"expires_at={value.date().isoformat()} is not in the future: give a later date"
        )
    return value


async def review_state(store: SqlStore, run_id: str, position: int) -> ReviewState:
    """The result's review now (raises :class:`ResultNotFound`)."""
    found = await store.result_status(run_id, position)
    if found is None:
        raise ResultNotFound(f"run {run_id!r} has no scenario {position}")
    entries = (await store.review_entries(run_id, [position])).get(position, [])
    return fold_reviews(run_id, position, found[0], found[1], entries)


async def review_result(
    store: SqlStore, run_id: str, position: int, body: ReviewBody, reviewer: str
) -> ReviewState:
    """Check ``body`` against the result, append it to its history, return the review."""
    state = await review_state(store, run_id, position)
    now = datetime.now(UTC)
    fields: dict[str, Any] = {"reason": body.reason}
    if body.action == "expect":
        if state.original_status not in FAILING:
            raise UserError(
                f"action=expect: scenario {position} has status {state.original_status!r}; "
                "only a fail or an error can be marked expected"
            )
        fields["expires_at"] = _expiry(body.expires_at, now)
    elif body.action == "comment":
        if body.reason is None:
            raise UserError("reason is required for a comment: it is the comment's text")
    elif body.action == "override":
        if body.verdict not in ("pass", "fail"):
            raise UserError(f"verdict={body.verdict!r}: an override's verdict is 'pass' or 'fail'")
        if body.reason is None:
            raise UserError("reason is required to override a verdict: say why")
        fields["verdict"] = body.verdict
    elif body.action == "unexpect" and state.expected is None:
        raise UserError("action=unexpect: this result is not marked expected")
    elif body.action == "clear_override" and state.override is None:
        raise UserError("action=clear_override: this result's verdict is not overridden")
    await store.add_review(
        run_id,
        position,
        scenario_name=state.scenario_name,
        action=body.action,
        reviewer=reviewer,
        **fields,
    )
    return await review_state(store, run_id, position)
