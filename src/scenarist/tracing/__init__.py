"""Tracing agent runs: the run context, steps (spans) and their recorder."""

from scenarist.tracing.context import RunContext, new_trace_id
from scenarist.tracing.record import TraceRecord
from scenarist.tracing.recorder import RunRecorder, current_recorder, current_span
from scenarist.tracing.steps import StepHandle, step

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
