"""``BaseLLMCheck``: the one base of every LLM-as-judge check.

A judge check is a typed config like any check, plus a rubric. Running it:

1. :meth:`BaseLLMCheck.get_inputs` reads the values the rubric needs from the trace (a
   key with no match is ERROR, naming the key);
2. :meth:`BaseLLMCheck.get_prompt` gives the Jinja2 source, rendered with those inputs
   (an undefined variable is ERROR);
3. the judge (:mod:`scenarist.judges.judge`) is asked ``samples`` times, at
   ``temperature`` (0 by default), each answer parsed strictly with ``max_retries``;
4. the verdicts are combined by majority (a tie fails), or, with ``threshold``, by score.

With ``labelled_set=`` (and ``min_kappa``, ``min_agreement``) the judge is first
calibrated against human labels (:mod:`scenarist.judges.gate`): below the minimum the
check is ERROR with the figures; above it, ``details["calibration"]`` carries the badge.

The verdict's reason is the message. ``details`` holds, as giskard-checks' does, the
``reason`` and the ``inputs`` given to the judge (the rubric's variables, the trace
included: the run's, not a copy); and ours: each input but the trace at the top level, the rendered
prompt, the judge's name and usage. Score, agreement, tokens and cost go in ``metrics``,
apart from the agent's own spans.
"""

from __future__ import annotations

import asyncio
import os
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_serializer,
    model_validator,
)

from scenarist.checks._values import is_none
from scenarist.checks.base import Check
from scenarist.errors import JudgeInputError
from scenarist.judges._prompts import PromptError, builtin, judge_messages, render
from scenarist.judges.judge import BaseJudge, JudgeCall, LLMChatJudge, judge_name, resolve_judge
from scenarist.judges.verdict import LLMCheckResult
from scenarist.model.results import CheckResult, Metric
from scenarist.model.trace import Trace
from scenarist.providers.base import ProviderError
from scenarist.providers.named_model import adopt

__all__ = ["BaseLLMCheck", "JudgeInputError", "WithJudgeMixin"]


def _check_judge(value: Any) -> Any:
    if isinstance(value, dict) and "kind" in value:  # a dumped judge: rebuild its kind
        return BaseJudge.model_validate(value)
    value = adopt(value)  # a giskard-agents Generator: ours, by its name
    if value is None or isinstance(value, BaseJudge) or callable(getattr(value, "chat", None)):
        return value
    if isinstance(value, str) and "/" in value.strip("/"):
        return value.strip()
    raise ValueError(
        f"judge must be a 'provider/model' string (e.g. 'openai/gpt-4o-mini'), a Provider, "
        f"a BaseJudge or a dumped judge ({{'kind': ...}}), got {value!r}"
    )


JudgeSpec = Annotated[Any, BeforeValidator(_check_judge)]


class WithJudgeMixin(BaseModel):
    """Adds ``judge``: a ``"provider/model"`` string, a Provider, a BaseJudge, or ``None``
    for the default judge. Dumped to JSON as its name (a chat judge or a provider), so a
    run log says who judged, or as ``{"kind": ..., fields}`` (any other judge), so a
    registered user judge loads back."""

    model_config = ConfigDict(defer_build=True, arbitrary_types_allowed=True)

    judge: JudgeSpec = Field(default=None, exclude_if=is_none)

    @model_validator(mode="before")
    @classmethod
    def _legacy_generator(cls, data: Any) -> Any:
        # giskard-checks' legacy name of the field: ``generator=`` means ``judge=``.
        if not isinstance(data, dict) or "generator" not in data:
            return data
        data = dict(data)
        generator = data.pop("generator")
        if generator is not None and data.get("judge") is not None:
            raise ValueError("give judge= or its legacy name generator=, not both")
        if generator is not None:
            data["judge"] = generator
        return data

    @field_serializer("judge", when_used="json")
    def _judge_as_json(self, value: Any) -> Any:
        # A chat judge by its model's name (it loads back; giskard-checks reads names too);
        # any other judge as its kind and fields, so a registered user judge loads back.
        if isinstance(value, LLMChatJudge):
            return judge_name(value) if value.generator is not None else {"kind": value.kind}
        if isinstance(value, BaseJudge):
            return value.model_dump(mode="json")
        return None if value is None else judge_name(value)

    def resolved_judge(self) -> BaseJudge:
        """The judge this check will ask (raises ``ProviderError`` if none can be built)."""
        return resolve_judge(self.judge)


