"""``TraceAssert.judge``: Veval's LLM-as-judge assertion, as a judge check.

It judges the final input and output (``trace.last``) against free-text ``criteria``,
optionally next to a ``reference_output``, and words its results as Veval does, so log
greps keep working::

    Judge: <criteria> (score 0.30) — <reasoning>
    Judge: evaluation failed — <what went wrong>

A verdict without a score reads ``Judge: <criteria> — <reasoning>``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from scenarist.checks.base import Check
from scenarist.judges.base import BaseLLMCheck, JudgeInputError
from scenarist.judges.mocks import active_judge_mocks
from scenarist.judges.verdict import LLMCheckResult
from scenarist.model._missing import MISSING, is_missing
from scenarist.model.results import CheckResult, Metric
from scenarist.model.trace import Trace

__all__ = ["TraceJudge"]


@Check.register("trace_judge")
class TraceJudge(BaseLLMCheck):
    """The final output meets ``criteria`` in the judge's opinion (see the module doc)."""

    template = "criteria"
    criteria: str = Field(min_length=1)
    reference_output: Any = Field(default=MISSING, exclude_if=is_missing)

    async def get_inputs(self, trace: Trace[Any, Any]) -> dict[str, Any]:
        last = trace.last
        if last is None:
            raise JudgeInputError("the trace has no interaction to judge")
        has_reference = not is_missing(self.reference_output)
        return {
            "criteria": self.criteria,
            "input": last.inputs,
            "output": last.outputs,
            "has_reference": has_reference,
            "reference_output": self.reference_output if has_reference else None,
        }

    def verdict_message(self, verdict: LLMCheckResult, passed: bool) -> str:
        score = "" if verdict.score is None else f" (score {verdict.score:.2f})"
        return f"Judge: {self.criteria}{score} — {verdict.reason}"

    def error_message(self, problem: str) -> str:
        return f"Judge: evaluation failed — {problem}"

    async def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Ask the judge, or take a mocked verdict when a test client provides them."""
        mocks = active_judge_mocks()
        if mocks is None:
            return await super().run(trace)
        try:
            verdict = mocks.take(self.criteria)
        except LookupError as exc:
            return CheckResult.error(self.error_message(str(exc)))
        score = verdict.score
        passed = verdict.passed if self.threshold is None else (score or 0.0) >= self.threshold
        details = {"judge": {"name": "mock"}, "criteria": self.criteria}
        metrics = [Metric(name="judge_score", value=score)] if score is not None else []
        make = CheckResult.success if passed else CheckResult.failure
        return make(self.verdict_message(verdict, passed), details=details, metrics=metrics)
