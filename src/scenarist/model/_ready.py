"""``Ready``: a value that is also a coroutine already finished with itself.

giskard-checks' ``Check.run`` and trace methods are coroutines; ours answer at once where
nothing is awaited (a built-in check's verdict, a trace with one more interaction), and
the answer is awaitable so ``await check.run(trace)`` still works. Users also hand those
coroutines to asyncio directly (``asyncio.run(...)``, ``create_task``, ``gather``), which
take any :class:`collections.abc.Coroutine`: ``__await__`` with ``send``, ``throw`` and
``close``. A ``Ready`` value is one that stops at its first step with itself. ``gather``
also puts its arguments in a dict, so each class defines a ``__hash__`` consistent with
its equality.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, NoReturn, Self

__all__ = ["Ready"]


class Ready:
    """Mixin: awaiting the value, or running it as a coroutine, gives the value itself."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, Self]:
        return self
        yield  # pragma: no cover - makes this a generator

    def send(self, value: Any) -> NoReturn:
        """As a finished coroutine: stop at once with this value."""
        raise StopIteration(self)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> NoReturn:
        """As a coroutine: an exception thrown in is raised (nothing is pending)."""
        if isinstance(typ, BaseException):
            raise typ
        raise typ if val is None else val

    def close(self) -> None:
        """As a coroutine: nothing to release."""
