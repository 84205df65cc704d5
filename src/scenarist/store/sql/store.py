"""``SqlStore``: the :class:`~scenarist.store.Store` protocol on SQLite or PostgreSQL.

The server keeps everything through one of these, and a library user can too::

    client = Client(store=SqlStore("postgresql://ci@db/scenarist"))

Besides the protocol it ingests run logs, answers the API's queries (runs, history, trace
search) and manages API keys (see :mod:`.runs` and :mod:`.keys`). The schema is migrated
to the latest version on first use.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, and_, bindparam, delete, false, func, select, text, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from scenarist.model.items import ScenarioItem
from scenarist.model.record import TraceRecord, with_total
from scenarist.store.sql._batches import batches
from scenarist.store.sql._paging import keyset, page_of, parse_time
from scenarist.store.sql._rows import check_name, dumps, snapshot_row, trace_row
from scenarist.store.sql.keys import KeyQueries
from scenarist.store.sql.live import LiveRunQueries
from scenarist.store.sql.models import ScenarioItemRow, SnapshotRow, TraceRow, table_of
from scenarist.store.sql.projects import ProjectQueries, ensure_project
from scenarist.store.sql.records import (
    TRACE_SUMMARY_COLUMNS,
    Page,
    SnapshotInfo,
    TracePage,
    TraceSummary,
    decode_cursor,
    encode_cursor,
)
from scenarist.store.sql.retention import RetentionQueries
from scenarist.store.sql.reviews import ReviewQueries
from scenarist.store.sql.runs import RunQueries

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

    from scenarist.replay.snapshots import SnapshotData

__all__ = ["SqlStore"]

_TRACES = table_of(TraceRow)
_ITEMS = table_of(ScenarioItemRow)
_SNAPSHOTS = table_of(SnapshotRow)
_TRACE_SUMMARY = [_TRACES.c[name] for name in TRACE_SUMMARY_COLUMNS]
PREVIEW_CHARS = 200


def _contains(text: str) -> str:
    """A ``LIKE`` pattern for ``text`` inside a stored JSON document: the text as JSON
    writes it (quotes and newlines escaped), then ``\\``, ``%`` and ``_`` escaped."""
    encoded = json.dumps(text, ensure_ascii=False)[1:-1]
    for char in ("\\", "%", "_"):
        encoded = encoded.replace(char, "\\" + char)
    return f"%{encoded}%"


def _preview(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _trace_summary(row: Any) -> TraceSummary:
    data = dict(row._mapping)
    document = data.pop("document", None)
    if document is not None:
        try:
            parsed = json.loads(document)
        except ValueError:
            parsed = {}
        data["input_preview"] = _preview(parsed.get("input"))
        data["output_preview"] = _preview(parsed.get("output"))
    return TraceSummary.model_validate(data)


def _item_row(
    scenario_name: str, position: int, item: ScenarioItem, now: datetime, project: str
) -> dict[str, Any]:
    return {
        "item_id": "item_" + secrets.token_hex(10),
        "project": project,
        "scenario_name": scenario_name,
        "position": position,
        "name": check_name(item.name, "item name"),
        "trace_id": check_name(item.trace_id, "trace_id"),
        "updated_at": now,
        "document": dumps(item),
    }


class SqlStore(
    RunQueries, KeyQueries, RetentionQueries, ProjectQueries, ReviewQueries, LiveRunQueries
):
    """The store on a SQL database: ``SqlStore()`` (SQLite at the default path, or
    ``SCENARIST_DATABASE_URL``), ``SqlStore("sqlite:///runs.db")``,
    ``SqlStore("postgresql://user@host/db")``. See :class:`~.engine.Database` for
    ``pooled`` and ``migrate``."""

    # -- traces --------------------------------------------------------------------------

    async def save_trace(self, record: TraceRecord) -> None:
        """Store (or replace) one agent run, with its total (``with_total``)."""
        row = {**trace_row(record, datetime.now(UTC)), "project": self.project}
        statement = self._upsert(_TRACES, row, ("project", "trace_id"))

        async def write(connection: AsyncConnection) -> None:
            await ensure_project(self, connection, row["project"])
            await connection.execute(statement, row)

        await self._batched(write)

    async def save_traces(self, records: list[TraceRecord]) -> None:
        """Store (or replace) several agent runs in one statement: one ``executemany``
        instead of a round trip per trace. A trace id given twice keeps its last record,
        as two ``save_trace`` calls would."""
        if not records:
            return
        now, project = datetime.now(UTC), self.project

        def rows_of() -> list[dict[str, Any]]:
            last = {r.trace_id: r for r in records}.values()
            return [{**trace_row(r, now), "project": project} for r in last]

        # Serialising a receiver's batch takes seconds at tens of thousands of spans: in a
        # worker thread, so the event loop keeps serving other requests meanwhile.
        rows = await asyncio.to_thread(rows_of)
        statement = self._upsert(_TRACES, rows[0], ("project", "trace_id"))

        async def write(connection: AsyncConnection) -> None:
            await ensure_project(self, connection, project)
            await connection.execute(statement, rows)

        await self._batched(write)

    async def merge_traces(
        self, records: list[TraceRecord], merge: Callable[[TraceRecord, TraceRecord], TraceRecord]
    ) -> None:
        """Store ``records`` (the OTLP receiver's batches), each merged with the trace of
        its id already stored in this project: ``merge(stored, new)``; a trace is never
        replaced by a later batch of its spans.

        Read, merge and write are one transaction, and the stored rows are locked as they
        are read (PostgreSQL ``FOR UPDATE``; SQLite takes its one write lock before
        reading), so batches of one trace arriving at once (services exporting their
        spans of one distributed trace) all land. A new trace inserted meanwhile by
        another request is read again and merged. Ids are read :data:`~._batches.IN_BATCH`
        at a time (any number of traces, under the drivers' argument limits)."""
        incoming: dict[str, TraceRecord] = {}
        for record in records:
            before = incoming.get(record.trace_id)
            incoming[record.trace_id] = record if before is None else merge(before, record)
        if not incoming:
            return
        for attempt in range(5):
            try:
                await self._merge_traces(incoming, merge)
                return
            except DBAPIError as exc:  # PostgreSQL chose this transaction to break a deadlock
                if getattr(exc.orig, "sqlstate", None) not in ("40P01", "40001") or attempt == 4:
                    raise

    async def _merge_traces(
        self,
        incoming: dict[str, TraceRecord],
        merge: Callable[[TraceRecord, TraceRecord], TraceRecord],
    ) -> None:
        project, now = self.project, datetime.now(UTC)
        ids = sorted(incoming)  # rows locked and inserted in one order: no deadlock between two
        async with self._write() as connection:
            if self.dialect == "sqlite":  # a write first: the database's write lock, so
                # no other process writes between the reads and the writes below
                await connection.execute(update(_TRACES).where(false()).values(pinned=False))
            await ensure_project(self, connection, project)
            await self._plan_each_list(connection)
            stored = await _traces_for_update(connection, ids, project)
            fresh = [
                {**trace_row(incoming[i], now), "project": project} for i in ids if i not in stored
            ]
            if fresh:
                insert = self._insert(_TRACES).on_conflict_do_nothing()
                if self.dialect == "postgresql":
                    done = await connection.execute(insert.returning(_TRACES.c.trace_id), fresh)
                    inserted = set(done.scalars().all())
                    raced = [row["trace_id"] for row in fresh if row["trace_id"] not in inserted]
                    if raced:  # inserted by a request that committed meanwhile: merge with it
                        stored.update(await _traces_for_update(connection, raced, project))
                else:
                    await connection.execute(insert, fresh)
            changed = []
            for trace_id in ids:
                if trace_id in stored:
                    row = trace_row(merge(stored[trace_id], incoming[trace_id]), now)
                    changed.append({**row, "old_trace_id": row.pop("trace_id")})
            if changed:
                statement = update(_TRACES).where(
                    _TRACES.c.trace_id == bindparam("old_trace_id"),
                    _TRACES.c.project == project,
                )
                await connection.execute(statement, changed)

    async def _plan_each_list(self, connection: AsyncConnection) -> None:
        """PostgreSQL plans each ``IN (...)`` of this transaction for its values: a
        prepared statement's generic plan tests every row against every one of 900
        parameters (0.6 s a batch at 9,000 rows, against 20 ms planned with the values,
        which PostgreSQL then looks up in a hash)."""
        if self.dialect == "postgresql":
            await connection.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))

    async def get_trace(self, trace_id: str) -> TraceRecord | None:
        async with self._read() as connection:
            document = await connection.scalar(
                select(_TRACES.c.document).where(
                    _TRACES.c.trace_id == trace_id, _TRACES.c.project == self.project
                )
            )
        return None if document is None else _load_trace(document)

    async def get_traces(self, trace_ids: list[str]) -> dict[str, TraceRecord]:
        """The stored ones of ``trace_ids``: one query per :data:`~._batches.IN_BATCH` ids."""
        found: dict[str, TraceRecord] = {}
        async with self._read() as connection:
            await self._plan_each_list(connection)
            for batch in batches(sorted(set(trace_ids))):  # under the drivers' argument limits
                rows = await connection.execute(
                    select(_TRACES.c.trace_id, _TRACES.c.document).where(
                        _TRACES.c.trace_id.in_(batch), _TRACES.c.project == self.project
                    )
                )
                found.update((trace_id, _load_trace(document)) for trace_id, document in rows)
        return found

    async def search_traces(
        self,
        *,
        agent_name: str | None = None,
        status: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
        since: datetime | None = None,
        until: datetime | None = None,
        min_cost: float | None = None,
        max_cost: float | None = None,
        replay: bool | None = None,
        text: str | None = None,
        previews: bool = False,
        scan_limit: int | None = None,
    ) -> TracePage:
        """Traces, newest first, filtered: one agent, one status, started in
        ``[since, until)``, cost in ``[min_cost, max_cost]`` (a bound leaves out traces of
        unknown cost), replays only (``replay=True``) or none, and ``text`` found in the
        trace (its input, output, spans and metadata, any case). ``previews``: each summary
        carries the start of its input and output as text (reads the page's documents).
        ``scan_limit``: ``text`` is looked for in at most that many traces, the newest
        after ``cursor`` that pass the other filters (the search reads every document it
        looks in: at 50,000 traces a page took seconds); when they run out before the
        page fills, the page's ``searched_to`` and ``next_cursor`` say where it stopped."""
        columns = [*_TRACE_SUMMARY, _TRACES.c.sort_at]
        if previews:
            columns.append(_TRACES.c.document)
        query = select(*columns).where(_TRACES.c.project == self.project)
        if agent_name is not None:
            query = query.where(_TRACES.c.agent_name == agent_name)
        if status is not None:
            query = query.where(_TRACES.c.status == status)
        if since is not None:
            query = query.where(_TRACES.c.sort_at >= since)
        if until is not None:
            query = query.where(_TRACES.c.sort_at < until)
        if min_cost is not None:
            query = query.where(_TRACES.c.cost_usd >= min_cost)
        if max_cost is not None:
            query = query.where(_TRACES.c.cost_usd <= max_cost)
        if replay is not None:
            query = query.where(_TRACES.c.is_replay.is_(replay))
        if text and scan_limit is not None:
            return await self._search_window(query, text, cursor, limit, scan_limit)
        if text:
            query = query.where(_TRACES.c.document.ilike(_contains(text), escape="\\"))
        query = keyset(query, _TRACES.c.sort_at, _TRACES.c.trace_id, cursor, limit)
        async with self._read() as connection:
            rows = (await connection.execute(query)).all()
        page = page_of(rows, limit, _trace_summary, lambda row: (row.sort_at, row.trace_id))
        return TracePage(items=page.items, next_cursor=page.next_cursor)

    async def _search_window(
        self, query: Select[Any], text: str, cursor: str | None, limit: int, scan_limit: int
    ) -> TracePage:
        """``query``'s text search within the ``scan_limit`` newest traces after ``cursor``
        (see :meth:`search_traces`). The window is a subquery with its own ``LIMIT``, read
        through the time index with the documents, and the text is matched outside it: no
        database pushes a condition into a limited subquery. (Joined back to the table,
        PostgreSQL chose to match the text over every trace first, then join: 1.3 s.)"""
        at, key, document = _TRACES.c.sort_at, _TRACES.c.trace_id, _TRACES.c.document
        shown = list(query.selected_columns)
        inner = shown if any(c is document for c in shown) else [*shown, document]
        window = (
            keyset(query.with_only_columns(*inner), at, key, cursor, scan_limit)
            .limit(scan_limit)
            .subquery("window")
        )
        found = (
            select(*(window.c[c.name] for c in shown))
            .where(window.c.document.ilike(_contains(text), escape="\\"))
            .order_by(window.c.sort_at.desc(), window.c.trace_id.desc())
            .limit(limit + 1)
        )
        ids = (
            keyset(query.with_only_columns(key, at), at, key, cursor, scan_limit)
            .limit(scan_limit)
            .subquery("ids")
        )
        oldest = (
            select(ids.c.sort_at, ids.c.trace_id, func.count().over())
            .order_by(ids.c.sort_at, ids.c.trace_id)
            .limit(1)
        )
        async with self._read() as connection:
            rows = (await connection.execute(found)).all()
            edge = None if len(rows) > limit else (await connection.execute(oldest)).first()
        page = page_of(rows, limit, _trace_summary, lambda row: (row.sort_at, row.trace_id))
        result = TracePage(items=page.items, next_cursor=page.next_cursor, search_window=scan_limit)
        if edge is not None and edge[2] >= scan_limit:  # the window ran out, older ones left
            result.searched_to = parse_time(edge[0])
            result.next_cursor = encode_cursor(result.searched_to, edge[1])
        return result

    # -- scenario items ------------------------------------------------------------------

    async def get_items(self, scenario_name: str) -> list[ScenarioItem]:
        return [item for _, item in await self.items_with_ids(scenario_name)]

    async def items_with_ids(self, scenario_name: str) -> list[tuple[str, ScenarioItem]]:
        """The items of ``scenario_name`` in order, each with its id."""
        query = (
            select(_ITEMS.c.item_id, _ITEMS.c.document)
            .where(_ITEMS.c.scenario_name == scenario_name, _ITEMS.c.project == self.project)
            .order_by(_ITEMS.c.position, _ITEMS.c.item_id)
        )
        async with self._read() as connection:
            rows = (await connection.execute(query)).all()
        return [(row.item_id, ScenarioItem.model_validate_json(row.document)) for row in rows]

    async def save_items(self, scenario_name: str, items: list[ScenarioItem]) -> None:
        """Replace the items of ``scenario_name`` (one transaction)."""
        check_name(scenario_name, "scenario name")
        now = datetime.now(UTC)
        project = self.project
        rows = [_item_row(scenario_name, i, item, now, project) for i, item in enumerate(items)]
        async with self._write() as connection:
            await ensure_project(self, connection, project)
            await connection.execute(
                delete(_ITEMS).where(
                    _ITEMS.c.scenario_name == scenario_name, _ITEMS.c.project == project
                )
            )
            if rows:
                await connection.execute(_ITEMS.insert(), rows)

    async def add_item(self, scenario_name: str, item: ScenarioItem) -> str:
        """Append one item to ``scenario_name``; its new id."""
        check_name(scenario_name, "scenario name")
        async with self._write() as connection:
            last = await connection.scalar(
                select(func.max(_ITEMS.c.position)).where(
                    _ITEMS.c.scenario_name == scenario_name, _ITEMS.c.project == self.project
                )
            )
            position = 0 if last is None else last + 1
            row = _item_row(scenario_name, position, item, datetime.now(UTC), self.project)
            await ensure_project(self, connection, self.project)
            await connection.execute(_ITEMS.insert(), [row])
        return str(row["item_id"])

    async def replace_item(self, scenario_name: str, item_id: str, item: ScenarioItem) -> bool:
        """Replace one item in place; false when ``scenario_name`` has no such item."""
        values = _item_row(scenario_name, 0, item, datetime.now(UTC), self.project)
        del values["item_id"], values["position"]
        async with self._write() as connection:
            done = await connection.execute(
                update(_ITEMS)
                .where(
                    _ITEMS.c.item_id == item_id,
                    _ITEMS.c.scenario_name == scenario_name,
                    _ITEMS.c.project == self.project,
                )
                .values(values)
            )
        return bool(done.rowcount)

    async def delete_item(self, scenario_name: str, item_id: str) -> bool:
        """Delete one item; false when ``scenario_name`` has no such item."""
        async with self._write() as connection:
            done = await connection.execute(
                delete(_ITEMS).where(
                    _ITEMS.c.item_id == item_id,
                    _ITEMS.c.scenario_name == scenario_name,
                    _ITEMS.c.project == self.project,
                )
            )
        return bool(done.rowcount)

    # -- snapshots -----------------------------------------------------------------------

    async def save_snapshot(
        self, name: str, snapshot: SnapshotData, *, pinned: bool = False
    ) -> None:
        """Store ``snapshot`` as the next version of ``name`` (reads get the latest).

        Saving the same content as the latest version adds no version, so a re-sent
        upload is stored once."""
        check_name(name, "snapshot name")  # before the name is looked up
        project = self.project
        for attempt in range(5):
            try:
                async with self._write() as connection:
                    await ensure_project(self, connection, project)
                    await self._insert_snapshot(connection, project, name, snapshot, pinned)
                return
            except IntegrityError:  # a concurrent save took that version: take the next
                if attempt == 4:
                    raise

    async def _insert_snapshot(
        self,
        connection: AsyncConnection,
        project: str,
        name: str,
        snapshot: SnapshotData,
        pinned: bool,
    ) -> None:
        mine = and_(_SNAPSHOTS.c.project == project, _SNAPSHOTS.c.name == name)
        latest = (
            await connection.execute(
                select(_SNAPSHOTS.c.version, _SNAPSHOTS.c.document, _SNAPSHOTS.c.pinned)
                .where(mine)
                .order_by(_SNAPSHOTS.c.version.desc())
                .limit(1)
            )
        ).first()
        row = snapshot_row(name, (latest.version if latest else 0) + 1, snapshot, pinned)
        row["project"] = project
        if latest is not None and latest.document == row["document"]:
            # the same snapshot again (a retried or re-sent upload): no new version
            if pinned and not latest.pinned:
                await connection.execute(
                    update(_SNAPSHOTS)
                    .where(mine, _SNAPSHOTS.c.version == latest.version)
                    .values(pinned=True)
                )
            return
        await connection.execute(_SNAPSHOTS.insert(), [row])

    async def get_snapshot(self, name: str) -> SnapshotData | None:
        from scenarist.replay.snapshots import SnapshotData

        query = (
            select(_SNAPSHOTS.c.document)
            .where(_SNAPSHOTS.c.project == self.project, _SNAPSHOTS.c.name == name)
            .order_by(_SNAPSHOTS.c.version.desc())
            .limit(1)
        )
        async with self._read() as connection:
            document = await connection.scalar(query)
        return None if document is None else SnapshotData.model_validate_json(document)

    async def list_snapshots(
        self, *, cursor: str | None = None, limit: int = 50
    ) -> Page[SnapshotInfo]:
        """The latest version of every snapshot of this project, by name."""
        latest = (
            select(_SNAPSHOTS.c.name, func.max(_SNAPSHOTS.c.version).label("version"))
            .where(_SNAPSHOTS.c.project == self.project)
            .group_by(_SNAPSHOTS.c.name)
            .subquery()
        )
        query = select(
            _SNAPSHOTS.c.name,
            _SNAPSHOTS.c.version,
            _SNAPSHOTS.c.trace_id,
            _SNAPSHOTS.c.created_at,
            _SNAPSHOTS.c.pinned,
        ).join(
            latest,
            and_(
                _SNAPSHOTS.c.project == self.project,
                _SNAPSHOTS.c.name == latest.c.name,
                _SNAPSHOTS.c.version == latest.c.version,
            ),
        )
        if cursor is not None:
            (after,) = decode_cursor(cursor, size=1)
            query = query.where(_SNAPSHOTS.c.name > str(after))
        query = query.order_by(_SNAPSHOTS.c.name).limit(limit + 1)
        async with self._read() as connection:
            rows = (await connection.execute(query)).all()
        more = len(rows) > limit
        rows = rows[:limit]
        return Page(
            items=[SnapshotInfo.model_validate(dict(row._mapping)) for row in rows],
            next_cursor=encode_cursor(rows[-1].name) if rows and more else None,
        )


async def _traces_for_update(
    connection: AsyncConnection, trace_ids: list[str], project: str
) -> dict[str, TraceRecord]:
    """The stored ones of ``trace_ids`` (sorted) in ``project``, their rows locked until
    the transaction ends (PostgreSQL; SQLite's one writer needs no row lock)."""
    found: dict[str, TraceRecord] = {}
    for batch in batches(trace_ids):
        query = (
            select(_TRACES.c.trace_id, _TRACES.c.document)
            .where(_TRACES.c.trace_id.in_(batch), _TRACES.c.project == project)
            .order_by(_TRACES.c.trace_id)
            .with_for_update()
        )
        rows = await connection.execute(query)
        found.update((trace_id, _load_trace(document)) for trace_id, document in rows)
    return found


def _load_trace(document: str) -> TraceRecord:
    """A stored trace; one stored before records kept their total gets it computed."""
    return with_total(TraceRecord.model_validate_json(document))