def _as_path_text(value: Any) -> Any:
    """A labelled set's path as text (a ``Path`` is accepted); blank is refused."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str) and not value.strip():
        raise ValueError("labelled_set must be the path of a labelled set file, got ''")
    return value


def _total(values: list[Any]) -> Any:
    """The sum, or ``None`` when any part is unknown (a total is never silently too low)."""
    return None if any(v is None for v in values) else sum(values)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


class BaseLLMCheck(Check, WithJudgeMixin):
    """Base of the judge checks; subclasses give a template and the inputs it needs.

    ``samples=k`` asks k times and takes the majority (ties fail: a check that the judge
    cannot make up its mind about has not been shown to pass); the agreement rate is the
    ``judge_agreement`` metric. ``threshold``, when set, lets the score decide instead of
    ``passed`` (score ≥ threshold passes; a verdict without a score is then ERROR).
    """

    template: ClassVar[str] = ""
    """The built-in template's name (``templates/<template>.j2``)."""

    # Beyond giskard-checks; left out of dumps at their defaults, so giskard loads our files.
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, exclude_if=lambda v: v == 0.0)
    samples: int = Field(default=1, ge=1, le=25, exclude_if=lambda v: v == 1)
    max_retries: int = Field(default=2, ge=0, le=10, exclude_if=lambda v: v == 2)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0, exclude_if=is_none)
    # The calibration gate (judges/gate.py); absent from dumps when unused.
    labelled_set: Annotated[str | None, BeforeValidator(_as_path_text)] = Field(
        default=None, exclude_if=is_none
    )
    min_kappa: float | None = Field(default=None, ge=-1.0, le=1.0, exclude_if=is_none)
    min_agreement: float | None = Field(default=None, ge=0.0, le=1.0, exclude_if=is_none)

    @model_validator(mode="after")
    def _gate_needs_a_set(self) -> Self:
        if self.labelled_set is None:
            for name in ("min_kappa", "min_agreement"):
                if getattr(self, name) is not None:
                    raise ValueError(
                        f"{name}={getattr(self, name)!r} needs labelled_set= (the file of "
                        "human labels the judge is calibrated against), e.g. "
                        "labelled_set='labels/refund.jsonl'"
                    )
        return self

    def get_prompt(self) -> str:
        """The rubric's Jinja2 source."""
        return builtin(self.template)

    def prompt_source_name(self) -> str:
        """How error messages name the template."""
        return f"{self.template}.j2"

    async def get_inputs(self, trace: Trace[Any, Any]) -> dict[str, Any]:
        """The template variables; raise :class:`JudgeInputError` when one cannot be read."""
        return {"trace": trace}

    def copy_with(self, **changes: Any) -> Self:
        """A validated copy with some fields changed; it keeps the same judge object."""
        data = {**self.model_dump(), **changes, "kind": self.kind}
        if "judge" not in changes and "generator" not in changes:
            data["judge"] = self.judge
        return self.model_validate(data)

    # -- outcome wording: TraceAssert.judge overrides these for Veval's messages ----------

    def verdict_message(self, verdict: LLMCheckResult, passed: bool) -> str:
        """The message of a PASS or FAIL: the verdict's reason."""
        return verdict.reason

    def error_message(self, problem: str) -> str:
        """The message of an ERROR."""
        return problem

    # -- running ---------------------------------------------------------------------------

    async def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Render the rubric, ask the judge, and turn its verdicts into a result."""
        try:
            inputs = await self.get_inputs(trace)
        except JudgeInputError as exc:
            return CheckResult.error(self.error_message(str(exc)))
        details = {k: v for k, v in inputs.items() if not isinstance(v, Trace)}
        # giskard-style judges get the template's variables, the trace included; giskard's
        # details keep them as "inputs"
        variables = details["inputs"] = {"trace": trace, **inputs}
        try:
            template = self.get_prompt()
            prompt = render(template, inputs, source_name=self.prompt_source_name())
        except PromptError as exc:
            return CheckResult.error(self.error_message(str(exc)), details=details)
        details["prompt"] = prompt
        try:
            judge = self.resolved_judge()
            details["judge"] = {"name": judge.name}
            if self.labelled_set is not None:
                from scenarist.judges.gate import calibration_gate

                gate = await calibration_gate(self, judge)
                details["calibration"] = gate.badge
                if gate.problem is not None:
                    return CheckResult.error(self.error_message(gate.problem), details=details)
            calls = await asyncio.gather(
                *(
                    judge.verdict_call(
                        template,
                        variables,
                        judge_messages(prompt),
                        temperature=self.temperature,
                        max_retries=self.max_retries,
                        threshold=self.threshold,
                    )
                    for _ in range(self.samples)
                )
            )
        except ProviderError as exc:
            details["exception_type"] = type(exc).__name__
            return CheckResult.error(self.error_message(str(exc)), details=details)
        return self._decide(list(calls), details)

    def _decide(self, calls: list[JudgeCall], details: dict[str, Any]) -> CheckResult:
        metrics = self._usage(calls, details)
        attempts = [
            {**({"sample": index} if len(calls) > 1 else {}), "attempt": number, **entry}
            for index, call in enumerate(calls, start=1)
            for number, entry in enumerate(call.log, start=1)
        ]
        if attempts:  # every request the judge made: raw answer, tokens, why it was refused
            details["attempts"] = attempts
        if self.samples > 1:
            details["samples"] = [
                c.verdict.model_dump() if c.verdict else {"problem": c.problem} for c in calls
            ]
        for index, call in enumerate(calls, start=1):
            if call.verdict is None:
                which = f" (sample {index} of {len(calls)})" if len(calls) > 1 else ""
                details["answers"] = call.answers
                return CheckResult.error(
                    self.error_message(
                        f"The judge gave no valid verdict after {call.attempts} attempt(s)"
                        f"{which}: {'; '.join(call.problems)}."
                    ),
                    details=details,
                    metrics=metrics,
                )
        verdicts = [c.verdict for c in calls if c.verdict is not None]
        if self.threshold is not None and any(v.score is None for v in verdicts):
            return CheckResult.error(
                self.error_message(
                    f"threshold={self.threshold} needs a score, but the judge gave none."
                ),
                details=details,
                metrics=metrics,
            )
        votes = [
            v.passed if self.threshold is None else (v.score or 0.0) >= self.threshold
            for v in verdicts
        ]
        passes = sum(votes)
        passed = passes * 2 > len(votes)
        chosen = next(v for v, vote in zip(verdicts, votes, strict=True) if vote is passed)
        score = _mean([v.score for v in verdicts if v.score is not None])
        if score is not None:
            metrics.insert(0, Metric(name="judge_score", value=score))
        if len(votes) > 1:
            agreement = max(passes, len(votes) - passes) / len(votes)
            metrics.insert(0, Metric(name="judge_agreement", value=agreement))
        details["verdict"] = {"passed": passed, "reason": chosen.reason, "score": score}
        details["reason"] = chosen.reason  # where giskard-checks users read it
        message = self.verdict_message(chosen.model_copy(update={"score": score}), passed)
        if passed:
            return CheckResult.success(message, details=details, metrics=metrics)
        return CheckResult.failure(message, details=details, metrics=metrics)

    @staticmethod
    def _usage(calls: list[JudgeCall], details: dict[str, Any]) -> list[Metric]:
        """The judge's own usage, summed over samples and retries (unknown stays unknown)."""
        usage = {
            "model": next((c.model for c in calls if c.model), None),
            "calls": sum(c.attempts for c in calls),
            "tokens_in": _total([c.tokens_in for c in calls]),
            "tokens_out": _total([c.tokens_out for c in calls]),
            "cost_usd": _total([c.cost_usd for c in calls]),
        }
        details["judge"] = {**details.get("judge", {}), **usage}
        metrics = [Metric(name="judge_calls", value=usage["calls"])]
        for key in ("tokens_in", "tokens_out", "cost_usd"):
            if usage[key] is not None:
                metrics.append(Metric(name=f"judge_{key}", value=usage[key]))
        return metrics
