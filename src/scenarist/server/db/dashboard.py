"""The queries only the dashboard needs: flaky and newly broken scenarios, recent failure
messages of one scenario, and one scenario result of a run with its stored document.

Plain functions over a :class:`~.engine.Database` (a ``SqlStore``) rather than more
methods on it, so the dashboard grows without touching the store's modules. Each query
is bounded: the overview looks at the newest ``window`` runs only, lists are limited.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import and_, case, func, or_, select

from scenarist.server.db.engine import Database
from scenarist.server.db.models import CheckResultRow, RunRow, ScenarioResultRow, table_of
from scenarist.server.db.views import CheckResultView, ScenarioResultView

__all__ = [
    "BrokenScenario",
    "FailureMessage",
    "FlakyScenario",
    "StoredScenarioResult",
    "broken_and_flaky",
    "failure_messages",
    "scenario_result",
]

_RUNS = table_of(RunRow)
_SCENARIOS = table_of(ScenarioResultRow)
_CHECKS = table_of(CheckResultRow)
_DECIDED = ("pass", "fail", "error")


class FlakyScenario(BaseModel):
    """A scenario whose status went back and forth within the window (or was flaky
    under ``repeat``): ``flips`` counts changes between pass and fail/error."""

    scenario_name: str
    results: int
    passed: int
    failed: int
    flips: int
    flaky_runs: int
    last_at: datetime


class BrokenScenario(BaseModel):
    """A scenario that failed (or errored) right after passing."""

    scenario_name: str
    run_id: str
    position: int
    status: str
    at: datetime


class FailureMessage(BaseModel):
    """One failed or errored check of a scenario, newest first."""

    run_id: str
    position: int
    check_name: str | None
    check_kind: str | None
    status: str
    message: str | None
    at: datetime


class StoredScenarioResult(BaseModel):
    """One scenario result of a run, its run's name and kind, and the stored record
    (the run log's scenario record; ``None`` for a Veval-style run)."""

    run_id: str
    run_kind: str
    run_name: str | None
    result: ScenarioResultView
    document: dict[str, Any] | None


async def _window_start(db: Database, window: int) -> datetime | None:
    query = select(_RUNS.c.sort_at).order_by(_RUNS.c.sort_at.desc()).offset(window - 1).limit(1)
    async with db._read() as connection:
        start: datetime | None = await connection.scalar(query)
        if start is None:
            start = await connection.scalar(select(func.min(_RUNS.c.sort_at)))
    return start


async def broken_and_flaky(
    db: Database, *, window: int = 50, limit: int = 10
) -> tuple[list[BrokenScenario], list[FlakyScenario]]:
    """Within the newest ``window`` runs: the scenarios that broke most recently (a
    fail or error right after a pass), and the flaky ones (two or more flips, or flaky
    under ``repeat``), most recently seen first."""
    start = await _window_start(db, window)
    if start is None:
        return [], []
    decided = _SCENARIOS.c.status.in_(_DECIDED)
    ordered = (
        select(
            _SCENARIOS.c.scenario_name,
            _SCENARIOS.c.run_id,
            _SCENARIOS.c.position,
            _SCENARIOS.c.status,
            _SCENARIOS.c.sort_at,
            _SCENARIOS.c.flaky,
            func.lag(_SCENARIOS.c.status)
            .over(
                partition_by=_SCENARIOS.c.scenario_name,
                order_by=(_SCENARIOS.c.sort_at, _SCENARIOS.c.run_id, _SCENARIOS.c.position),
            )
            .label("previous"),
        )
        .where(_SCENARIOS.c.sort_at >= start, decided)
        .subquery()
    )
    failing = ordered.c.status.in_(("fail", "error"))
    flip = or_(
        and_(ordered.c.previous == "pass", failing),
        and_(ordered.c.previous.in_(("fail", "error")), ordered.c.status == "pass"),
    )
    flips = func.sum(case((flip, 1), else_=0))
    flaky_runs = func.sum(case((ordered.c.flaky.is_(True), 1), else_=0))
    flaky_query = (
        select(
            ordered.c.scenario_name,
            func.count().label("results"),
            func.sum(case((ordered.c.status == "pass", 1), else_=0)).label("passed"),
            func.sum(case((failing, 1), else_=0)).label("failed"),
            flips.label("flips"),
            flaky_runs.label("flaky_runs"),
            func.max(ordered.c.sort_at).label("last_at"),
        )
        .group_by(ordered.c.scenario_name)
        .having(or_(flips >= 2, flaky_runs > 0))
        .order_by(func.max(ordered.c.sort_at).desc(), ordered.c.scenario_name)
        .limit(limit)
    )
    broken_query = (
        select(
            ordered.c.scenario_name,
            ordered.c.run_id,
            ordered.c.position,
            ordered.c.status,
            ordered.c.sort_at.label("at"),
        )
        .where(ordered.c.previous == "pass", failing)
        .order_by(ordered.c.sort_at.desc(), ordered.c.run_id.desc(), ordered.c.position)
        .limit(limit)
    )
    async with db._read() as connection:
        flaky_rows = (await connection.execute(flaky_query)).all()
        broken_rows = (await connection.execute(broken_query)).all()
    broken = [BrokenScenario.model_validate(dict(row._mapping)) for row in broken_rows]
    flaky = [FlakyScenario.model_validate(dict(row._mapping)) for row in flaky_rows]
    return broken, flaky


async def failure_messages(
    db: Database, scenario_name: str, *, limit: int = 5
) -> list[FailureMessage]:
    """The newest failed or errored checks of ``scenario_name``."""
    query = (
        select(
            _CHECKS.c.run_id,
            _CHECKS.c.position,
            _CHECKS.c.check_name,
            _CHECKS.c.check_kind,
            _CHECKS.c.status,
            _CHECKS.c.message,
            _CHECKS.c.sort_at.label("at"),
        )
        .where(_CHECKS.c.scenario_name == scenario_name, _CHECKS.c.status.in_(("fail", "error")))
        .order_by(
            _CHECKS.c.sort_at.desc(),
            _CHECKS.c.run_id.desc(),
            _CHECKS.c.step_index,
            _CHECKS.c.check_index,
        )
        .limit(limit)
    )
    async with db._read() as connection:
        rows = (await connection.execute(query)).all()
    return [FailureMessage.model_validate(dict(row._mapping)) for row in rows]


async def scenario_result(db: Database, run_id: str, position: int) -> StoredScenarioResult | None:
    """One scenario of one run with its check verdicts and stored record."""
    query = (
        select(_SCENARIOS, _RUNS.c.kind.label("run_kind"), _RUNS.c.name.label("run_name"))
        .join(_RUNS, _RUNS.c.run_id == _SCENARIOS.c.run_id)
        .where(_SCENARIOS.c.run_id == run_id, _SCENARIOS.c.position == position)
    )
    checks_query = (
        select(_CHECKS)
        .where(_CHECKS.c.run_id == run_id, _CHECKS.c.position == position)
        .order_by(_CHECKS.c.step_index, _CHECKS.c.check_index)
    )
    async with db._read() as connection:
        row = (await connection.execute(query)).first()
        if row is None:
            return None
        checks = (await connection.execute(checks_query)).all()
    data = dict(row._mapping)
    document = data.pop("document")
    data["tags"] = json.loads(data["tags"])
    data["checks"] = [CheckResultView.model_validate(dict(c._mapping)) for c in checks]
    return StoredScenarioResult(
        run_id=run_id,
        run_kind=data["run_kind"],
        run_name=data["run_name"],
        result=ScenarioResultView.model_validate(data),
        document=json.loads(document) if document else None,
    )
