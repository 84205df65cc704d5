"""Old import path of :mod:`scenarist.tracing.tracked_step`, kept so existing imports work."""

from scenarist.tracing.tracked_step import (
    StepHandle,
    decode_output,
    open_step,
    step,
)

__all__ = [
    "StepHandle",
    "decode_output",
    "open_step",
    "step",
]
