"""Old import path of :mod:`scenarist.store.sql.records`, kept so existing imports work."""

from scenarist.store.sql.records import (
    ApiKeyInfo,
    CheckResultView,
    HistoryPoint,
    IngestResult,
    Page,
    RunDetail,
    RunSummary,
    ScenarioHistory,
    ScenarioResultView,
    SnapshotInfo,
    TraceSummary,
    decode_cursor,
    encode_cursor,
)

__all__ = [
    "ApiKeyInfo",
    "CheckResultView",
    "HistoryPoint",
    "IngestResult",
    "Page",
    "RunDetail",
    "RunSummary",
    "ScenarioHistory",
    "ScenarioResultView",
    "SnapshotInfo",
    "TraceSummary",
    "decode_cursor",
    "encode_cursor",
]
