"""Ways an agent runs a call on a thread started without its context (the context-less
paths a strict replay must guard): shared by the replay tests."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["bare_thread", "pool_submit"]


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
