"""The queries only the dashboard needs: flaky and newly broken scenarios, recent failure
messages of one scenario, one scenario result of a run with its stored document, the
verdicts of the Veval-style items that ran a trace, and the suites and branches to
filter the overview by.

Plain functions over a :class:`~.engine.Database` (a ``SqlStore``) rather than more
methods on it, so the dashboard grows without touching the store's modules. Each query
is bounded: the overview looks at the newest ``window`` runs only, lists are limited.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy import DateTime, and_, func, select, type_coerce

from scenarist.formats.runlog import ScenarioRecord, decode_scenario_record
from scenarist.model.items import ItemSummary
from scenarist.model.status import FAILING
from scenarist.store.sql._paging import keyset, page_of
from scenarist.store.sql.engine import Database
from scenarist.store.sql.models import (
    CheckResultRow,
    RunRow,
    ScenarioItemRow,
    ScenarioResultRow,
    TraceRow,
    table_of,
)
from scenarist.store.sql.records import CheckResultView, Page, RunSummary, ScenarioResultView
from scenarist.store.sql.reviews import excused_failures

__all__ = [
    "BrokenAndFlaky",
    "BrokenScenario",
    "FailureMessage",
    "FlakyScenario",
    "ItemFromTrace",
    "ItemVerdict",
    "ReplayOfTrace",
    "RunFacets",
    "ScenarioRunItems",
    "StoredScenarioResult",
    "broken_and_flaky",
    "failure_messages",
    "item_scenario_names",
    "item_verdicts",
    "items_from_trace",
    "replays_of",
    "run_facets",
    "runs_page",
    "scenario_result",
    "scenario_runs_with_items",
]

_RUNS = table_of(RunRow)
_SCENARIOS = table_of(ScenarioResultRow)
_CHECKS = table_of(CheckResultRow)
_TRACES = table_of(TraceRow)
_ITEMS = table_of(ScenarioItemRow)
_DECIDED = ("pass", "fail", "error")
_SUMMARY = [_RUNS.c[name] for name in RunSummary.model_fields]
_RUN_KINDS = ("suite", "scenario")  # runs.kind: a suite run, a Veval-style scenario run


class FlakyScenario(BaseModel):
    """A scenario whose status went back and forth within the window (or was flaky
    under ``repeat``): ``flips`` counts changes between pass and fail/error."""

    scenario_name: str
    suite_name: str = ""
    results: int
    passed: int
    failed: int
    flips: int
    flaky_runs: int
    last_at: datetime


class BrokenScenario(BaseModel):
    """A scenario that failed (or errored) right after passing."""

    scenario_name: str
    suite_name: str = ""
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
    document: ScenarioRecord | None


async def _window_start(db: Database, window: int) -> datetime | None:
    in_project = _RUNS.c.project == db.project
    query = (
        select(_RUNS.c.sort_at)
        .where(in_project)
        .order_by(_RUNS.c.sort_at.desc())
        .offset(window - 1)
        .limit(1)
    )
    async with db._read() as connection:
        start: datetime | None = await connection.scalar(query)
        if start is None:
            start = await connection.scalar(select(func.min(_RUNS.c.sort_at)).where(in_project))
    return start


def _aware(at: datetime) -> datetime:
    """A naive UTC ``sort_at`` as the aware datetime the column type reads."""
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at


class BrokenAndFlaky(BaseModel):
    """The first ``limit`` broken and flaky scenarios, and how many there are in all (the
    lists say "and N more" and link the whole list)."""

    broken: list[BrokenScenario]
    flaky: list[FlakyScenario]
    broken_total: int
    flaky_total: int


async def broken_and_flaky(
    db: Database, *, window: int = 50, limit: int | None = 10
) -> BrokenAndFlaky:
    """Within the newest ``window`` runs: the scenarios that broke most recently (a
    fail or error right after a pass), and the flaky ones (two or more flips, or flaky
    under ``repeat``), most recently seen first; ``limit`` of each (``None``: all).

    A scenario is known by its suite and name: ``refund`` of the ``support`` suite and
    ``refund`` of a pytest session are two histories, never one flipping between them.
    """
    start = await _window_start(db, window)
    if start is None:
        return BrokenAndFlaky(broken=[], flaky=[], broken_total=0, flaky_total=0)
    # One range read through the ``sort_at`` index (the window's few thousand results),
    # ordered and folded here. In SQL (a window function, then two aggregates) SQLite
    # walked the whole (scenario_name, sort_at) index to get the window function's order,
    # and ran it twice: ~200 ms at 200,000 scenario results (bench/server_bench.py).
    # ``sort_at`` is read as the naive UTC it is stored as: making each of the thousands
    # of values aware (the column type's result processing) was half of this function on
    # PostgreSQL; only the few returned are made aware, below. The columns come in history
    # order, so the rows sort as plain tuples ((run_id, position) is unique).
    query = select(
        _SCENARIOS.c.suite_name,
        _SCENARIOS.c.scenario_name,
        type_coerce(_SCENARIOS.c.sort_at, DateTime()),
        _SCENARIOS.c.run_id,
        _SCENARIOS.c.position,
        _SCENARIOS.c.status,
        _SCENARIOS.c.flaky,
    ).where(
        _SCENARIOS.c.project == db.project,
        _SCENARIOS.c.sort_at >= start,
        _SCENARIOS.c.status.in_(_DECIDED),
    )
    async with db._read() as connection:
        found = [tuple(row) for row in (await connection.execute(query)).all()]
    found.sort()
    broken: list[tuple[Any, ...]] = []
    # (suite_name, scenario_name) → [results, passed, failed, flips, flaky_runs, last_at]
    stats: dict[tuple[str, str], list[Any]] = {}
    last_name: tuple[str, str] | None = None
    last_status: str | None = None
    entry: list[Any] = []
    for suite, scenario, at, run_id, position, status, flaky in found:
        name = (suite, scenario)
        if name != last_name:
            entry = stats[name] = [0, 0, 0, 0, 0, at]
            before = None
        else:
            before = last_status
        entry[0] += 1
        if status in FAILING:
            entry[2] += 1
            if before == "pass":
                entry[3] += 1
                broken.append((name, run_id, position, status, _aware(at)))
        else:  # a pass: the statuses are pass, fail or error
            entry[1] += 1
            if before in FAILING:
                entry[3] += 1
        if flaky:
            entry[4] += 1
        entry[5] = at  # history order: the last one seen is the newest
        last_name, last_status = name, status
    excused = await excused_failures(db, [(b[1], b[2], b[3]) for b in broken])
    broken = [b for b in broken if (b[1], b[2]) not in excused]  # reviewed: not broken
    broken.sort(key=lambda b: b[2])
    broken.sort(key=lambda b: (b[4], b[1]), reverse=True)
    chosen = [(name, e) for name, e in stats.items() if e[3] >= 2 or e[4] > 0]
    chosen.sort(key=lambda item: item[0])
    chosen.sort(key=lambda item: item[1][5], reverse=True)
    return BrokenAndFlaky(
        broken=[
            BrokenScenario(
                suite_name=n[0], scenario_name=n[1], run_id=r, position=p, status=st, at=at
            )
            for n, r, p, st, at in broken[:limit]
        ],
        flaky=[
            FlakyScenario(
                suite_name=name[0],
                scenario_name=name[1],
                results=e[0],
                passed=e[1],
                failed=e[2],
                flips=e[3],
                flaky_runs=e[4],
                last_at=_aware(e[5]),
            )
            for name, e in chosen[:limit]
        ],
        broken_total=len(broken),
        flaky_total=len(chosen),
    )


async def failure_messages(
    db: Database, scenario_name: str, *, suite: str | None = None, limit: int = 5
) -> list[FailureMessage]:
    """The newest failed or errored checks of ``scenario_name`` in suite ``suite``
    (``None``: any suite): the checks index by name, each joined to its scenario result
    by key for the suite."""
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
        .where(
            _CHECKS.c.project == db.project,
            _CHECKS.c.scenario_name == scenario_name,
            _CHECKS.c.status.in_(sorted(FAILING)),
        )
        .order_by(
            _CHECKS.c.sort_at.desc(),
            _CHECKS.c.run_id.desc(),
            _CHECKS.c.step_index,
            _CHECKS.c.check_index,
        )
        .limit(limit)
    )
    if suite is not None:
        query = query.join(
            _SCENARIOS,
            and_(
                _SCENARIOS.c.project == _CHECKS.c.project,
                _SCENARIOS.c.run_id == _CHECKS.c.run_id,
                _SCENARIOS.c.position == _CHECKS.c.position,
            ),
        ).where(_SCENARIOS.c.suite_name == suite)
    async with db._read() as connection:
        rows = (await connection.execute(query)).all()
    return [FailureMessage.model_validate(dict(row._mapping)) for row in rows]


async def scenario_result(db: Database, run_id: str, position: int) -> StoredScenarioResult | None:
    """One scenario of one run with its check verdicts and stored record."""
    query = (
        select(_SCENARIOS, _RUNS.c.kind.label("run_kind"), _RUNS.c.name.label("run_name"))
        .join(
            _RUNS,
            and_(_RUNS.c.project == _SCENARIOS.c.project, _RUNS.c.run_id == _SCENARIOS.c.run_id),
        )
        .where(
            _SCENARIOS.c.project == db.project,
            _SCENARIOS.c.run_id == run_id,
            _SCENARIOS.c.position == position,
        )
    )
    checks_query = (
        select(_CHECKS)
        .where(
            _CHECKS.c.project == db.project,
            _CHECKS.c.run_id == run_id,
            _CHECKS.c.position == position,
        )
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
        document=decode_scenario_record(document, source=f"stored record {run_id}/{position}")
        if document
        else None,
    )


class ItemVerdict(BaseModel):
    """How a Veval-style scenario run judged the item that produced a trace."""

    run_id: str
    scenario_name: str
    started_at: datetime | None
    item_name: str
    passed: bool
    failures: list[str]


_VERDICT_WINDOW = (timedelta(minutes=10), timedelta(days=1))  # before, after the trace
_VERDICT_RUNS = 20


async def item_verdicts(
    db: Database, trace_id: str, *, run_id: str | None = None, near: datetime | None = None
) -> list[ItemVerdict]:
    """The items of Veval-style runs whose ``trace_id`` is ``trace_id``, newest run first.

    Runs do not index their items' trace ids (that would take a migration), so this
    reads run ``run_id`` when given (the run page's links carry it) and otherwise the
    few scenario runs that started from ten minutes before the trace to a day after it
    (an item's trace is recorded while its run runs): a bounded range read on
    ``runs.sort_at``, never a scan of every run's document.
    """
    query = select(_RUNS.c.run_id, _RUNS.c.name, _RUNS.c.started_at, _RUNS.c.document).where(
        _RUNS.c.kind == "scenario", _RUNS.c.project == db.project
    )
    if run_id is not None:
        query = query.where(_RUNS.c.run_id == run_id)
    elif near is not None:
        before, after = _VERDICT_WINDOW
        query = query.where(_RUNS.c.sort_at >= near - before, _RUNS.c.sort_at <= near + after)
    else:
        return []
    query = query.order_by(_RUNS.c.sort_at.desc(), _RUNS.c.run_id.desc()).limit(_VERDICT_RUNS)
    async with db._read() as connection:
        rows = (await connection.execute(query)).all()
    return [
        _verdict(row, item)
        for row in rows
        for item in _items_of(row.document)
        if item.get("trace_id") == trace_id
    ]


def _items_of(document: str) -> list[dict[str, Any]]:
    """The item summaries of a stored scenario run's document (none if unreadable)."""
    try:
        items = json.loads(document).get("items") or []
    except (ValueError, AttributeError):
        return []
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _summaries(document: str) -> list[ItemSummary]:
    """The readable item summaries of a stored scenario run (a foreign one is skipped)."""
    found = []
    for item in _items_of(document):
        try:
            found.append(ItemSummary.model_validate(item))
        except ValidationError:
            continue
    return found


def _verdict(row: Any, item: dict[str, Any]) -> ItemVerdict:
    failures = item.get("failures") or []
    return ItemVerdict(
        run_id=row.run_id,
        scenario_name=row.name or "",
        started_at=row.started_at,
        item_name=str(item.get("name") or ""),
        passed=bool(item.get("passed")),
        failures=[str(f) for f in failures] if isinstance(failures, list) else [],
    )


class ReplayOfTrace(BaseModel):
    """A stored replay of a trace (a trace whose ``replay_of`` is it), and the verdicts
    of the scenario runs whose item that replay was."""

    trace_id: str
    started_at: datetime | None
    status: str
    verdicts: list[ItemVerdict] = []


_REPLAYS = 50
_REPLAYS_JUDGED = 10  # the newest replays whose runs are looked up (a bounded read each)


async def replays_of(db: Database, trace_id: str, *, limit: int = _REPLAYS) -> list[ReplayOfTrace]:
    """The newest ``limit`` replays of ``trace_id`` in this project (a range read on
    ``(project, replay_of, sort_at)``), the newest ten with their item verdicts."""
    query = (
        select(_TRACES.c.trace_id, _TRACES.c.started_at, _TRACES.c.status)
        .where(_TRACES.c.project == db.project, _TRACES.c.replay_of == trace_id)
        .order_by(_TRACES.c.sort_at.desc(), _TRACES.c.trace_id.desc())
        .limit(limit)
    )
    async with db._read() as connection:
        rows = (await connection.execute(query)).all()
    replays = [
        ReplayOfTrace(trace_id=r.trace_id, started_at=r.started_at, status=r.status) for r in rows
    ]
    for replay in replays[:_REPLAYS_JUDGED]:
        if replay.started_at is not None:
            replay.verdicts = await item_verdicts(db, replay.trace_id, near=replay.started_at)
    return replays


class ItemFromTrace(BaseModel):
    """A stored item made from a trace, and how the newest run of its scenario judged it
    (``None``: no run of that scenario has run it yet)."""

    item_id: str
    scenario_name: str
    label: str
    latest: ItemVerdict | None = None


_ITEMS_MADE = 50


async def items_from_trace(
    db: Database, trace_id: str, *, limit: int = _ITEMS_MADE
) -> list[ItemFromTrace]:
    """The items of this project made from ``trace_id`` (the ``(project, trace_id)``
    index), each with its verdict in the newest run of its scenario: the item summary
    whose ``replay_of`` is the trace (and whose name is the item's, when several are)."""
    query = (
        select(_ITEMS.c.item_id, _ITEMS.c.scenario_name, _ITEMS.c.name)
        .where(_ITEMS.c.project == db.project, _ITEMS.c.trace_id == trace_id)
        .order_by(_ITEMS.c.scenario_name, _ITEMS.c.position)
        .limit(limit)
    )
    async with db._read() as connection:
        rows = (await connection.execute(query)).all()
        latest_runs: dict[str, Any] = {}
        for name in dict.fromkeys(r.scenario_name for r in rows):
            newest = (
                select(_RUNS.c.run_id, _RUNS.c.name, _RUNS.c.started_at, _RUNS.c.document)
                .where(
                    _RUNS.c.project == db.project, _RUNS.c.kind == "scenario", _RUNS.c.name == name
                )
                .order_by(_RUNS.c.sort_at.desc(), _RUNS.c.run_id.desc())
                .limit(1)
            )
            latest_runs[name] = (await connection.execute(newest)).first()
    made = []
    for row in rows:
        label = row.name or f"trace {trace_id}"
        run = latest_runs.get(row.scenario_name)
        latest = None
        if run is not None:
            mine = [i for i in _items_of(run.document) if i.get("replay_of") == trace_id]
            named = [i for i in mine if i.get("name") == label]
            chosen = (named or mine)[:1]
            if chosen:
                latest = _verdict(run, chosen[0])
        made.append(
            ItemFromTrace(
                item_id=row.item_id, scenario_name=row.scenario_name, label=label, latest=latest
            )
        )
    return made


_SCENARIO_NAMES = 200


async def item_scenario_names(db: Database) -> list[str]:
    """The names of this project's scenarios that have stored items (the trace page's
    "make an item" form offers them), at most 200."""
    query = (
        select(_ITEMS.c.scenario_name)
        .where(_ITEMS.c.project == db.project)
        .distinct()
        .order_by(_ITEMS.c.scenario_name)
        .limit(_SCENARIO_NAMES)
    )
    async with db._read() as connection:
        return [str(n) for n in (await connection.execute(query)).scalars()]


class ScenarioRunItems(BaseModel):
    """One Veval-style run of a scenario and the items it ran (``inline``: passed as
    ``items=[...]`` rather than fetched from the stored items)."""

    run_id: str
    started_at: datetime | None
    passed: bool
    inline: bool
    error: str | None = None
    items: list[ItemSummary]


_RUNS_WITH_ITEMS = 10


async def scenario_runs_with_items(
    db: Database, scenario_name: str, *, limit: int = _RUNS_WITH_ITEMS
) -> list[ScenarioRunItems]:
    """The newest ``limit`` runs of the Veval-style scenario ``scenario_name`` in this
    project, with the item summaries each one stored (a range read on
    ``(kind, name, sort_at)``)."""
    query = (
        select(_RUNS.c.run_id, _RUNS.c.started_at, _RUNS.c.document)
        .where(
            _RUNS.c.project == db.project,
            _RUNS.c.kind == "scenario",
            _RUNS.c.name == scenario_name,
        )
        .order_by(_RUNS.c.sort_at.desc(), _RUNS.c.run_id.desc())
        .limit(limit)
    )
    async with db._read() as connection:
        rows = (await connection.execute(query)).all()
    found = []
    for row in rows:
        try:
            document = json.loads(row.document)
        except ValueError:
            continue
        if not isinstance(document, dict):
            continue
        error = document.get("error")
        found.append(
            ScenarioRunItems(
                run_id=row.run_id,
                started_at=row.started_at,
                passed=bool(document.get("passed")),
                inline=bool(document.get("inline_items")),
                error=str(error) if error is not None else None,
                items=_summaries(row.document),
            )
        )
    return found


class RunFacets(BaseModel):
    """The suite names and git branches seen in the newest runs (the overview's filters)."""

    names: list[str]
    branches: list[str]


_FACET_RUNS = 1000


async def run_facets(db: Database) -> RunFacets:
    """Names and branches among the newest 1,000 runs: one range read on the
    ``(sort_at, run_id)`` index, so the filters cost the same on a store of any size."""
    recent = (
        select(_RUNS.c.name, _RUNS.c.git_branch)
        .where(_RUNS.c.project == db.project)
        .order_by(_RUNS.c.sort_at.desc(), _RUNS.c.run_id.desc())
        .limit(_FACET_RUNS)
        .subquery()
    )
    async with db._read() as connection:
        names = (
            await connection.execute(
                select(recent.c.name).where(recent.c.name.is_not(None)).distinct()
            )
        ).scalars()
        found_names = sorted(n for n in names if n)
        branches = (
            await connection.execute(
                select(recent.c.git_branch).where(recent.c.git_branch.is_not(None)).distinct()
            )
        ).scalars()
        found_branches = sorted(b for b in branches if b)
    return RunFacets(names=found_names, branches=found_branches)


async def runs_page(
    db: Database,
    *,
    name: str | None = None,
    branch: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    cursor: str | None = None,
    limit: int = 30,
) -> Page[RunSummary]:
    """The overview's runs, newest first: of one suite or scenario ``name``, on one git
    ``branch``, started in ``[since, until)``. The time bounds and the cursor are a
    range on the ``(sort_at, run_id)`` index. A name is looked up once per run kind, so
    each read is a range on ``(kind, name, sort_at)`` (the index leads with the kind),
    and the two pages are merged here."""
    query = select(*_SUMMARY, _RUNS.c.sort_at).where(_RUNS.c.project == db.project)
    if branch is not None:
        query = query.where(_RUNS.c.git_branch == branch)
    if since is not None:
        query = query.where(_RUNS.c.sort_at >= since)
    if until is not None:
        query = query.where(_RUNS.c.sort_at < until)
    if name is None:
        queries = [query]
    else:
        queries = [query.where(_RUNS.c.kind == k, _RUNS.c.name == name) for k in _RUN_KINDS]
    rows: list[Any] = []
    async with db._read() as connection:
        for one in queries:
            keyed = keyset(one, _RUNS.c.sort_at, _RUNS.c.run_id, cursor, limit)
            rows.extend((await connection.execute(keyed)).all())
    rows.sort(key=lambda row: (row.sort_at, row.run_id), reverse=True)
    return page_of(
        rows,
        limit,
        lambda row: RunSummary.model_validate(row._mapping, from_attributes=False),
        lambda row: (row.sort_at, row.run_id),
    )
