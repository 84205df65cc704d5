"""``TraceRecord``: one finished agent run, as stored and sent to a server.

It is the Veval ``TraceData`` of this project: the run's input, output, status, timing,
metadata and span tree. :meth:`TraceRecord.to_trace` turns it into a one-interaction
:class:`~scenarist.model.trace.Trace`, so every check (giskard-style or ``TraceAssert``) runs
on it unchanged.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import (
    AliasChoices,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    model_validator,
)

from scenarist.model._construct import construct
from scenarist.model._positional import Positional
from scenarist.model.trace import Interaction, InteractionLog, Span, SpanError, Trace

__all__ = ["TraceRecord"]


class TraceRecord(Positional):
    """A recorded agent run: what went in and out, how it ended, and its spans.

    Veval's ``TraceData`` constructor works as is, by keyword or by position in its
    field order: ``TraceRecord(trace_id="tr_1", input="q", status="success",
    steps=[Span(...)])`` (``completed_at`` is Veval's name of ``ended_at``; a string
    ``error`` is read as a :class:`SpanError`; ``project_id`` goes to
    ``metadata["project_id"]``; a given ``total_cost_usd`` is what :attr:`total_cost_usd`
    reads, as in Veval, instead of the steps' cost).
    """

    model_config = ConfigDict(defer_build=True)
    __positional__ = (
        "trace_id",
        "agent_name",
        "project_id",
        "input",
        "output",
        "status",
        "error",
        "started_at",
        "completed_at",
        "duration_ms",
        "total_cost_usd",
        "metadata",
        "steps",
    )

    trace_id: str = ""
    agent_name: str | None = None
    input: Any = None
    output: Any = None
    status: str = "success"
    error: SpanError | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = Field(
        default=None, validation_alias=AliasChoices("ended_at", "completed_at")
    )
    duration_ms: float | None = None
    is_replay: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)
    steps: list[Span] = Field(default_factory=list)
    _declared_cost_usd: float | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _veval_fields(cls, data: Any, handler: ModelWrapValidatorHandler[TraceRecord]) -> Any:
        """Veval's ``project_id`` and ``total_cost_usd`` (see the class docstring)."""
        declared = None
        if isinstance(data, dict) and ("project_id" in data or "total_cost_usd" in data):
            data = dict(data)
            project = data.pop("project_id", None)
            declared = data.pop("total_cost_usd", None)
            if project:
                if not isinstance(project, str):
                    raise ValueError(f"project_id must be a string, got {project!r}")
                data["metadata"] = {**(data.get("metadata") or {}), "project_id": project}
            if declared is not None and (
                isinstance(declared, bool) or not isinstance(declared, int | float)
            ):
                raise ValueError(f"total_cost_usd must be a number, got {declared!r}")
        record = handler(data)
        if declared is not None:
            record._declared_cost_usd = float(declared)
        return record

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
        """The ``total_cost_usd`` it was built with (Veval's field), else :attr:`cost_usd`."""
        private = self.__pydantic_private__  # None on records built without validation
        declared = private.get("_declared_cost_usd") if private else None
        return declared if declared is not None else self.cost_usd

    @property
    def project_id(self) -> str:
        """Veval's workspace id: ``metadata["project_id"]`` when set, else ``""`` (Veval's
        default). The project a store keeps the trace in is the store's
        (:mod:`scenarist.store.projects`)."""
        value = self.metadata.get("project_id")
        return value if isinstance(value, str) else ""

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
