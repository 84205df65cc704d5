"""Ways an agent runs a call on a thread started without its context (the context-less
paths a strict replay must guard): shared by the replay tests."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["bare_thread", "pool_submit", "run_in_executor", "to_thread"]


def bare_thread(call: Callable[[], str]) -> str:
    """``call`` on a plain ``threading.Thread``; its exception is raised here."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = call()
        except BaseException as error:
            out["error"] = error

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return str(out["value"])


def pool_submit(call: Callable[[], str]) -> str:
    """``call`` on a ``ThreadPoolExecutor`` worker."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(call).result()


def _in_a_loop(
    make: Callable[[Callable[[], str]], Any], name: str
) -> Callable[[Callable[[], str]], str]:
    def start(call: Callable[[], str]) -> str:
        def runner() -> str:  # a fresh thread: asyncio.run needs one without a loop
            async def main() -> str:
                return str(await make(call))

            return asyncio.run(main())

        # the caller's context goes along: only the starter under test may drop it
        context = contextvars.copy_context()
        return pool_submit(lambda: context.run(runner))

    start.__name__ = name
    return start


def _executor(call: Callable[[], str]) -> Any:
    return asyncio.get_running_loop().run_in_executor(None, call)


def _to_thread(call: Callable[[], str]) -> Any:
    return asyncio.to_thread(call)


run_in_executor = _in_a_loop(_executor, "run_in_executor")
"""``call`` on the default executor of a loop (``loop.run_in_executor``)."""
to_thread = _in_a_loop(_to_thread, "to_thread")
"""``call`` through ``asyncio.to_thread`` (which keeps the context)."""
