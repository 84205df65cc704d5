"""The run's throttle at the HTTP seam: rate-limit turns, 429 retries, congestion signals.

``Suite.run(rate_limits=...)`` / ``SCENARIST_RATE_LIMITS`` and ``max_concurrency="auto"``
put a :class:`Throttle` in the run's context; the transport hooks of ``capture``
hand it every *live* LLM call (a cassette's or a recording's answers never reach it):

1. a turn is taken from the budget of the call's ``provider/model`` (waiting if needed);
2. the call is sent; a 429 pauses that budget for the provider's ``Retry-After`` (or a
   doubling backoff), and the call is sent again, up to :data:`MAX_RETRIES_PER_CALL`
   times and within the run's retry budget, so a busy provider slows the run instead of
   failing scenarios; past either, the 429 reaches the agent as it was;
3. the outcome feeds the adaptive concurrency, when there is one: 429, 5xx, timeouts and
   connection errors shrink it, the rest let it grow.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from scenarist.tracing.http._llm_payloads import Endpoint

__all__ = ["MAX_RETRIES_PER_CALL", "Limiter", "Throttle", "current_throttle", "throttling"]

MAX_RETRIES_PER_CALL = 5


class Congestion(Protocol):
    """What the throttle tells the run's adaptive concurrency (the engine's
    ``AdaptiveConcurrency``) about each call's outcome."""

    def congested(self) -> None: ...

    def succeeded(self) -> None: ...


_BACKOFF_S = 1.0
_MAX_BACKOFF_S = 60.0


class Limiter(Protocol):
    """A rate limiter as the throttle uses it (:class:`~scenarist.engine.rate_limits.RateLimiter`,
    or its Ray actor's handle on a worker)."""

    def acquire(self, key: str, tokens: int = 0) -> None: ...

    async def acquire_async(self, key: str, tokens: int = 0) -> None: ...

    def pause(self, key: str, seconds: float) -> None: ...

    def take_retry(self) -> bool: ...

    async def take_retry_async(self) -> bool: ...


class Throttle:
    """What a run asks of each live LLM call: a turn, 429 retries, congestion signals."""

    def __init__(self, limiter: Limiter | None = None, adaptive: Congestion | None = None) -> None:
        self.limiter = limiter
        self.adaptive = adaptive

    def send(self, endpoint: Endpoint, request: Any, send: Callable[[], Any]) -> Any:
        key, tokens = call_key(endpoint, request)
        attempt = 0
        while True:
            if self.limiter is not None:
                self.limiter.acquire(key, tokens)
            try:
                response = send()
            except Exception:
                self._observe(None)
                raise
            self._observe(response.status_code)
            wait = self._pause_for(key, response, attempt)
            if wait is None or self.limiter is None or not self.limiter.take_retry():
                return response
            _discard(response)
            attempt += 1  # the pause is the limiter's: the next turn waits for it

    async def send_async(
        self, endpoint: Endpoint, request: Any, send: Callable[[], Awaitable[Any]]
    ) -> Any:
        key, tokens = call_key(endpoint, request)
        attempt = 0
        while True:
            if self.limiter is not None:
                await self.limiter.acquire_async(key, tokens)
            try:
                response = await send()
            except Exception:
                self._observe(None)
                raise
            self._observe(response.status_code)
            wait = self._pause_for(key, response, attempt)
            if wait is None or self.limiter is None or not await self.limiter.take_retry_async():
                return response
            await _discard_async(response)
            attempt += 1

    def _pause_for(self, key: str, response: Any, attempt: int) -> float | None:
        """A 429 pauses the budget: the seconds it pauses, or ``None``, hand the response
        over. Whether the run's retry budget allows sending again is asked by the caller,
        so the async path awaits it (a Ray worker's limiter is an actor: a blocking call
        there would stall the other scenarios of the worker's loop)."""
        if response.status_code != 429 or self.limiter is None:
            return None
        from scenarist.providers._retry import retry_after_s

        wait = retry_after_s(dict(response.headers))
        if wait is None:
            wait = min(_BACKOFF_S * 2**attempt, _MAX_BACKOFF_S)
        self.limiter.pause(key, wait)
        return None if attempt >= MAX_RETRIES_PER_CALL else wait

    def _observe(self, status: int | None) -> None:
        if self.adaptive is None:
            return
        if status is None or status == 429 or status >= 500:
            self.adaptive.congested()
        else:
            self.adaptive.succeeded()


def _discard(response: Any) -> None:
    """Read and close a 429 that is retried (its connection goes back to the pool)."""
    try:
        response.read()
    finally:
        close = getattr(response, "close", None) or getattr(response.stream, "close", None)
        if close is not None:
            close()


async def _discard_async(response: Any) -> None:
    if hasattr(response, "aread"):  # httpx / httpx2
        try:
            await response.aread()
        finally:
            await response.aclose()
        return
    stream = response.stream  # the aiohttp hook's shim response
    if hasattr(stream, "__aiter__"):
        async for _ in stream:
            pass
        await stream.aclose()


def call_key(endpoint: Endpoint, request: Any) -> tuple[str, int]:
    """``provider/model`` of a call and the tokens it is charged when sent."""
    try:
        content = request.content
    except Exception:  # a streaming request body: unknown size
        content = b""
    model = "unknown"
    max_out = 0
    try:
        body = json.loads(content) if content else None
    except ValueError:
        body = None
    if isinstance(body, dict):
        if isinstance(body.get("model"), str):
            model = body["model"]
        for name in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
            value = body.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                max_out = max(max_out, value)
    if model == "unknown":  # Gemini names the model in the path: models/<name>:generate...
        path = str(request.url.path)
        if "/models/" in path:
            model = path.rsplit("/models/", 1)[1].split(":", 1)[0] or model
    return f"{endpoint.provider}/{model}", len(content) // 4 + max_out


_throttle: ContextVar[Throttle | None] = ContextVar("scenarist_throttle", default=None)


def current_throttle() -> Throttle | None:
    return _throttle.get()


@contextmanager
def throttling(throttle: Throttle | None) -> Iterator[None]:
    """Throttle the live LLM calls made in this context (``None``: leave as is)."""
    if throttle is None:
        yield
        return
    token = _throttle.set(throttle)
    try:
        yield
    finally:
        _throttle.reset(token)
