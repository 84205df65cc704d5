"""``max_concurrency="auto"``: how many scenarios run at once, found by AIMD.

A fixed ``max_concurrency`` is a guess: too low wastes the provider's capacity, too
high turns into 429s and timeouts. :class:`AdaptiveConcurrency` starts low and adjusts
from what the agent's LLM calls meet at the HTTP layer (see
:mod:`scenarist.tracing.http._throttle`), as TCP does:

* additive increase: after ``level`` successful calls in a row, one more slot;
* multiplicative decrease: a 429, a 5xx, a timeout or a connection error halves the
  level (never below ``minimum``), at most once per round of ``level`` calls, so one
  burst of errors counts once.

The level never exceeds ``cap`` (the user's bound). Scenarios that make no LLM call
give no signal and the level stays where it is. Thread-safe: sync agents running in
worker threads report too.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

__all__ = ["AUTO", "DEFAULT_AUTO_CAP", "AdaptiveConcurrency"]

AUTO = "auto"
DEFAULT_AUTO_CAP = 64
"""The bound of ``max_concurrency="auto"`` (give ``AdaptiveConcurrency(cap=N)`` for another)."""


class AdaptiveConcurrency:
    """A concurrency level between ``minimum`` and ``cap`` that follows congestion."""

    def __init__(self, cap: int = DEFAULT_AUTO_CAP, *, initial: int = 4, minimum: int = 1) -> None:
        for name, value in (("cap", cap), ("initial", initial), ("minimum", minimum)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"AdaptiveConcurrency {name} must be an int >= 1, got {value!r}")
        if minimum > cap:
            raise ValueError(f"AdaptiveConcurrency minimum ({minimum}) exceeds cap ({cap})")
        self.cap, self.minimum = cap, minimum
        self._level = max(minimum, min(initial, cap))
        self._lock = threading.Lock()
        self._active = 0
        self._streak = 0  # successes since the last change
        self._since_decrease = self._level  # calls seen since the last decrease
        self._waiters: list[Any] = []  # futures of tasks waiting for a slot
        self.peak = self._level
        self.decreases = 0

    def __repr__(self) -> str:
        return f"AdaptiveConcurrency(level={self._level}, cap={self.cap})"

    @property
    def level(self) -> int:
        return self._level

    @property
    def active(self) -> int:
        return self._active

    def succeeded(self) -> None:
        """A call went through: one more slot after ``level`` of them."""
        with self._lock:
            self._since_decrease += 1
            self._streak += 1
            if self._streak >= self._level and self._level < self.cap:
                self._level += 1
                self._streak = 0
                self.peak = max(self.peak, self._level)
                self._wake()

    def congested(self) -> None:
        """A call met congestion: halve the level (once per round)."""
        with self._lock:
            self._streak = 0
            if self._since_decrease < self._level or self._level == self.minimum:
                self._since_decrease += 1
                return
            self._level = max(self.minimum, self._level // 2)
            self._since_decrease = 0
            self.decreases += 1

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the ``level`` slots while the block runs (waits for one if full)."""
        import asyncio

        while True:
            with self._lock:
                if self._active < self._level:
                    self._active += 1
                    break
                future = asyncio.get_running_loop().create_future()
                self._waiters.append(future)
            try:
                await future
            except asyncio.CancelledError:
                with self._lock:
                    if future in self._waiters:
                        self._waiters.remove(future)
                    else:  # woken as it was cancelled: pass the turn on
                        self._wake()
                raise
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                self._wake()

    def _wake(self) -> None:
        """Let waiting tasks try again (called with the lock held)."""
        free = self._level - self._active
        while free > 0 and self._waiters:
            future = self._waiters.pop(0)
            free -= 1
            loop = future.get_loop()
            loop.call_soon_threadsafe(_resolve, future)


def _resolve(future: Any) -> None:
    if not future.done():
        future.set_result(None)
