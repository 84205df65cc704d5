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
    model_validator,
)

from scenarist.model._construct import construct, replace
from scenarist.model._positional import Positional
from scenarist.model.trace import Interaction, InteractionLog, Span, SpanError, Trace

__all__ = ["TraceRecord", "run_total", "with_total"]


class TraceRecord(Positional):
    """A recorded agent run: what went in and out, how it ended, and its spans.

    Veval's ``TraceData`` constructor works as is, by keyword or by position in its
    field order: ``TraceRecord(trace_id="tr_1", input="q", status="success",
    steps=[Span(...)])`` (``completed_at`` is Veval's name of ``ended_at``; a string
    ``error`` is read as a :class:`SpanError`; ``project_id`` goes to
    ``metadata["project_id"]``). What a hand-built record leaves out has Veval's
    defaults: ``status`` ``"running"``, ``agent_name`` ``""``, ``total_cost_usd``
    ``None``. The records our own code builds (a run's, an OTLP import's, Veval's JSON)
    give every value, the total included, and a store saving a record without a total
    computes it from the steps (:func:`with_total`), as Veval's server does.
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
    agent_name: str | None = ""
    input: Any = None
    output: Any = None
    status: str = "running"
    error: SpanError | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = Field(
        default=None, validation_alias=AliasChoices("ended_at", "completed_at")
    )
    duration_ms: float | None = None
    total_cost_usd: float | None = None
    """What the run cost in all, as sent or stored (Veval's field); :attr:`cost_usd` is
    the steps' cost, computed."""
    is_replay: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)
    steps: list[Span] = Field(default_factory=list)

    @model_validator(mode="wrap")
    @classmethod
    def _veval_fields(cls, data: Any, handler: ModelWrapValidatorHandler[TraceRecord]) -> Any:
        """Veval's ``project_id`` (see the class docstring); ``total_cost_usd`` a number."""
        if isinstance(data, dict) and ("project_id" in data or "total_cost_usd" in data):
            declared = data.get("total_cost_usd")
            if declared is not None and (
                isinstance(declared, bool) or not isinstance(declared, int | float)
            ):
                raise ValueError(f"total_cost_usd must be a number or None, got {declared!r}")
            if "project_id" in data:
                data = dict(data)
                project = data.pop("project_id")
                if project:
                    if not isinstance(project, str):
                        raise ValueError(f"project_id must be a string, got {project!r}")
                    data["metadata"] = {**(data.get("metadata") or {}), "project_id": project}
        return handler(data)

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


def run_total(cost: float | None) -> float | None:
    """A run's ``total_cost_usd`` from its steps' cost, as Veval's SDK sends it: a total of
    zero (steps that cost nothing, or none with a cost) is no total, ``None``."""
    return cost or None


def with_total(record: TraceRecord) -> TraceRecord:
    """``record`` with its ``total_cost_usd``: as it is when it has one, else a copy whose
    total is the steps' cost (what a store keeps, as Veval's server computes the total of
    a trace sent without one). Steps that cost nothing give no total (:func:`run_total`):
    the record is returned as it is."""
    if record.total_cost_usd is not None:
        return record
    total = run_total(record.cost_usd)
    return record if total is None else replace(record, total_cost_usd=total)
