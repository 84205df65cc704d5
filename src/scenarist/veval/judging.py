"""Judging one run against criteria: Veval's ``client.judge_async`` answer shape.

The judge is the same :class:`~scenarist.judges.trace_judge.TraceJudge` that
``TraceAssert.judge`` builds, run as a check on the run's trace; the verdict is flattened
to Veval's ``{passed, score, reasoning}`` dictionary (``reasoning`` is the judge's own
words), plus our ``status``, so an ERROR is not mistaken for a FAIL. Under a test client's
judge mocks, a criteria with no verdict left raises ``RuntimeError`` with Veval's text.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from scenarist.tracing.context import RunContext

__all__ = ["judge_run"]


async def judge_run(
    criteria: str,
    ctx: RunContext,
    scope: AbstractContextManager[None],
    model: Any = None,
    threshold: float | None = None,
    reference_output: Any = None,
    samples: int | None = None,
) -> dict[str, Any]:
    """Judge the run in ``ctx`` against ``criteria`` inside ``scope``."""
    from scenarist.engine.runner import run_check
    from scenarist.veval.trace_assert import TraceAssert

    check = TraceAssert.judge(
        criteria=criteria,
        model=model,
        threshold=threshold,
        reference_output=reference_output,
        samples=samples,
    )
    from scenarist.judges.mocks import active_judge_mocks

    trace = ctx._trace(None)
    with scope:
        mocks = active_judge_mocks()
        if mocks is not None and not mocks.has(criteria):  # never a real, billed call
            raise RuntimeError(mocks.missing(criteria))
        verdict = await run_check(check, trace, return_exception=True)
    score = next((m.value for m in verdict.metrics if m.name == "judge_score"), None)
    answer = verdict.details.get("verdict")
    reasoning = answer["reason"] if isinstance(answer, dict) else verdict.message
    return {
        "passed": verdict.status == "pass",
        "score": score,
        "reasoning": reasoning,
        "status": verdict.status.value,
    }
