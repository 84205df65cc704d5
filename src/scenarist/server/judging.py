"""``/v1/judge``: a Veval-style judge verdict computed by the server.

The server judges with *its* judge model (``SCENARIST_DEFAULT_JUDGE``, else the default
generator, or ``app.state.judge`` when the app was given one): clients send a trace (or
the id of a stored trace) and criteria, and never choose the provider, so a shared server
spends its operator's LLM budget only on the model its operator picked. The verdict is
the one ``TraceAssert.judge`` gives in a local run (the same check, the same prompt).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from scenarist.providers.base import Provider, ProviderError
from scenarist.server.schemas import Ident, VevalTrace

__all__ = ["JudgeBody", "JudgeNotConfigured", "JudgeVerdict", "judge_trace", "server_judge"]


_PAIR = frozenset({"input", "output"})


class JudgeBody(BaseModel):
    """What to judge, and the criteria: one of a trace in Veval's format (``trace``), a
    stored trace's id (``trace_id``), or the ``input`` and ``output`` the Veval SDK's
    ``judge_async`` sends (its run's last step). ``model`` (also sent by the SDK) is
    accepted and not used: the server judges with its operator's model."""

    model_config = ConfigDict(extra="forbid")

    criteria: str = Field(min_length=1, max_length=20_000)
    trace: VevalTrace | None = None
    trace_id: Ident | None = Field(default=None, min_length=1, max_length=200)
    input: Any = None
    output: Any = None
    model: str | None = Field(default=None, max_length=200)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    reference_output: Any = None
    samples: int | None = Field(default=None, ge=1, le=9)

    @property
    def is_pair(self) -> bool:
        """Whether the body is the Veval SDK's form (``input`` and ``output``)."""
        return bool(_PAIR & self.model_fields_set)

    @model_validator(mode="after")
    def _one_trace(self) -> JudgeBody:
        given = [
            name
            for name, there in (
                ("trace", self.trace is not None),
                ("trace_id", self.trace_id is not None),
                ("input/output", self.is_pair),
            )
            if there
        ]
        if len(given) != 1:
            raise ValueError(
                "send exactly one of 'trace' (a trace object), 'trace_id' (a stored trace) "
                "and 'input' with 'output' (what the Veval SDK's judge_async sends)"
                + (f"; got {' and '.join(given)}" if given else "")
            )
        return self


class JudgeVerdict(BaseModel):
    """Veval's judge answer (``passed``, ``score``, ``reasoning``) plus the check status
    (``pass``, ``fail``, or ``error`` when the judge gave no usable verdict)."""

    passed: bool
    score: float | None
    reasoning: str | None
    status: str
    judge: str


class JudgeNotConfigured(Exception):
    """No judge model is configured on the server, or it cannot be used."""


def server_judge(configured: Any = None) -> Provider:
    """The server's judge provider: ``configured``, else the default judge setting."""
    from scenarist.providers.resolve import resolve_provider

    try:
        return resolve_provider(configured, purpose="judge")
    except ProviderError as exc:
        raise JudgeNotConfigured(
            f"this server has no usable judge model ({exc}); its operator sets "
            "SCENARIST_DEFAULT_JUDGE, e.g. 'openai/gpt-4o-mini', and restarts it"
        ) from exc


async def judge_trace(body: JudgeBody, record: Any, provider: Provider) -> JudgeVerdict:
    """Judge ``record`` (a ``TraceRecord``) against ``body.criteria`` with ``provider``."""
    from scenarist.engine.runner import run_check
    from scenarist.veval.trace_assert import TraceAssert

    check = TraceAssert.judge(
        criteria=body.criteria,
        model=provider,
        threshold=body.threshold,
        reference_output=body.reference_output,
        samples=body.samples,
    )
    verdict = await run_check(check, record.to_trace(), return_exception=True)
    score = next((m.value for m in verdict.metrics if m.name == "judge_score"), None)
    return JudgeVerdict(
        passed=verdict.status == "pass",
        score=score,
        reasoning=verdict.message,
        status=verdict.status.value,
        judge=provider.name,
    )
