"""Keyset pagination by ``(time, id)``: the one way lists of runs and traces are paged.

A page asks for one row more than its size to know whether a next page exists; its cursor
is the sort key of its last row, so the next page starts strictly after it even while new
rows arrive.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import Select, and_, or_

from scenarist.errors import UserError
from scenarist.store.sql.records import Page, decode_cursor, encode_cursor

__all__ = ["cursor_time", "keyset", "page_of", "parse_time"]

T = TypeVar("T")


def parse_time(value: Any) -> datetime:
    """A stored or cursor timestamp as an aware datetime (naive values are UTC)."""
    parsed = datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def cursor_time(value: str, cursor: str) -> datetime:
    """The time inside a cursor; one that is not an ISO time is a ``UserError``."""
    try:
        return parse_time(value)
    except ValueError:
        raise UserError(f"invalid cursor {cursor!r}: pass back a next_cursor value") from None


def keyset(
    query: Select[Any],
    at: Any,
    key: Any,
    cursor: str | None,
    limit: int,
    *,
    newest_first: bool = True,
) -> Select[Any]:
    """``query`` ordered by ``(at, key)``, resumed after ``cursor``, ``limit + 1`` rows."""
    if cursor is not None:
        raw_at, last_key = decode_cursor(cursor, size=2)
        last_at = cursor_time(raw_at, cursor)
        if newest_first:
            query = query.where(or_(at < last_at, and_(at == last_at, key < last_key)))
        else:
            query = query.where(or_(at > last_at, and_(at == last_at, key > last_key)))
    order = (at.desc(), key.desc()) if newest_first else (at, key)
    return query.order_by(*order).limit(limit + 1)


def page_of(
    rows: Sequence[Any], limit: int, item: Callable[[Any], T], key: Callable[[Any], tuple[Any, ...]]
) -> Page[T]:
    """The page of ``rows`` (fetched by :func:`keyset`) and the cursor of the next one."""
    more = len(rows) > limit
    shown = rows[:limit]
    last = shown[-1] if shown and more else None
    return Page(
        items=[item(row) for row in shown],
        next_cursor=encode_cursor(*key(last)) if last is not None else None,
    )
