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

from contextvars import ContextVar, Token

__all__ = ["current_lane", "lane"]

_lane: ContextVar[str | None] = ContextVar("scenarist_cassette_lane", default=None)


def current_lane() -> str | None:
    """The lane of this context, or ``None`` outside any."""
    return _lane.get()


class lane:  # lower case: used as a function, `with lane("name"):`
    """LLM calls made in this block are taped to, and replayed from, the lane ``name``.

    A class rather than a ``@contextmanager`` generator: every scenario of a suite enters
    one, and a generator costs three frames more per entry."""

    __slots__ = ("_name", "_token")

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"a cassette lane is a non-empty string, got {name!r}")
        self._name = name
        self._token: Token[str | None] | None = None

    def __enter__(self) -> None:
        self._token = _lane.set(self._name)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _lane.reset(self._token)
            self._token = None
