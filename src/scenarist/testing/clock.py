"""``ManualClock``: time for tests that move only when told, never the wall clock.

A rate limiter (``scenarist.engine.rate_limits``) reads it and waits on it: waiting for a
moment moves the clock there at once (no real sleep), so a run paced at 10 requests a
minute takes no time and the moments each call was let through can be asserted exactly.
Picklable, so a Ray limiter actor can hold one too.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["ManualClock"]


class ManualClock:
    """A monotonic clock starting at ``start`` seconds; ``sleep_until`` jumps ahead."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self.waits: list[float] = []
        """Every moment something waited for, in the order asked."""

    def __getstate__(self) -> dict[str, Any]:
        return {"_now": self._now, "waits": list(self.waits)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds

    def sleep_until(self, moment: float) -> None:
        with self._lock:
            self.waits.append(moment)
            self._now = max(self._now, moment)

    async def sleep_until_async(self, moment: float) -> None:
        self.sleep_until(moment)
