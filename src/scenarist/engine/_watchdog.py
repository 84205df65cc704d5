"""A watchdog outside the event loop for async user code that blocks it past ``timeout_s``.

An ``async def`` target that calls blocking code (``time.sleep``, a sync HTTP client, a
long computation) holds the event loop: ``anyio.fail_after`` cannot cancel it, since
cancelling needs the loop, and the call can only end when the code returns. So the
deadline is kept in two parts:

* :class:`~scenarist.engine.interactions.InteractionContext` times every call and records
  one that came back after its deadline as timed out (ERROR, phase ``timeout``), never as
  a pass: whatever it returned arrived too late.
* This watchdog, a daemon thread, is told each timed async call's deadline. At the
  deadline it asks the loop to run a no-op; when the loop does not within
  :data:`GRACE_S`, the loop is blocked: it notes where the loop's thread stands (the
  function and line that block it, from ``sys._current_frames``) and says so once on
  stderr, because a call that blocks for ever would otherwise leave a silent hang. The
  timed-out error names the same place.

A blocked call cannot be stopped from another thread (Python can interrupt a thread only
between bytecodes, and a thread blocked in C code never reaches one). Rejected:
``PyThreadState_SetAsyncExc`` (it does not reach code blocked in C) and a signal to the
main thread (the loop need not run there, and a signal handler would be taken from the
user).
"""

from __future__ import annotations

import heapq
import itertools
import sys
import threading
import time
from typing import Any

__all__ = ["GRACE_S", "Watch", "watch"]

GRACE_S = 0.5
"""How long the loop may take to run a no-op at a deadline before it counts as blocked."""


class Watch:
    """One timed async call: its deadline, and where the loop was blocked (if it was)."""

    __slots__ = ("blocked_in", "deadline", "done", "label", "loop", "thread_id", "timeout_s")

    def __init__(self, label: str, timeout_s: float, loop: Any) -> None:
        self.label = label
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s
        self.loop = loop
        self.thread_id = threading.get_ident()
        self.done = False
        self.blocked_in: str | None = None


class _Watchdog:
    """The one watchdog thread of the process, started on the first timed async call."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._due: list[tuple[float, int, Watch]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._compact_at = 1024

    def add(self, watch: Watch) -> None:
        with self._condition:
            if len(self._due) >= self._compact_at:
                # calls that ended early wait in the heap for their deadline: drop them
                # (amortised: the threshold doubles with what stays)
                self._due = [entry for entry in self._due if not entry[2].done]
                heapq.heapify(self._due)
                self._compact_at = max(1024, 2 * len(self._due))
            heapq.heappush(self._due, (watch.deadline, next(self._order), watch))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="scenarist-loop-watchdog", daemon=True
                )
                self._thread.start()
            self._condition.notify()

    def _run(self) -> None:
        while True:
            self._check(self._next_due())

    def _next_due(self) -> Watch:
        with self._condition:
            while True:
                while self._due and self._due[0][2].done:
                    heapq.heappop(self._due)
                if not self._due:
                    self._condition.wait()
                    continue
                delay = self._due[0][0] - time.monotonic()
                if delay <= 0:
                    return heapq.heappop(self._due)[2]
                self._condition.wait(delay)

    def _check(self, watch: Watch) -> None:
        answered = threading.Event()
        try:
            watch.loop.call_soon_threadsafe(answered.set)
        except RuntimeError:  # the loop is closed: the run is over
            return
        if answered.wait(GRACE_S) or watch.done:
            return  # the loop runs: the deadline's cancellation reaches the call
        watch.blocked_in = _where(sys._current_frames().get(watch.thread_id))
        if watch.done:
            return
        sys.stderr.write(
            f"scenarist: the event loop is blocked in {watch.blocked_in}, past the "
            f"timeout_s={watch.timeout_s} of {watch.label}; blocking code cannot be stopped "
            "until it returns, and the call will then be recorded as timed out\n"
        )
        sys.stderr.flush()


def _where(frame: Any) -> str:
    """Where a thread is: the innermost function outside the standard library and installed
    packages (the user's code that blocks), and the innermost one when it differs
    (``agent (app.py:12), waiting in Condition.wait (threading.py:331)``)."""
    if frame is None:
        return "an unknown place"
    libraries = _library_paths()
    user = frame
    while user is not None and user.f_code.co_filename.startswith(libraries):
        user = user.f_back
    if user is None or user is frame:
        return _frame_text(frame)
    return f"{_frame_text(user)}, waiting in {_frame_text(frame)}"


def _frame_text(frame: Any) -> str:
    code = frame.f_code
    return f"{code.co_qualname} ({code.co_filename}:{frame.f_lineno})"


def _library_paths() -> tuple[str, ...]:
    import sysconfig

    paths = sysconfig.get_paths()
    return tuple({paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")})


_WATCHDOG = _Watchdog()


def watch(label: str, timeout_s: float) -> Watch | None:
    """Watch the running loop from now until ``timeout_s`` (set ``done`` at the end);
    ``None`` outside an asyncio loop (under trio the elapsed-time rule alone applies)."""
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    found = Watch(label, timeout_s, loop)
    _WATCHDOG.add(found)
    return found
