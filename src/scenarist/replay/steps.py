"""Old import path of :mod:`scenarist.replay.step_replay`, kept so existing imports work."""

from scenarist.replay.step_replay import (
    ReplayBinding,
    Replayer,
    ReplayFidelity,
    ReplayOptions,
    ReplayResult,
    UnusedRecording,
    canonical,
)

__all__ = [
    "ReplayBinding",
    "ReplayFidelity",
    "ReplayOptions",
    "ReplayResult",
    "Replayer",
    "UnusedRecording",
    "canonical",
]
