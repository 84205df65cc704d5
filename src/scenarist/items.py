"""Old import path of :mod:`scenarist.veval.items` (renamed), kept so existing imports work."""

from scenarist.veval.items import (
    ItemRunResult,
    ItemSummary,
    ScenarioItem,
    ScenarioRunRecord,
    ScenarioRunResult,
)

__all__ = [
    "ItemRunResult",
    "ItemSummary",
    "ScenarioItem",
    "ScenarioRunRecord",
    "ScenarioRunResult",
]
