"""Tracing agent runs: the run context, steps (spans) and their recorder.

Every name loads on first use (see :mod:`scenarist._lazy`), so importing the HTTP capture
(:mod:`scenarist.tracing.http`) loads neither pydantic nor the recorder.
"""

from typing import TYPE_CHECKING

from scenarist._lazy import lazy_attributes

if TYPE_CHECKING:
    from scenarist.model.record import TraceRecord
    from scenarist.tracing.context import RunContext, new_trace_id
    from scenarist.tracing.recorder import RunRecorder, current_recorder, current_span
    from scenarist.tracing.tracked_step import StepHandle, step

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "RunContext": "scenarist.tracing.context",
        "RunRecorder": "scenarist.tracing.recorder",
        "current_recorder": "scenarist.tracing.recorder",
        "current_span": "scenarist.tracing.recorder",
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
