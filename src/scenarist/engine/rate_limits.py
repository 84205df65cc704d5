"""Rate limits for the agent's own LLM calls, shared by every scenario of a run.

::

    suite.run(agent, parallel=True, max_concurrency=50,
              rate_limits={"openai/gpt-4o-mini": "500rpm, 200000tpm"})
    # or: SCENARIST_RATE_LIMITS="openai/gpt-4o-mini=500rpm,200000tpm; anthropic/*=50rpm"

A budget is named by a ``provider/model`` pattern (``fnmatch``: ``openai/*``, ``*``); a
call takes the first pattern that matches its provider format (``openai``,
``anthropic``, ``gemini``, ``ollama``) and the ``model`` of its request body, and every
call a pattern matches shares that one budget. Limits are requests and/or tokens per
minute (``rpm``, ``tpm``; ``rps`` / ``tps`` per second). Tokens are counted when the
call is sent, as providers count them against a limit: the request's text (4 bytes a
token) plus its ``max_tokens`` / ``max_output_tokens``.

Enforcement is a GCRA schedule per budget (a token bucket that hands out start times):
a call that would exceed its budget waits, in the calling task, until its turn, so no
agent code changes and the run's calls never exceed what was configured over any window
(a burst of ``burst`` calls is allowed; default one second's worth). The HTTP capture
layer asks for a turn before each live LLM call (never for a replayed one) and, when a
provider still answers 429, pauses the whole budget for the ``Retry-After`` it gives
(see :mod:`scenarist.tracing.http._throttle`).

The limiter reads time from a :class:`Clock` (tests inject a manual one; no wall clock).
Under Ray one limiter lives in an actor and every worker asks it for turns.
"""

from __future__ import annotations

import fnmatch
import os
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from scenarist.errors import UserError

__all__ = [
    "RATE_LIMITS_ENV",
    "Clock",
    "LimiterStats",
    "RateLimit",
    "RateLimiter",
    "SystemClock",
    "parse_rate_limits",
    "rate_limits_from_env",
]

RATE_LIMITS_ENV = "SCENARIST_RATE_LIMITS"
_UNITS = {"rpm": ("requests", 60.0), "rps": ("requests", 1.0)}
_UNITS |= {"tpm": ("tokens", 60.0), "tps": ("tokens", 1.0)}
_AMOUNT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$")


class Clock(Protocol):
    """Where a limiter reads time and how it waits for a moment (seconds, monotonic)."""

    def now(self) -> float: ...

    def sleep_until(self, moment: float) -> None: ...

    async def sleep_until_async(self, moment: float) -> None: ...


class SystemClock:
    """``time.monotonic`` and real sleeps (the default)."""

    def now(self) -> float:
        return time.monotonic()

    def sleep_until(self, moment: float) -> None:
        delay = moment - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    async def sleep_until_async(self, moment: float) -> None:
        import asyncio

        delay = moment - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)


