"""How adapters call a model: retries with backoff, a timeout, and a concurrency limit.

The SDKs can retry on their own, but each in its own way; the adapters set the SDKs'
``max_retries`` to 0 and retry here, so the behaviour is the same for every provider and
tested: 429, 408, 409 and 5xx answers, connection errors and timeouts are retried with
exponential backoff (``backoff_s * 2**attempt``, capped at ``max_backoff_s``), except that
a ``Retry-After`` (or ``retry-after-ms``) header from the server wins, within the cap.

Concurrency is limited per provider key (``"openai@<base url>"``), process-wide: one
``asyncio.Semaphore`` per key and event loop, created on first use, so limits hold across
all the judges and simulators of a parallel suite, and programs that run several event
loops (``run_sync`` in threads) never share a semaphore between loops.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import anyio

__all__ = ["RetryPolicy", "Transient", "call_with_retries", "concurrency_slot", "retry_after_s"]

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 429})

# How retries wait: a module attribute so that a test can record the waits asked for
# instead of timing them on a busy machine.
sleep: Callable[[float], Awaitable[None]] = asyncio.sleep


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries, backoff, timeout and concurrency of one adapter."""

    max_retries: int = 3
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    timeout_s: float | None = 60.0
    max_concurrency: int = 8

    def delay_s(self, attempt: int, retry_after: float | None) -> float:
        """How long to wait before retry number ``attempt + 1`` (``attempt`` counts from 0)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_backoff_s)
        base = self.backoff_s * (2**attempt)
        jitter = 1.0 + 0.1 * random.random()
        return float(min(base * jitter, self.max_backoff_s))


class Transient(Exception):
    """A failed attempt worth retrying; ``retry_after_s`` is the server's hint, if any."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


def is_retryable_status(status: int) -> bool:
    """Whether an HTTP status is worth retrying (rate limits, conflicts, server errors)."""
    return status in RETRYABLE_STATUS or status >= 500


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """The server's ``retry-after-ms`` / ``Retry-After`` (seconds or HTTP date), in seconds."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_semaphores: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, int], asyncio.Semaphore]
] = weakref.WeakKeyDictionary()


def concurrency_slot(key: str, size: int) -> asyncio.Semaphore:
    """The semaphore limiting calls to ``key`` to ``size`` at once, in the running loop."""
    loop = asyncio.get_running_loop()
    per_loop = _semaphores.get(loop)
    if per_loop is None:
        per_loop = _semaphores[loop] = {}
    semaphore = per_loop.get((key, size))
    if semaphore is None:
        semaphore = per_loop[(key, size)] = asyncio.Semaphore(size)
    return semaphore


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    key: str,
    describe: str,
    on_error: Callable[[str], Exception],
) -> T:
    """Run ``attempt`` under the concurrency limit and timeout, retrying :class:`Transient`.

    ``attempt`` raises :class:`Transient` for what may succeed later; anything else
    propagates at once. When retries run out, ``on_error(message)`` is raised.
    """
    last = "no attempt made"
    for number in range(policy.max_retries + 1):
        try:
            async with concurrency_slot(key, policy.max_concurrency):
                if policy.timeout_s is None:
                    return await attempt()
                with anyio.fail_after(policy.timeout_s):
                    return await attempt()
        except TimeoutError:
            hint: float | None = None
            last = f"no answer within timeout_s={policy.timeout_s}"
        except Transient as exc:
            hint, last = exc.retry_after_s, str(exc)
        if number < policy.max_retries:
            await sleep(policy.delay_s(number, hint))
    tries = policy.max_retries + 1
    raise on_error(f"{describe} failed after {tries} attempt(s): {last}")
