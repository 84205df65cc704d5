"""``/traces``: the trace browser, and its JSON twin (``/traces.json``).

The project's traces newest first, filtered by agent, status, start date, cost, replay
and text found in the trace (input, output, spans, metadata; any case), a page at a
time (``Older traces →`` carries the filters and the cursor). Each row: when, the
trace (a link to its page), agent, status, a replay badge linking the original, duration,
cost, spans, and the start of its input and output. The filters are plain query
parameters (``agent``, ``status``, ``since``/``until`` as ``YYYY-MM-DD``, ``min_cost``/
``max_cost`` in USD, ``replay=only|none``, ``q``), so a filtered view is a link.

The text filter reads the documents it looks in, so a page looks in at most
:data:`TEXT_SEARCH_WINDOW` traces (the newest after the cursor that pass the other
filters); when they run out before the page fills, the page says how far back it searched
and ``Search older traces →`` goes on from there (``docs/design/performance.md``).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Annotated, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel

from scenarist.errors import UserError
from scenarist.server._deps import Cursor, Read, Store
from scenarist.server._input_limits import CheckedRoute
from scenarist.server.dashboard._render import page_format, render
from scenarist.store.sql.records import TraceSummary

__all__ = ["TraceFilters", "TraceListPage", "router"]

router = APIRouter(include_in_schema=False, route_class=CheckedRoute)

ReplayChoice = Literal["only", "none"]
TEXT_SEARCH_WINDOW = 2_000
"""Traces a text search looks in per page: at 1,000,000 check results and 50,000 traces,
searching them all took seconds (``bench/README.md``, "server_bench.py")."""


class TraceFilters(BaseModel):
    """The trace browser's filters; ``None`` is "any"."""

    agent: str | None = None
    status: str | None = None
    since: date | None = None
    until: date | None = None
    """Inclusive: traces started on this day are shown."""
    min_cost: float | None = None
    max_cost: float | None = None
    replay: ReplayChoice | None = None
    q: str | None = None

    @property
    def active(self) -> bool:
        return any(value is not None for value in self.model_dump().values())

    def query(self, **extra: str) -> str:
        """These filters (and ``extra``) as a query string, for links."""
        pairs = {k: str(v) for k, v in self.model_dump().items() if v is not None}
        return urlencode({**pairs, **extra})


class TraceListPage(BaseModel):
    filters: TraceFilters
    traces: list[TraceSummary]
    next_cursor: str | None = None
    next_href: str | None = None
    """``/traces?...&cursor=...``: the next page with the same filters."""
    search_window: int | None = None
    """With a text filter: how many traces the search looked in at most."""
    searched_to: datetime | None = None
    """The window ran out before the page filled: the oldest trace searched started then,
    and ``next_href`` searches older ones."""


def _day(value: date | None, *, end: bool = False) -> datetime | None:
    if value is None:
        return None
    return datetime.combine(value + timedelta(days=1 if end else 0), time(), UTC)


def _text(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


@router.get("/traces", dependencies=[Read])
@router.get("/traces.json", dependencies=[Read])
async def trace_list(
    request: Request,
    store: Store,
    agent: Annotated[str | None, Query(max_length=200)] = None,
    status: Annotated[str | None, Query(max_length=32)] = None,
    since: Annotated[str | None, Query(max_length=10)] = None,
    until: Annotated[str | None, Query(max_length=10)] = None,
    min_cost: Annotated[str | None, Query(max_length=32)] = None,
    max_cost: Annotated[str | None, Query(max_length=32)] = None,
    replay: Annotated[str | None, Query(max_length=8)] = None,
    q: Annotated[str | None, Query(max_length=500)] = None,
    cursor: Cursor = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> Response:
    """The trace browser (HTML, or its JSON twin)."""
    wants_json = page_format(request)[1] or request.url.path.endswith(".json")
    filters = TraceFilters(
        agent=_text(agent),
        status=_text(status),
        since=_date(since, "since"),
        until=_date(until, "until"),
        min_cost=_money(min_cost, "min_cost"),
        max_cost=_money(max_cost, "max_cost"),
        replay=_replay(replay),
        q=_text(q),
    )
    page = await store.search_traces(
        agent_name=filters.agent,
        status=filters.status,
        since=_day(filters.since),
        until=_day(filters.until, end=True),
        min_cost=filters.min_cost,
        max_cost=filters.max_cost,
        replay=None if filters.replay is None else filters.replay == "only",
        text=filters.q,
        previews=True,
        cursor=cursor,
        limit=limit,
        scan_limit=TEXT_SEARCH_WINDOW,
    )
    next_href = None
    if page.next_cursor is not None:
        extra = {"cursor": page.next_cursor} | ({"limit": str(limit)} if limit != 50 else {})
        next_href = "/traces?" + filters.query(**extra)
    view = TraceListPage(
        filters=filters,
        traces=page.items,
        next_cursor=page.next_cursor,
        next_href=next_href,
        search_window=page.search_window,
        searched_to=page.searched_to,
    )
    return render("traces.html", view, wants_json=wants_json)


def _date(value: str | None, field: str) -> date | None:
    if not _text(value):
        return None
    try:
        return date.fromisoformat(str(value).strip())
    except ValueError:
        raise UserError(f"{field}={value!r} is not a date: use YYYY-MM-DD") from None


def _money(value: str | None, field: str) -> float | None:
    if not _text(value):
        return None
    try:
        amount = float(str(value).strip().removeprefix("$"))
    except ValueError:
        amount = -1.0
    if not 0 <= amount < float("inf"):
        raise UserError(f"{field}={value!r} is not an amount: use US dollars, e.g. 0.05")
    return amount


def _replay(value: str | None) -> ReplayChoice | None:
    value = _text(value)
    if value is None or value == "any":
        return None
    if value not in ("only", "none"):
        raise UserError(f"replay={value!r}: use only, none or any")
    return "only" if value == "only" else "none"
