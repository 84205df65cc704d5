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

from pydantic import Field, PrivateAttr

from scenarist.checks.base import Check
from scenarist.judges.base import BaseLLMCheck, JudgeInputError
from scenarist.judges.mocks import JudgeMocks, active_judge_mocks
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
    _mocks: JudgeMocks | None = PrivateAttr(default=None)
    """The judge mocks of the test client given to ``TraceAssert.judge(client, ...)``, for
    a judge run outside that client's scenarios (``evaluate_async`` called directly)."""

    def mocked_by(self, client: Any) -> TraceJudge:
        """Answer from ``client``'s judge mocks when it has any (a ``TestClient``)."""
        mocks = getattr(client, "judge_mocks", None)
        self._mocks = mocks if isinstance(mocks, JudgeMocks) else None
        return self

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

    def item_failure(self, verdict: CheckResult, ctx: Any = None) -> str | None:
        """As an item assertion: keep an answered verdict in ``ctx.judgments`` (as Veval
        does), and list a judge that could not judge in Veval's own words (``Judge:
        evaluation failed — ...``), without an ``[ERROR]`` prefix."""
        answer: Any = verdict.details.get("verdict")
        record = getattr(ctx, "record_judgment", None)
        if verdict.status in ("pass", "fail") and isinstance(answer, dict) and record:
            record(self.criteria, answer["score"], verdict.status == "pass", answer["reason"])
        if verdict.status == "pass":
            return None
        return verdict.message or f"{self.label} did not pass"

    async def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Ask the judge, or take a mocked verdict when a test client provides them (the
        mocked verdict decides, as in Veval's test SDK; no threshold applies to it)."""
        mocks = active_judge_mocks() or self._mocks
        if mocks is None:
            return await super().run(trace)
        details: dict[str, Any] = {"judge": {"name": "mock"}, "criteria": self.criteria}
        try:
            verdict = mocks.take(self.criteria)
        except LookupError as exc:
            return CheckResult.error(self.error_message(str(exc)), details=details)
        details["verdict"] = {
            "passed": verdict.passed,
            "reason": verdict.reasoning,
            "score": verdict.score,
        }
        details["reason"] = verdict.reasoning
        metrics = [Metric(name="judge_score", value=verdict.score)]
        message = f"Judge: {self.criteria} (score {verdict.score:.2f}) — {verdict.reasoning}"
        make = CheckResult.success if verdict.passed else CheckResult.failure
        return make(message, details=details, metrics=metrics)
