"""What user code may do to a run, and what it may not: the two ``BaseException`` cases and
sync calls that must stop at a deadline.

* A target (or an outputs callable, a generator, a check) that raises ``SystemExit`` or an
  ``asyncio.CancelledError`` that no one asked for would end the run instead of its own
  scenario: :func:`stray_exit` turns those into :class:`~scenarist.errors.AbortedCallError`
  so they are recorded as ERROR like any exception. A cancellation is ours when the
  current task has a pending cancel request (``Task.cancelling()``): a timeout, Ctrl-C,
  or the first exception of a parallel run cancelling the others. Those still propagate.
* A blocking sync call with ``timeout_s`` runs in a daemon thread (:func:`call_in_thread`):
  the verdict comes at the deadline, and the abandoned thread cannot hold the process's
  exit the way a pool's worker thread would (Python joins non-daemon threads at exit).
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
from collections.abc import Callable
from typing import Any

from scenarist.errors import AbortedCallError

__all__ = ["call_in_thread", "stray_exit"]


def stray_exit(exc: BaseException, who: str = "user code") -> AbortedCallError | None:
    """``exc`` as the :class:`AbortedCallError` it stands for, or ``None`` when it must
    propagate (every ``Exception``, ``KeyboardInterrupt``, a cancellation of the run)."""
    if isinstance(exc, SystemExit):
        aborted = AbortedCallError(
            f"{who} raised SystemExit({exc.code!r}) (sys.exit was called); a scenario cannot "
            "end the run, so it is recorded as an error; return or raise an exception instead"
        )
    elif _is_cancellation(exc) and not _run_is_being_cancelled():
        aborted = AbortedCallError(
            f"{who} raised asyncio.CancelledError itself (nothing cancelled the run), e.g. by "
            "awaiting a task that was cancelled; it is recorded as an error"
        )
    else:
        return None
    aborted.__cause__ = exc
    return aborted


def _is_cancellation(exc: BaseException) -> bool:
    asyncio = sys.modules.get("asyncio")
    return asyncio is not None and isinstance(exc, asyncio.CancelledError)


def _run_is_being_cancelled() -> bool:
    """Whether the current task has a cancel request pending (ours, or the caller's)."""
    import asyncio

    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop
        return False
    return task is not None and task.cancelling() > 0


async def call_in_thread(fn: Callable[[], Any], limiter: Any = None) -> Any:
    """``fn()`` in a new daemon thread, awaited; cancelling the await abandons the thread.

    The thread runs in a copy of the caller's context (its run, open span and cassette
    lane stay visible, as with ``anyio.to_thread``). ``limiter`` (an anyio
    ``CapacityLimiter``) bounds how many such calls run at once; an abandoned call gives
    its slot back.
    """
    if limiter is None:
        return await _in_daemon_thread(fn)
    async with limiter:
        return await _in_daemon_thread(fn)


async def _in_daemon_thread(fn: Callable[[], Any]) -> Any:
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def deliver(ok: bool, value: Any) -> None:
        if future.done():  # the caller stopped waiting (timeout, cancellation)
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def work() -> None:
        try:
            value, ok = context.run(fn), True
        except BaseException as exc:  # handed to the awaiting task, which decides
            value, ok = exc, False
        with contextlib.suppress(RuntimeError):  # a closed loop: the run ended without it
            loop.call_soon_threadsafe(deliver, ok, value)

    threading.Thread(target=work, name="scenarist-timed-call", daemon=True).start()
    return await future
