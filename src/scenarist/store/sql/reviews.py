"""People's reviews of scenario results (``reviews``, migration 0009).

A failing result can be marked an **expected** failure until a date (after it, it counts
again), **commented**, and its verdict **overridden** (``pass`` or ``fail``, with a
reason). Each change is a row, never updated nor deleted: the history keeps who (the key
id) and when. A result's current review is the fold of its rows (:func:`fold_reviews`).
Every query is scoped to the store's project; the key is ``(project, run_id, position,
review_id)``.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field, computed_field
from sqlalchemy import select, tuple_

from scenarist.model.status import FAILING
from scenarist.store.sql._batches import batches
from scenarist.store.sql.engine import Database
from scenarist.store.sql.models import ReviewRow, ScenarioResultRow, table_of
from scenarist.store.sql.projects import ensure_project

__all__ = [
    "ACTIONS",
    "ReviewAction",
    "ReviewEntry",
    "ReviewQueries",
    "ReviewState",
    "excused_failures",
    "fold_reviews",
    "reviewed_counts",
]

_REVIEWS = table_of(ReviewRow)
_SCENARIOS = table_of(ScenarioResultRow)

ReviewAction = Literal["expect", "unexpect", "comment", "override", "clear_override"]
ACTIONS: tuple[str, ...] = ("expect", "unexpect", "comment", "override", "clear_override")


class ReviewEntry(BaseModel):
    """One change: what was done, by whom (a key id) and when."""

    review_id: str
    action: ReviewAction
    verdict: Literal["pass", "fail"] | None = None
    reason: str | None = None
    expires_at: datetime | None = None
    reviewer: str
    created_at: datetime


class ReviewState(BaseModel):
    """A result's review now: ``status`` is the reviewed verdict (the override's, else
    the run's ``original_status``); ``expected`` the expected-failure mark in force (not
    expired; ``expired`` the last one that ran out); ``history`` every change, oldest
    first."""

    run_id: str
    position: int
    scenario_name: str
    original_status: str
    status: str
    override: ReviewEntry | None = None
    expected: ReviewEntry | None = None
    expired: ReviewEntry | None = None
    comments: list[ReviewEntry] = Field(default_factory=list)
    history: list[ReviewEntry] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def badge(self) -> str | None:
        """``overridden by <key> on <date>: reason``, or the expected failure's."""
        if self.override is not None:
            o = self.override
            return f"overridden by {o.reviewer} on {o.created_at:%Y-%m-%d}: {o.reason or ''}"
        if self.expected is not None:
            e = self.expected
            until = f"{e.expires_at:%Y-%m-%d}" if e.expires_at else "?"
            text = (
                f"expected failure until {until}, marked by {e.reviewer} on {e.created_at:%Y-%m-%d}"
            )
            return f"{text}: {e.reason}" if e.reason else text
        return None

    @property
    def counts_as_failing(self) -> bool:
        """A fail or error that no review excuses (no pass override, not expected)."""
        return self.status in FAILING and self.expected is None


def fold_reviews(
    run_id: str,
    position: int,
    scenario_name: str,
    original_status: str,
    entries: Iterable[ReviewEntry],
    now: datetime | None = None,
) -> ReviewState:
    """The review of a result from its changes (any order: sorted by time here)."""
    now = now or datetime.now(UTC)
    history = sorted(entries, key=lambda e: (e.created_at, e.review_id))
    override = expected = None
    comments = []
    for entry in history:
        if entry.action == "override":
            override = entry
        elif entry.action == "clear_override":
            override = None
        elif entry.action == "expect":
            expected = entry
        elif entry.action == "unexpect":
            expected = None
        elif entry.action == "comment":
            comments.append(entry)
    expired = None
    if expected is not None and expected.expires_at is not None and expected.expires_at <= now:
        expired, expected = expected, None
    return ReviewState(
        run_id=run_id,
        position=position,
        scenario_name=scenario_name,
        original_status=original_status,
        status=override.verdict if override is not None and override.verdict else original_status,
        override=override,
        expected=expected,
        expired=expired,
        comments=comments,
        history=history,
    )


