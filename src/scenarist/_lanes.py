"""Cassette lanes: which scenario (or item) the LLM calls of this context belong to.

A cassette records calls in arrival order; scenarios run in parallel interleave them
at random. Each call is therefore taped with the lane of the context that made it, and a
replay answers a call only from its own lane's recordings, so every scenario gets exactly
its own responses whatever the timing. ``Suite`` runs each scenario in the lane
``scenario:<name>``, the item runner each item in ``<scenario>:item:<name or index>``;
code running its own concurrent work under one cassette names lanes with :func:`lane`.
A context variable: each task and thread has its own; the innermost lane wins.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["current_lane", "lane"]

_lane: ContextVar[str | None] = ContextVar("scenarist_cassette_lane", default=None)


def current_lane() -> str | None:
    """The lane of this context, or ``None`` outside any."""
    return _lane.get()


@contextmanager
def lane(name: str) -> Iterator[None]:
    """LLM calls made in this block are taped to, and replayed from, the lane ``name``."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"a cassette lane is a non-empty string, got {name!r}")
    token = _lane.set(name)
    try:
        yield
    finally:
        _lane.reset(token)
