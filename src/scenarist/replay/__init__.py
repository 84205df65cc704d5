"""Replay and snapshots: serving recorded runs, and step-sequence baselines."""

from scenarist.errors import CassetteError, ReplayMissError
from scenarist.replay.cassette import (
    RECORD_MODE_ENV,
    Cassette,
    CassetteMode,
    CassetteStats,
    cassette,
    cassette_lane,
)
from scenarist.replay.snapshot_diff import (
    SnapshotAlignmentRow,
    SnapshotChange,
    SnapshotDiff,
    SnapshotOptions,
)
from scenarist.replay.snapshots import (
    SnapshotData,
    SnapshotStep,
    compare_snapshot,
    compare_snapshot_async,
    compare_snapshots,
    get_snapshot,
    get_snapshot_async,
    load_snapshot,
    load_snapshot_async,
    save_snapshot,
    save_snapshot_async,
)

__all__ = [
    "RECORD_MODE_ENV",
    "Cassette",
    "CassetteError",
    "CassetteMode",
    "CassetteStats",
    "ReplayMissError",
    "SnapshotAlignmentRow",
    "SnapshotChange",
    "SnapshotData",
    "SnapshotDiff",
    "SnapshotOptions",
    "SnapshotStep",
    "cassette",
    "cassette_lane",
    "compare_snapshot",
    "compare_snapshot_async",
    "compare_snapshots",
    "get_snapshot",
    "get_snapshot_async",
    "load_snapshot",
    "load_snapshot_async",
    "save_snapshot",
    "save_snapshot_async",
]
