"""Judge mocks for tests: canned verdicts per criteria, consumed first in, first out.

``TestClient.with_judge_mock(criteria, passed, score, reasoning)`` queues verdicts here;
while the client evaluates assertions, :func:`using_judge_mocks` makes them the answer of
every ``TraceAssert.judge`` (and ``client.judge_async``) for that criteria, without any
model. A judge call whose criteria has no verdict left is an error naming the criteria:
a test never falls back to a real judge by accident.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from scenarist.judges.verdict import LLMCheckResult

__all__ = ["JudgeMocks", "active_judge_mocks", "using_judge_mocks"]

_active: ContextVar[JudgeMocks | None] = ContextVar("scenarist_judge_mocks", default=None)


class JudgeMocks:
    """Queued verdicts, per criteria."""

    def __init__(self) -> None:
        self._queues: dict[str, deque[LLMCheckResult]] = {}

    def add(self, criteria: str, passed: bool, score: float = 1.0, reasoning: str = "") -> None:
        verdict = LLMCheckResult(passed=passed, score=score, reason=reasoning or "mocked verdict")
        self._queues.setdefault(criteria, deque()).append(verdict)

    def take(self, criteria: str) -> LLMCheckResult:
        """The next verdict for ``criteria``; ``LookupError`` naming it when none is left."""
        queue = self._queues.get(criteria)
        if not queue:
            mocked = ", ".join(f"'{c}'" for c, q in self._queues.items() if q) or "none"
            raise LookupError(
                f"no judge mock left for criteria '{criteria}' (mocked with verdicts left: "
                f"{mocked}); add one with with_judge_mock('{criteria}', passed=...)"
            )
        return queue.popleft()


def active_judge_mocks() -> JudgeMocks | None:
    """The mocks in force in this context, if any."""
    return _active.get()


@contextmanager
def using_judge_mocks(mocks: JudgeMocks) -> Iterator[None]:
    token = _active.set(mocks)
    try:
        yield
    finally:
        _active.reset(token)
