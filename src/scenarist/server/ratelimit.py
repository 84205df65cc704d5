"""Rate limiting of the ingest endpoints: a token bucket per API key, else per address.

Configured by ``create_app(rate_limit=...)`` or ``SCENARIST_RATE_LIMIT`` (``"20/s"``,
``"600/min"``, ``"5000/h"``; a bare number is per second) and
``SCENARIST_RATE_LIMIT_BURST`` (the bucket size: requests allowed at once; default twice
the per-second rate, at least 1). Unset means no limit: a self-hosted server trusts its
clients until its operator says otherwise.

A request over the limit is answered 429 with ``Retry-After`` (whole seconds, as HTTP
defines it) and ``X-Retry-After-Ms`` (the exact wait); ``RemoteStore`` waits that
long and retries. Buckets are per process and in memory: with several server processes
the limit applies to each.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

from scenarist._extras import missing_extra
from scenarist.errors import UserError

try:
    from fastapi import HTTPException, Request
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra("server", exc) from exc

__all__ = ["RateLimit", "RateLimited", "RateLimiter", "enforce_rate_limit"]

_UNITS = {"s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0,
          "h": 3600.0, "hour": 3600.0}  # fmt: skip
_MAX_BUCKETS = 10_000


@dataclass(frozen=True)
class RateLimit:
    """``rate_per_s`` requests per second on average, ``burst`` at once."""

    rate_per_s: float
    burst: int

    @classmethod
    def parse(cls, text: str, burst: int | str | None = None) -> RateLimit:
        """``"20/s"``, ``"600/min"``, ``"5000/h"`` or ``"20"`` (per second)."""
        count, _, unit = text.strip().partition("/")
        try:
            rate = float(count) / _UNITS[unit.strip().lower() or "s"]
            size = int(burst) if burst not in (None, "") else max(1, math.ceil(2 * rate))
        except (KeyError, ValueError):
            rate, size = 0.0, 0
        if rate <= 0 or size < 1:
            raise UserError(
                f"cannot read the rate limit {text!r} (burst {burst!r}); write it as "
                "'20/s', '600/min' or '5000/h', with a burst of at least 1"
            )
        return cls(rate_per_s=rate, burst=size)

    @classmethod
    def from_env(cls) -> RateLimit | None:
        """From ``SCENARIST_RATE_LIMIT`` / ``SCENARIST_RATE_LIMIT_BURST``; ``None`` if unset."""
        text = os.environ.get("SCENARIST_RATE_LIMIT", "").strip()
        if not text or text.lower() in ("off", "none", "0"):
            return None
        return cls.parse(text, os.environ.get("SCENARIST_RATE_LIMIT_BURST"))


class RateLimited(Exception):
    """A request over the limit: retry after ``retry_after_s`` seconds."""

    def __init__(self, retry_after_s: float) -> None:
        super().__init__(f"rate limited; retry after {retry_after_s:.2f} s")
        self.retry_after_s = retry_after_s


class RateLimiter:
    """Token buckets by client identity. Not thread-safe: one per event loop (the app's).

    ``take`` has no ``await`` between reading and writing a bucket, so concurrent requests
    on one event loop cannot both spend the same token.
    """

    def __init__(self, limit: RateLimit, clock: object = time.monotonic) -> None:
        self.limit = limit
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # identity -> (tokens, at)
        self.rejected = 0  # 429s answered, for operators and tests

    def _now(self) -> float:
        now: float = self._clock()  # type: ignore[operator]
        return now

    def take(self, identity: str) -> None:
        """Spend one token of ``identity``'s bucket, or raise :class:`RateLimited`."""
        now = self._now()
        tokens, at = self._buckets.get(identity, (float(self.limit.burst), now))
        tokens = min(float(self.limit.burst), tokens + (now - at) * self.limit.rate_per_s)
        if tokens < 1.0:
            self._buckets[identity] = (tokens, now)
            self.rejected += 1
            raise RateLimited((1.0 - tokens) / self.limit.rate_per_s)
        if identity not in self._buckets and len(self._buckets) >= _MAX_BUCKETS:
            self._forget_full(now)
        self._buckets[identity] = (tokens - 1.0, now)

    def _forget_full(self, now: float) -> None:
        """Drop buckets that have refilled (they hold no state worth keeping)."""
        refill = self.limit.burst / self.limit.rate_per_s
        for identity, (_, at) in list(self._buckets.items()):
            if now - at >= refill:
                del self._buckets[identity]
        if len(self._buckets) >= _MAX_BUCKETS:  # all busy: forget the oldest half
            for identity, _ in sorted(self._buckets.items(), key=lambda kv: kv[1][1])[
                : _MAX_BUCKETS // 2
            ]:
                del self._buckets[identity]


def client_identity(request: Request) -> str:
    """The bucket of a request: the id of the key it was authenticated with (a header or
    a dashboard session), else, anonymous (open mode), the peer's address. Never the raw
    header: ``"Bearer" + " " * n + key`` is one key, and one bucket. The address is the
    socket's unless the ASGI server was told to trust a proxy (``scenarist serve
    --trusted-proxy``): a client cannot pick its own with ``X-Forwarded-For``."""
    state = request.state
    key_id = getattr(state, "api_key_id", None) or getattr(state, "session_key_id", None)
    if key_id:
        return f"key:{key_id}"
    host = request.client.host if request.client else "unknown"
    return f"addr:{host}"


def enforce_rate_limit(request: Request) -> None:
    """Raise a 429 ``HTTPException`` (with ``Retry-After``) when the caller is over the
    app's limit; nothing when the app has none."""
    limiter: RateLimiter | None = getattr(request.app.state, "rate_limiter", None)
    if limiter is None:
        return
    try:
        limiter.take(client_identity(request))
    except RateLimited as exc:
        raise HTTPException(
            status_code=429,
            detail=(
                f"too many requests for this API key or address (limit "
                f"{limiter.limit.rate_per_s:g}/s, burst {limiter.limit.burst}); retry after "
                f"{exc.retry_after_s:.2f} s"
            ),
            headers={
                "Retry-After": str(max(1, math.ceil(exc.retry_after_s))),
                "X-Retry-After-Ms": str(math.ceil(exc.retry_after_s * 1000)),
            },
        ) from exc
