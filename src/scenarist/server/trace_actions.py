"""What the trace page's two buttons do, shared by the API and the dashboard's forms:

- :func:`trace_to_item`: append a trace-backed :class:`~scenarist.model.items.ScenarioItem`
  (``trace_id=...``) to a named scenario's items, the one-click path from a bad
  production conversation to a regression test;
- :func:`trace_to_snapshot`: save the trace's steps as a snapshot (the replay module's
  :func:`~scenarist.replay.snapshots.save_snapshot_async`; a new version when the name
  exists, none when the content is the same as the latest).

Both refuse an unknown trace with :class:`TraceNotFound` (a 404) and bad names with
``UserError`` (a 422). No SQL here: everything goes through the store.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from scenarist.errors import UserError
from scenarist.model.items import ScenarioItem
from scenarist.replay.snapshots import SnapshotData, save_snapshot_async
from scenarist.server.schemas import Ident
from scenarist.store.sql._rows import check_name, dumps
from scenarist.store.sql.store import SqlStore
from scenarist.veval.agent_replay import replay_problem

__all__ = [
    "TraceItemBody",
    "TraceItemCreated",
    "TraceNotFound",
    "TraceSnapshotBody",
    "TraceSnapshotSaved",
    "trace_to_item",
    "trace_to_snapshot",
]


class TraceNotFound(Exception):
    """The trace is not stored."""


class TraceItemBody(BaseModel):
    """Make the trace an item of ``scenario_name`` (named ``name``, optional)."""

    scenario_name: Ident = Field(min_length=1, max_length=1000)
    name: Ident | None = Field(default=None, max_length=1000)


class TraceSnapshotBody(BaseModel):
    """Save the trace as the snapshot ``name``."""

    name: Ident = Field(min_length=1, max_length=1000)


class TraceItemCreated(BaseModel):
    """The new item, as ``GET /v1/scenarios/{name}/items`` lists it (``id`` included)."""

    item_id: str
    scenario_name: str
    item: dict[str, Any]
    replay_problem: str | None = None
    """Why running the item will error instead of replaying the trace (an OpenTelemetry
    trace without its LLM calls' content, a trace without steps); ``None`` when it
    replays. The item is made all the same: the trace may be re-imported with content."""


class TraceSnapshotSaved(BaseModel):
    name: str
    trace_id: str
    step_count: int


def _name(value: str, what: str) -> str:
    value = value.strip()
    if not value:
        raise UserError(f"{what} must not be empty")
    return str(check_name(value, what))


async def trace_to_item(
    store: SqlStore, trace_id: str, scenario_name: str, name: str | None = None
) -> TraceItemCreated:
    """Append a trace-backed item for ``trace_id`` to ``scenario_name``'s items."""
    scenario_name = _name(scenario_name, "scenario name")
    label = check_name((name or "").strip() or None, "item name")
    record = await store.get_trace(trace_id)
    if record is None:
        raise TraceNotFound(f"no trace {trace_id!r}")
    item = ScenarioItem(name=label, trace_id=trace_id)
    item_id = await store.add_item(scenario_name, item)
    return TraceItemCreated(
        item_id=item_id,
        scenario_name=scenario_name,
        item={"id": item_id, **json.loads(dumps(item))},
        replay_problem=replay_problem(record),
    )


async def trace_to_snapshot(store: SqlStore, trace_id: str, name: str) -> TraceSnapshotSaved:
    """Save the steps of ``trace_id`` as the snapshot ``name``."""
    name = _name(name, "snapshot name")
    record = await store.get_trace(trace_id)
    if record is None:
        raise TraceNotFound(f"no trace {trace_id!r}")
    snapshot: SnapshotData = await save_snapshot_async(store, name, record)
    return TraceSnapshotSaved(name=name, trace_id=trace_id, step_count=len(snapshot.steps))
