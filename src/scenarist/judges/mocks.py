"""Judge mocks for tests: canned verdicts per criteria, consumed first in, first out.

``TestClient.with_judge_mock(criteria, passed, score, reasoning)`` queues verdicts here;
while the client evaluates assertions, :func:`using_judge_mocks` makes them the answer of
every ``TraceAssert.judge`` (and ``client.judge_async``) for that criteria, without any
model, as Veval's test SDK does: the mocked verdict decides (a ``threshold`` is not
applied to it) and its reasoning is kept as given, empty included. A judge call whose
criteria has no verdict left fails with Veval's text naming the criteria: a test never
falls back to a real, billed judge by accident.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["JudgeMocks", "MockedVerdict", "active_judge_mocks", "using_judge_mocks"]

_active: ContextVar[JudgeMocks | None] = ContextVar("scenarist_judge_mocks", default=None)


@dataclass(frozen=True)
class MockedVerdict:
    """One canned verdict, as given to ``with_judge_mock``."""

    passed: bool
    score: float
    reasoning: str

    def as_veval(self) -> dict[str, object]:
        """Veval's verdict dictionary (what its test SDK's ``judge_async`` returns)."""
        return {"score": self.score, "passed": self.passed, "reasoning": self.reasoning}


class JudgeMocks:
    """Queued verdicts, per criteria."""

    def __init__(self) -> None:
        self._queues: dict[str, deque[MockedVerdict]] = {}

    def add(self, criteria: str, passed: bool, score: float = 1.0, reasoning: str = "") -> None:
        verdict = MockedVerdict(passed=passed, score=score, reasoning=reasoning)
        self._queues.setdefault(criteria, deque()).append(verdict)

    def has(self, criteria: str) -> bool:
        """Whether a verdict is left for ``criteria``."""
        return bool(self._queues.get(criteria))

    def take(self, criteria: str) -> MockedVerdict:
        """The next verdict for ``criteria``; ``LookupError`` with :meth:`missing` if none."""
        queue = self._queues.get(criteria)
        if not queue:
            raise LookupError(self.missing(criteria))
        return queue.popleft()

    @staticmethod
    def missing(criteria: str) -> str:
        """Veval's message for a judge call no mock answers."""
        return (
            f"Replay mode: no judge mock for criteria '{criteria}'. Call with_judge_mock(...) "
            "before running a scenario/replay that uses TraceAssert.judge — this would have "
            "made a real, billed LLM call."
        )


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