def reviewed_counts(statuses: dict[int, str], reviews: dict[int, ReviewState]) -> dict[str, int]:
    """A run's counts after review: each result under its reviewed verdict, expected
    failures apart (``expected``), keyed ``pass``/``fail``/``error``/``skip``/``expected``."""
    counts = {"pass": 0, "fail": 0, "error": 0, "skip": 0, "expected": 0}
    for position, raw in statuses.items():
        state = reviews.get(position)
        status = state.status if state is not None else raw
        if state is not None and state.expected is not None and status in FAILING:
            counts["expected"] += 1
        else:
            counts[status] = counts.get(status, 0) + 1
    return counts


_ENTRY_COLUMNS = [
    _REVIEWS.c[name]
    for name in ("review_id", "action", "verdict", "reason", "expires_at", "reviewer", "created_at")
]


class ReviewQueries(Database):
    """Reading and adding reviews (mixed into :class:`~.store.SqlStore`)."""

    async def result_status(self, run_id: str, position: int) -> tuple[str, str] | None:
        """``(scenario_name, status)`` of a result of this project, ``None`` if none."""
        query = select(_SCENARIOS.c.scenario_name, _SCENARIOS.c.status).where(
            _SCENARIOS.c.project == self.project,
            _SCENARIOS.c.run_id == run_id,
            _SCENARIOS.c.position == position,
        )
        async with self._read() as connection:
            row = (await connection.execute(query)).first()
        return None if row is None else (row[0], row[1])

    async def add_review(
        self,
        run_id: str,
        position: int,
        *,
        scenario_name: str,
        action: str,
        reviewer: str,
        verdict: str | None = None,
        reason: str | None = None,
        expires_at: datetime | None = None,
    ) -> ReviewEntry:
        """Append one change to a result's review history."""
        row = {
            "project": self.project,
            "run_id": run_id,
            "position": position,
            "review_id": secrets.token_hex(8),
            "scenario_name": scenario_name,
            "action": action,
            "verdict": verdict,
            "reason": reason,
            "expires_at": expires_at,
            "reviewer": reviewer,
            "created_at": datetime.now(UTC),
        }
        async with self._write() as connection:
            await ensure_project(self, connection, self.project)
            await connection.execute(self._insert(_REVIEWS), [row])
        return ReviewEntry.model_validate(row)

    async def review_entries(
        self, run_id: str, positions: Iterable[int] | None = None
    ) -> dict[int, list[ReviewEntry]]:
        """The review changes of a run's results (of ``positions`` only, if given), by
        position, oldest first."""
        query = select(_REVIEWS.c.position, *_ENTRY_COLUMNS).where(
            _REVIEWS.c.project == self.project, _REVIEWS.c.run_id == run_id
        )
        if positions is not None:
            query = query.where(_REVIEWS.c.position.in_(list(positions)))
        found: dict[int, list[ReviewEntry]] = {}
        async with self._read() as connection:
            for row in (await connection.execute(query)).all():
                data = dict(row._mapping)
                found.setdefault(data.pop("position"), []).append(ReviewEntry.model_validate(data))
        for entries in found.values():
            entries.sort(key=lambda e: (e.created_at, e.review_id))
        return found


async def excused_failures(
    db: Database, failures: Iterable[tuple[str, int, str]]
) -> set[tuple[str, int]]:
    """Of the failing results ``(run_id, position, status)`` of ``db``'s project, those a
    review excuses: an expected failure not yet expired, or a verdict overridden to pass
    (what "Broke recently" leaves out). One read per 400 results, none without reviews."""
    statuses = {(run_id, position): status for run_id, position, status in failures}
    wanted = sorted(statuses)
    found: dict[tuple[str, int], list[ReviewEntry]] = {}
    async with db._read() as connection:
        if not await connection.scalar(
            select(_REVIEWS.c.review_id).where(_REVIEWS.c.project == db.project).limit(1)
        ):
            return set()
        for batch in batches(wanted, 400):  # two arguments a result
            query = select(_REVIEWS.c.run_id, _REVIEWS.c.position, *_ENTRY_COLUMNS).where(
                _REVIEWS.c.project == db.project,
                tuple_(_REVIEWS.c.run_id, _REVIEWS.c.position).in_(batch),
            )
            for row in (await connection.execute(query)).all():
                data = dict(row._mapping)
                key = (data.pop("run_id"), data.pop("position"))
                found.setdefault(key, []).append(ReviewEntry.model_validate(data))
    return {
        key
        for key, entries in found.items()
        if not fold_reviews(key[0], key[1], "", statuses[key], entries).counts_as_failing
    }
