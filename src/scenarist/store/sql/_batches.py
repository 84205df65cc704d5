"""Statements kept under the drivers' bound-argument limits.

asyncpg refuses a statement with more than 32,767 arguments, and SQLite's limit is set
when it is built (999 before 3.32, 32,766 after, 250,000 in Debian's builds). A list of ids
the caller chose (an OTLP export's trace ids, the runs a prune deletes) is therefore
never one ``IN (...)``: it is read or deleted :data:`IN_BATCH` ids at a time. Rows written
with ``execute(statement, rows)`` are an ``executemany``, one set of arguments per row,
which no limit counts; SQLAlchemy's multi-row ``INSERT ... RETURNING`` splits itself under
32,700 arguments.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

__all__ = ["IN_BATCH", "batches"]

T = TypeVar("T")

IN_BATCH = 900
"""Values per ``IN (...)`` list: under the smallest limit any SQLite build has (999), with
room for the statement's other arguments."""


def batches(values: Sequence[T], size: int = IN_BATCH) -> Iterator[Sequence[T]]:
    """``values`` in consecutive slices of at most ``size``."""
    for start in range(0, len(values), size):
        yield values[start : start + size]
