"""A store that keeps everything in memory (tests, throw-away runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scenarist.model.items import ScenarioItem, ScenarioRunRecord
from scenarist.model.record import TraceRecord, with_total

if TYPE_CHECKING:
    from scenarist.replay.snapshots import SnapshotData

__all__ = ["MemoryStore"]


class MemoryStore:
    """Implements :class:`~scenarist.store.Store` with dictionaries."""

    def __init__(self) -> None:
        self.traces: dict[str, TraceRecord] = {}
        self.runs: list[ScenarioRunRecord] = []
        self.items: dict[str, list[ScenarioItem]] = {}
        self.snapshots: dict[str, SnapshotData] = {}

    async def save_trace(self, record: TraceRecord) -> None:
        self.traces[record.trace_id] = with_total(record)  # as Veval's server computes it

    async def get_trace(self, trace_id: str) -> TraceRecord | None:
        return self.traces.get(trace_id)

    async def save_scenario_run(self, run: ScenarioRunRecord) -> None:
        self.runs.append(run)

    async def list_scenario_runs(self, scenario_name: str) -> list[ScenarioRunRecord]:
        return [r for r in self.runs if r.scenario_name == scenario_name]

    async def get_items(self, scenario_name: str) -> list[ScenarioItem]:
        return list(self.items.get(scenario_name, []))

    async def save_items(self, scenario_name: str, items: list[ScenarioItem]) -> None:
        self.items[scenario_name] = list(items)

    async def save_snapshot(self, name: str, snapshot: SnapshotData) -> None:
        self.snapshots[name] = snapshot

    async def get_snapshot(self, name: str) -> SnapshotData | None:
        return self.snapshots.get(name)
