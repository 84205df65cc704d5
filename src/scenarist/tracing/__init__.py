"""Tracing agent runs: the run context, steps (spans) and their recorder.

The recorder loads with the scenario engine (every target call is traced); the rest
loads on first use (see :mod:`scenarist._lazy`).
"""

from typing import TYPE_CHECKING

from scenarist._lazy import lazy_attributes
from scenarist.tracing.recorder import RunRecorder, current_recorder, current_span

if TYPE_CHECKING:
    from scenarist.model.record import TraceRecord
    from scenarist.tracing.context import RunContext, new_trace_id
    from scenarist.tracing.tracked_step import StepHandle, step

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "RunContext": "scenarist.tracing.context",
        "StepHandle": "scenarist.tracing.tracked_step",
        "TraceRecord": "scenarist.model.record",
        "new_trace_id": "scenarist.tracing.context",
        "step": "scenarist.tracing.tracked_step",
    },
)

__all__ = [
    "RunContext",
    "RunRecorder",
    "StepHandle",
    "TraceRecord",
    "current_recorder",
    "current_span",
    "new_trace_id",
    "step",
]
