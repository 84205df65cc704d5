"""``TraceRecord``: one finished agent run, as stored and sent to a server.

It is the Veval ``TraceData`` of this project: the run's input, output, status, timing,
metadata and span tree. :meth:`TraceRecord.to_trace` turns it into a one-interaction
:class:`~scenarist.model.trace.Trace`, so every check (giskard-style or ``TraceAssert``) runs
on it unchanged.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scenarist.model._construct import construct
from scenarist.model.trace import Interaction, InteractionLog, Span, SpanError, Trace

__all__ = ["TraceRecord"]


class TraceRecord(BaseModel):
    """A recorded agent run: what went in and out, how it ended, and its spans."""

    model_config = ConfigDict(defer_build=True)

    trace_id: str
    agent_name: str | None = None
    input: Any = None
    output: Any = None
    status: str = "success"
    error: SpanError | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    duration_ms: float | None = None
    is_replay: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)
    steps: list[Span] = Field(default_factory=list)

    @property
    def spans(self) -> list[Span]:
        """Every span, flattened in pre-order."""
        return [s for root in self.steps for s in root.walk()]

    @property
    def cost_usd(self) -> float | None:
        """What the run spent, each call counted once (see :mod:`scenarist.model.usage`)."""
        from scenarist.model.usage import cost_spans

        costs = [s.cost_usd for s in cost_spans(self.steps) if s.cost_usd is not None]
        return sum(costs) if costs else None

    # -- Veval's TraceData names ---------------------------------------------------------

    @property
    def completed_at(self) -> datetime | None:
        """Veval's name for :attr:`ended_at`."""
        return self.ended_at

    @property
    def total_cost_usd(self) -> float | None:
        """Veval's name for :attr:`cost_usd`."""
        return self.cost_usd

    @property
    def project_id(self) -> str | None:
        """Veval's workspace id: ``metadata["project_id"]`` when set, else ``None``. The
        project a store keeps the trace in is the store's (:mod:`scenarist.store.projects`)."""
        value = self.metadata.get("project_id")
        return value if isinstance(value, str) else None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TraceRecord:
        """A record from Veval's trace JSON (or ours), as ``TraceData.from_dict`` reads it."""
        from scenarist.model.veval_wire import from_veval

        if not isinstance(data, dict):
            raise TypeError(f"TraceRecord.from_dict expects a dict, got {type(data).__name__}")
        steps = data.get("steps") or []
        if any(isinstance(s, dict) and "span_id" in s for s in steps) or "ended_at" in data:
            return cls.model_validate(data)  # our own JSON
        return from_veval(data)

    def to_interaction(self) -> Interaction[Any, Any]:
        """This run as one interaction (its spans inside, its failure as ``error``)."""
        return construct(
            Interaction,
            {
                "inputs": self.input,
                "outputs": self.output,
                "metadata": {
                    "trace_id": self.trace_id,
                    "agent_name": self.agent_name,
                    **self.metadata,
                },
                "spans": tuple(self.steps),
                "started_at": self.started_at,
                "duration_ms": self.duration_ms,
                "error": self.error,
            },
        )

    def to_trace(self) -> Trace[Any, Any]:
        """A one-interaction trace of this run, for checks and ``TraceAssert``."""
        return construct(
            Trace, {"interactions": InteractionLog([self.to_interaction()]), "annotations": {}}
        )
