"""Many rows into one table: SQLAlchemy's ``executemany``, without its per-row work on
SQLite.

SQLAlchemy builds each row's parameters (``construct_params``) and runs every value through
its column type's bind processor, row by row: about 5 µs a row beyond what the driver
does, 0.1 s of CPU for the 20,000 rows of a 10,000-scenario run log
(``bench/replay_at_scale.py``). On SQLite, :func:`insert_rows` compiles the ``INSERT``
once, as SQLAlchemy would for these columns, and hands the driver plain tuples made with
the same processors (each column type's own ``bind_processor``); a value every row shares
(the run's ``sort_at``) is processed once. The stored values are the same (a test
compares both paths row by row). PostgreSQL keeps SQLAlchemy's path (asyncpg has its own
types and parameter style), and so does a statement that would bind anything but the
rows' columns (a column default computed in Python).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy import Table
    from sqlalchemy.ext.asyncio import AsyncConnection

__all__ = ["BATCH", "insert_rows"]

BATCH = 2000
"""Rows a statement: an ``executemany`` has no argument limit, this bounds the tuples made
at once."""

Processor = Callable[[Any], Any]


async def insert_rows(
    connection: AsyncConnection, table: Table, rows: Sequence[dict[str, Any]]
) -> None:
    """Insert ``rows`` (each with the same keys, every one a column of ``table``)."""
    if not rows:
        return
    plan = (
        _sqlite_plan(connection, table, list(rows[0]))
        if connection.dialect.name == "sqlite"
        else None
    )
    for start in range(0, len(rows), BATCH):
        batch = rows[start : start + BATCH]
        if plan is None:
            await connection.execute(table.insert(), list(batch))
            continue
        sql, columns = plan
        await connection.exec_driver_sql(sql, _tuples(batch, columns))


def _sqlite_plan(
    connection: AsyncConnection, table: Table, names: list[str]
) -> tuple[str, list[tuple[str, Processor | None]]] | None:
    """The ``INSERT`` SQLAlchemy would run for rows with ``names``, and each of its
    parameters' column and processor in order; ``None`` when it binds anything else."""
    dialect = connection.dialect
    compiled = table.insert().compile(dialect=dialect, column_keys=names, for_executemany=True)
    order = compiled.positiontup
    if order is None or sorted(order) != sorted(names):
        return None
    columns: list[tuple[str, Processor | None]] = [
        (name, table.c[name].type.dialect_impl(dialect).bind_processor(dialect)) for name in order
    ]
    return str(compiled), columns


def _tuples(
    rows: Sequence[dict[str, Any]], columns: list[tuple[str, Processor | None]]
) -> list[tuple[Any, ...]]:
    """Each row's values in ``columns``' order, processed as SQLAlchemy would. A value
    that is the very object the previous row had in its column (the run's ``sort_at``) is
    processed once: the processors are pure functions of the value."""
    values_of = itemgetter(*(name for name, _ in columns))
    if len(columns) == 1:
        return [(values_of(row),) for row in rows]
    processed = [(i, process) for i, (_, process) in enumerate(columns) if process is not None]
    if not processed:
        return [values_of(row) for row in rows]
    last: list[Any] = [_NOTHING] * len(columns)
    results: list[Any] = [None] * len(columns)
    out = []
    for row in rows:
        values = list(values_of(row))
        for i, process in processed:
            value = values[i]
            if value is not last[i]:
                last[i], results[i] = value, process(value)
            values[i] = results[i]
        out.append(tuple(values))
    return out


_NOTHING = object()
