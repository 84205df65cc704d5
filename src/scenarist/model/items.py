"""Veval-style scenarios: named sets of items run through an agent, with assertions.

A :class:`ScenarioItem` is either **synthetic** (an ``input``: the agent runs live) or
**trace-backed** (a ``trace_id`` or inline ``trace``: a recorded run replayed with mocked
LLM responses). Each item's run becomes a :class:`ItemRunResult`; the whole run a
:class:`ScenarioRunResult`, whose serialisable summary (:class:`ScenarioRunRecord`) is
always stored, whatever happened to the items.
"""

from __future__ import annotations

from abc import ABC
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    field_validator,
)

from scenarist.errors import SerializationError
from scenarist.model._positional import Positional
from scenarist.model._registry import family
from scenarist.model.certificate import ReplayCertificate
from scenarist.model.record import TraceRecord

__all__ = ["ITraceAssertion", "ItemSummary", "ScenarioItem", "ScenarioRunRecord"]

NO_INPUT_MESSAGE = "ScenarioItem must have either trace_id or input"


class ITraceAssertion(ABC):  # noqa: B024 (no abstract method: Veval's class has none)
    """Veval's custom assertion interface, for item assertions in ``run_scenario_async``.

    Subclass it and implement ``evaluate_async(ctx)`` (or the sync ``evaluate(ctx)``):
    return ``None`` to pass, or a message to fail. ``ctx`` is the item's
    :class:`~scenarist.tracing.RunContext` (``ctx.steps``, ``ctx.output``,
    ``ctx.metadata``). Unlike Veval, an assertion that raises fails its item only, and a
    returned value that is neither ``None`` nor a string is reported as an error.

    Every check (``TraceAssert``'s and giskard-style ones) is registered as one, with
    ``evaluate_async(ctx)``, as Veval's built-in assertions are its instances.
    """

    async def evaluate_async(self, ctx: Any) -> str | None:
        return self.evaluate(ctx)

    def evaluate(self, ctx: Any) -> str | None:
        raise NotImplementedError(
            f"{type(self).__name__} must implement evaluate_async(ctx) or evaluate(ctx)"
        )


def _check_base() -> type[Any]:
    """``Check``, the base of the checks an item holds (a layer above the model)."""
    return family("check", "scenarist.checks")


class ScenarioItem(Positional):
    """One case of a Veval-style scenario.

    ``input`` runs the agent live (``""`` counts as an input). ``trace_id`` (or an inline
    ``trace``: a :class:`TraceRecord`, its JSON, or a path to a JSON file) replays a
    recorded run; it wins over ``input``. ``assertions`` apply to this item only, after
    the scenario-level ones. ``mock_model_steps`` is Veval's field, accepted so Veval
    items load, and has no effect: a trace-backed item is always mocked unless
    ``live_model_steps=True`` runs its recorded ``llm`` steps live.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)
    __positional__ = ("name", "trace_id", "input", "assertions", "mock_model_steps")

    name: str | None = None
    input: Any = None
    trace_id: str | None = None
    trace: TraceRecord | Path | None = None
    assertions: list[Any] = Field(default_factory=list)
    mock_model_steps: bool = False
    live_model_steps: bool = False
    expected_output: Any = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("assertions", mode="before")
    @classmethod
    def _assertions_are_checks(cls, assertions: Any) -> list[Any]:
        checked: list[Any] = []
        check = _check_base()
        for assertion in assertions or []:
            if isinstance(assertion, dict):  # a stored item: rebuild the check by kind
                assertion = check.model_validate(assertion)
            if not isinstance(assertion, check | ITraceAssertion):
                raise ValueError(
                    "assertions must be checks such as TraceAssert.max_cost(0.05) or "
                    f"ITraceAssertion objects, got {type(assertion).__name__}"
                )
            checked.append(assertion)
        return checked

    @field_serializer("assertions")
    def _dump_assertions(self, assertions: list[Any]) -> list[Any]:
        dumped: list[Any] = []
        check = _check_base()
        for assertion in assertions:
            if not isinstance(assertion, check):
                raise SerializationError(
                    f"item {self.label!r}: the assertion {type(assertion).__name__} is code "
                    "(an ITraceAssertion) and cannot be stored; store built-in checks only"
                )
            dumped.append(assertion.model_dump(mode="json"))
        return dumped

    @property
    def is_trace_backed(self) -> bool:
        return self.trace_id is not None or self.trace is not None

    @property
    def label(self) -> str:
        """The item's name, else a short form of its input or trace id."""
        if self.name:
            return self.name
        if self.is_trace_backed:
            return f"trace {self.trace_id or 'inline'}"
        text = str(self.input)
        return text if len(text) <= 40 else text[:39] + "…"


class ItemSummary(BaseModel):
    """The stored line for one item of a scenario run."""

    name: str
    passed: bool
    failures: list[str] = Field(default_factory=list)
    trace_id: str | None = None
    duration_ms: float = 0.0
    cost_usd: float | None = None
    trace_backed: bool = False
    replay_of: str | None = None
    """A trace-backed item's recorded trace (``trace_id`` is the trace of this run: for a
    trace-backed item, its replay); the dashboard's trace page finds the item's verdicts
    by it."""
    certificate: ReplayCertificate | None = None
    """A trace-backed item's replay certificate (absent from older records)."""


class ScenarioRunRecord(BaseModel):
    """The stored summary of a scenario run: always written, even when items fail."""

    run_id: str
    scenario_name: str
    started_at: datetime
    ended_at: datetime
    duration_ms: float
    passed: bool
    pass_count: int
    fail_count: int
    cost_usd: float | None = None
    error: str | None = None
    items: list[ItemSummary] = Field(default_factory=list)
    inline_items: bool = False
    """The items were passed to the run (``items=[...]``), not fetched from the stored
    items: the items page lists them under this run."""
    certificate: ReplayCertificate | None = None
    """The replay certificate of its trace-backed items (absent from older records)."""
