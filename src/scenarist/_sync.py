"""Run async code from sync code, whether or not an event loop is already running.

``run_sync`` uses :func:`anyio.run` when the thread has no running loop; inside a running
loop (a notebook, an async test) it runs the coroutine on a fresh loop in a worker thread
and waits for it, so there is never a nested-loop or "event loop is closed" error.
"""

from __future__ import annotations

import contextvars
import sys
import threading
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

__all__ = ["run_sync"]

R = TypeVar("R")


def _loop_running() -> bool:
    asyncio = sys.modules.get("asyncio")  # not imported yet: no loop can be running
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_sync(fn: Callable[..., Awaitable[R]], /, *args: Any, **kwargs: Any) -> R:
    """Call the async ``fn(*args, **kwargs)`` and return its result, from sync code.

    The result travels in a box, not as the event loop's task result: on CPython 3.11,
    ``asyncio.run`` in the main thread checks its SIGINT handler in a way that formats the
    handler, its task and so the task's result with ``repr`` (a suite's whole result, every
    trace built to print it) before it returns."""
    call = partial(fn, *args, **kwargs)
    box: dict[str, Any] = {}

    async def main() -> None:
        box["result"] = await call()

    if not _loop_running():
        import anyio  # on first use: scenario definitions and async runs never need it

        anyio.run(main)
        result: R = box["result"]
        return result
    # The caller's context goes along (its run and open span stay visible). It also says
    # "asyncio is running", which is true of the new thread too once asyncio.run starts.
    context = contextvars.copy_context()
    asyncio = sys.modules["asyncio"]

    def worker() -> None:
        try:
            context.run(asyncio.run, main())
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=worker, name="scenarist-run-sync")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    finished: R = box["result"]
    return finished