@dataclass(frozen=True)
class RateLimit:
    """One budget: the calls matching ``pattern``, at most ``requests`` and/or ``tokens``
    per ``per_s`` seconds, with a burst of ``burst`` requests (default: one second's worth)."""

    pattern: str
    requests: float | None = None
    tokens: float | None = None
    per_s: float = 60.0
    burst: float | None = None

    def __post_init__(self) -> None:
        if self.requests is None and self.tokens is None:
            raise UserError(f"rate limit {self.pattern!r} sets no limit; give rpm and/or tpm")
        for name in ("requests", "tokens", "burst"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise UserError(f"rate limit {self.pattern!r}: {name} must be > 0, got {value}")
        if not self.per_s > 0:
            raise UserError(f"rate limit {self.pattern!r}: per_s must be > 0, got {self.per_s}")

    def matches(self, key: str) -> bool:
        return fnmatch.fnmatchcase(key, self.pattern)


def parse_rate_limits(value: Any, *, source: str = "rate_limits") -> list[RateLimit]:
    """Budgets from ``{"pattern": "500rpm, 2e5tpm"}``, a list of :class:`RateLimit`, or
    the ``SCENARIST_RATE_LIMITS`` text ``"pattern=500rpm,20000tpm; pattern2=50rpm"``."""
    if value is None:
        return []
    if isinstance(value, RateLimit):
        return [value]
    if isinstance(value, str):
        entries: list[tuple[str, Any]] = []
        for part in filter(None, (p.strip() for p in value.split(";"))):
            pattern, sep, amounts = part.partition("=")
            if not sep or not pattern.strip():
                raise UserError(
                    f"{source}: {part!r} is not PATTERN=LIMITS; write e.g. "
                    "'openai/gpt-4o-mini=500rpm,200000tpm; anthropic/*=50rpm'"
                )
            entries.append((pattern.strip(), amounts))
        return [_parse_entry(p, a, source) for p, a in entries]
    if isinstance(value, Mapping):
        return [_parse_entry(str(p), a, source) for p, a in value.items()]
    if isinstance(value, list | tuple):
        limits = []
        for item in value:
            if not isinstance(item, RateLimit):
                raise UserError(f"{source}: expected RateLimit objects, got {item!r}")
            limits.append(item)
        return limits
    raise UserError(
        f"{source} must be a dict like {{'openai/*': '500rpm'}}, a list of RateLimit or "
        f"'PATTERN=LIMITS; ...' text, got {type(value).__name__}"
    )


def _parse_entry(pattern: str, amounts: Any, source: str) -> RateLimit:
    if isinstance(amounts, RateLimit):
        return amounts
    if not isinstance(amounts, str):
        raise UserError(f"{source}[{pattern!r}]: give limits as text like '500rpm, 20000tpm'")
    per_s: float | None = None
    found: dict[str, float] = {}
    for piece in filter(None, (p.strip() for p in amounts.split(","))):
        match = _AMOUNT.match(piece.lower())
        if match is None or match.group(2) not in _UNITS:
            raise UserError(
                f"{source}[{pattern!r}]: {piece!r} is not a limit; use a number with rpm, "
                "tpm, rps or tps (e.g. '500rpm')"
            )
        kind, window = _UNITS[match.group(2)]
        amount = float(match.group(1)) * 60.0 / window  # always per minute inside
        per_s = 60.0 if per_s is None else per_s
        if kind in found:
            raise UserError(f"{source}[{pattern!r}]: {kind} per minute is given twice")
        found[kind] = amount
    if not found:
        raise UserError(f"{source}[{pattern!r}]: no limit given; write e.g. '500rpm'")
    return RateLimit(pattern, found.get("requests"), found.get("tokens"), per_s or 60.0)


def rate_limits_from_env() -> list[RateLimit]:
    """The budgets in ``SCENARIST_RATE_LIMITS`` (none when unset or empty)."""
    return parse_rate_limits(os.environ.get(RATE_LIMITS_ENV) or None, source=RATE_LIMITS_ENV)


@dataclass
class LimiterStats:
    """What the limiter did in a run: turns given, how many waited and how long, 429s."""

    requests: int = 0
    delayed: int = 0
    waited_s: float = 0.0
    throttled: int = 0
    """Answers 429 from a provider (each paused its budget)."""
    retried: int = 0
    """Calls sent again by the capture layer after a 429."""
    gave_up: int = 0
    """429 answers handed to the agent because the retry budget was spent."""

    def add(self, other: LimiterStats) -> None:
        for name in ("requests", "delayed", "waited_s", "throttled", "retried", "gave_up"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "delayed": self.delayed,
            "waited_s": round(self.waited_s, 3),
            "throttled": self.throttled,
            "retried": self.retried,
            "gave_up": self.gave_up,
        }

    def summary(self) -> str:
        line = f"{self.requests} LLM request(s) paced"
        if self.delayed:
            line += f", {self.delayed} waited {self.waited_s:.1f}s in total"
        if self.throttled:
            line += f"; {self.throttled} answered 429 ({self.retried} retried"
            line += f", {self.gave_up} given up)" if self.gave_up else ")"
        return line


@dataclass
class _Budget:
    limit: RateLimit
    request_tat: float = float("-inf")  # GCRA theoretical arrival times
    token_tat: float = float("-inf")
    paused_until: float = float("-inf")


@dataclass
class RateLimiter:
    """The budgets of a run and the schedule of their calls (thread-safe).

    :meth:`reserve` books the next turn and returns how long to wait for it;
    :meth:`acquire` / :meth:`acquire_async` book and wait (on the limiter's clock).
    A call no budget matches never waits.
    """

    limits: list[RateLimit] = field(default_factory=list)
    clock: Clock = field(default_factory=SystemClock)
    retry_budget: int = 100
    """429 answers the capture layer may retry in the whole run before passing them on."""
    stats: LimiterStats = field(default_factory=LimiterStats)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._budgets = {limit.pattern: _Budget(limit) for limit in self.limits}
        self._unlimited: dict[str, _Budget] = {}

    def __getstate__(self) -> dict[str, Any]:  # sent to a Ray actor: no lock
        state = dict(self.__dict__)
        state.pop("_lock", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def budget_for(self, key: str) -> str | None:
        """The pattern whose budget ``key`` (``provider/model``) spends, if any."""
        return next((p for p, b in self._budgets.items() if b.limit.matches(key)), None)

    def reserve(self, key: str, tokens: int = 0) -> float:
        """Book a turn for one call of ``key`` costing ``tokens``; seconds to wait for it."""
        return max(0.0, self._book(key, tokens) - self.clock.now())

    def _book(self, key: str, tokens: int) -> float:
        """Book a turn; the moment (on the clock) it starts."""
        with self._lock:
            self.stats.requests += 1
            pattern = self.budget_for(key)
            budget = self._budgets[pattern] if pattern is not None else self._pause_only(key)
            now = self.clock.now()
            start = max(now, budget.paused_until)
            limit = budget.limit
            if limit.requests is not None:
                interval = limit.per_s / limit.requests
                burst = limit.burst or max(1.0, limit.requests / limit.per_s)
                start = max(start, budget.request_tat + interval - burst * interval)
            if limit.tokens is not None and tokens > 0:
                per_token = limit.per_s / limit.tokens
                tolerance = max(limit.tokens / limit.per_s, tokens) * per_token
                start = max(start, budget.token_tat + tokens * per_token - tolerance)
            if limit.requests is not None:
                budget.request_tat = max(budget.request_tat, start) + interval
            if limit.tokens is not None and tokens > 0:
                budget.token_tat = max(budget.token_tat, start) + tokens * per_token
            if start > now:
                self.stats.delayed += 1
                self.stats.waited_s += start - now
            return start

    def _pause_only(self, key: str) -> _Budget:
        """A call no budget names still honours a provider's ``Retry-After`` for its key."""
        budget = self._unlimited.get(key)
        if budget is None:
            budget = self._unlimited[key] = _Budget(_NO_LIMIT)
        return budget

    def pause(self, key: str, seconds: float) -> None:
        """A provider answered 429: no call of ``key``'s budget starts for ``seconds``."""
        with self._lock:
            self.stats.throttled += 1
            pattern = self.budget_for(key)
            budget = self._budgets[pattern] if pattern is not None else self._pause_only(key)
            budget.paused_until = max(budget.paused_until, self.clock.now() + max(0.0, seconds))

    def take_retry(self) -> bool:
        """Whether one more 429 may be retried (spends the run's retry budget)."""
        return self._take_retry()

    async def take_retry_async(self) -> bool:
        """:meth:`take_retry` for an event loop (it never waits here)."""
        return self._take_retry()

    def _take_retry(self) -> bool:
        with self._lock:
            if self.stats.retried >= self.retry_budget:
                self.stats.gave_up += 1
                return False
            self.stats.retried += 1
            return True

    def acquire(self, key: str, tokens: int = 0) -> None:
        """Book a turn and wait for it (this thread)."""
        self.clock.sleep_until(self._book(key, tokens))

    async def acquire_async(self, key: str, tokens: int = 0) -> None:
        """Book a turn and wait for it (this task)."""
        await self.clock.sleep_until_async(self._book(key, tokens))

    def snapshot(self) -> LimiterStats:
        with self._lock:
            return LimiterStats(**self.stats.__dict__)


class _NoLimit:
    """The budget of calls no pattern names: only pauses apply."""

    requests = None
    tokens = None
    per_s = 60.0
    burst = None


_NO_LIMIT: Any = _NoLimit()
