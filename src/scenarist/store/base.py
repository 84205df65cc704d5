"""The store interface: where traces, scenario runs, scenario items and snapshots live.

The library writes through this interface only. Two implementations ship here: an
in-memory store (tests, throw-away runs) and a local SQLite file (the default, so a run on
a fresh machine is kept with no setup). The server issue implements the same interface
against its shared database, and a client that talks to a server implements it over HTTP.

Methods are ``async`` because the real implementations do I/O; the local ones answer
immediately.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from scenarist.model.items import ScenarioItem, ScenarioRunRecord
    from scenarist.model.record import TraceRecord
    from scenarist.replay.snapshots import SnapshotData

__all__ = ["Store"]


@runtime_checkable
class Store(Protocol):
    """Persistence for agent runs, scenario runs, scenario items and snapshots."""

    async def save_trace(self, record: TraceRecord) -> None:
        """Store (or replace) one agent run; one without a ``total_cost_usd`` is kept with
        the steps' cost (``with_total``), as Veval's server computes it."""
        ...

    async def get_trace(self, trace_id: str) -> TraceRecord | None:
        """The run with ``trace_id``, or ``None``."""
        ...

    async def save_scenario_run(self, run: ScenarioRunRecord) -> None:
        """Store the summary of one scenario run."""
        ...

    async def list_scenario_runs(self, scenario_name: str) -> list[ScenarioRunRecord]:
        """Summaries of the runs of ``scenario_name``, oldest first."""
        ...

    async def get_items(self, scenario_name: str) -> list[ScenarioItem]:
        """The stored items of ``scenario_name`` (empty when there are none)."""
        ...

    async def save_items(self, scenario_name: str, items: list[ScenarioItem]) -> None:
        """Replace the stored items of ``scenario_name``."""
        ...

    async def save_snapshot(self, name: str, snapshot: SnapshotData) -> None:
        """Store ``snapshot`` as ``name``, replacing any snapshot of that name."""
        ...

    async def get_snapshot(self, name: str) -> SnapshotData | None:
        """The snapshot saved as ``name``, or ``None``."""
        ...
