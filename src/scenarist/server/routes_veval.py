"""Veval-compatible endpoints (``/v1``): traces, scenario items, scenario runs, snapshots.

Shapes are Veval's where Veval defines them (see :mod:`scenarist.model.veval_wire`);
scenario names are path segments, URL-encoded, and may contain ``/``.
"""

from __future__ import annotations

import json
from pathlib import Path as FilePath
from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Request, Response
from pydantic import ValidationError

from scenarist.model.certificate import trace_certificate
from scenarist.model.items import ScenarioItem, ScenarioRunRecord
from scenarist.model.trace import MAX_SPAN_DEPTH, first_too_deep
from scenarist.model.veval_wire import from_veval, to_veval
from scenarist.redaction import redact_received
from scenarist.server._deps import Cursor, Ingest, Limit, Read, Store
from scenarist.server._errors import error_response, payload_error, validation_fields
from scenarist.server._input_limits import CheckedRoute, InvalidInput
from scenarist.server.auth import require_scope
from scenarist.server.schemas import ItemsBody, ScenarioRunBody, SnapshotBody, VevalTrace
from scenarist.store.sql._rows import dumps
from scenarist.store.sql.records import Page, SnapshotInfo
from scenarist.store.sql.store import SqlStore

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["veval"], route_class=CheckedRoute)
ItemData = Annotated[dict[str, Any], Body(description="a scenario item")]
Name = Path(min_length=1, max_length=1000, description="scenario name (URL-encoded)")
_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "not found"}}


class _ItemError(Exception):
    def __init__(self, fields: list[dict[str, Any]]) -> None:
        self.fields = fields


def _item(data: dict[str, Any], where: tuple[Any, ...] = ()) -> ScenarioItem:
    try:
        item = ScenarioItem.model_validate(data)
    except ValidationError as exc:
        raise _ItemError(validation_fields(exc.errors(), where)) from exc
    if isinstance(item.trace, FilePath):
        field = ".".join(str(p) for p in (*where, "trace"))
        raise _ItemError(
            [
                {
                    "field": field,
                    "message": "an inline trace must be a trace object, not a file path",
                    "type": "value_error",
                }
            ]
        )
    return item


def _field_error(where: tuple[Any, ...], name: str, message: str) -> _ItemError:
    field = ".".join(str(p) for p in (*where, name))
    return _ItemError([{"field": field, "message": message, "type": "value_error"}])


async def _runnable_item(
    store: SqlStore, data: dict[str, Any], where: tuple[Any, ...] = ()
) -> ScenarioItem:
    """A valid item that can run: it has an ``input`` (``""`` counts) or a recording, and a
    ``trace_id`` names a trace this server holds (else 422 naming the field)."""
    item = _item(data, where)
    if item.trace_id is None and item.trace is None and item.input is None:
        raise _field_error(
            where,
            "input",
            "the item has neither an input nor a trace_id: give it an input to run the "
            "agent live, or the trace_id of a stored trace to replay",
        )
    held = item.trace is not None or item.trace_id is None
    if not held and await store.get_trace(str(item.trace_id)) is None:
        raise _field_error(
            where,
            "trace_id",
            f"trace {item.trace_id!r} is not stored on this server; post the trace "
            "first (POST /v1/traces) or fix the trace_id",
        )
    return item


def _item_json(item_id: str, item: ScenarioItem) -> dict[str, Any]:
    return {"id": item_id, **json.loads(dumps(item))}


@router.post("/traces", status_code=201, dependencies=[Ingest])
async def post_trace(trace: VevalTrace, store: Store) -> dict[str, str]:
    """Store a trace sent in Veval's format (replacing one with the same id)."""
    found = first_too_deep([(step.step_id, step.parent_step_id) for step in trace.steps])
    if found is not None:  # what is stored must read back (as for OTLP traces)
        index, depth = found
        message = (
            f"step {trace.steps[index].step_id!r} is nested {depth} steps deep, more than "
            f"the limit of {MAX_SPAN_DEPTH} levels"
        )
        field = f"steps.{index}.parent_step_id"
        raise InvalidInput(
            f"{field}: {message}", [{"field": field, "message": message, "type": "too_deep"}]
        )
    record = redact_received(from_veval(trace.model_dump()))
    await store.save_trace(record)
    return {"trace_id": record.trace_id}


@router.get("/traces/{trace_id}", dependencies=[Read], responses=_NOT_FOUND)
async def get_trace(trace_id: str, store: Store) -> Any:
    """A stored trace, in Veval's format."""
    record = await store.get_trace(trace_id)
    if record is None:
        return error_response(404, f"no trace {trace_id!r}")
    wire = to_veval(record)
    certificate = trace_certificate(record)  # a replay's: ours, beside Veval's fields
    if certificate is not None:
        wire["certificate"] = certificate.model_dump(mode="json")
    return wire


@router.get("/scenarios/{name:path}/items", dependencies=[Read])
async def list_items(store: Store, name: str = Name) -> dict[str, list[dict[str, Any]]]:
    """The items of a scenario, in order: ``{"items": [{"id", "name", "input", ...}]}``."""
    return {"items": [_item_json(i, item) for i, item in await store.items_with_ids(name)]}


@router.put("/scenarios/{name:path}/items", dependencies=[Ingest])
async def replace_items(body: ItemsBody, store: Store, name: str = Name) -> Any:
    """Replace the whole list of a scenario's items."""
    try:
        items = [await _runnable_item(store, d, ("items", i)) for i, d in enumerate(body.items)]
    except _ItemError as exc:
        return payload_error(exc.fields)
    await store.save_items(name, items)
    return {"items": [_item_json(i, item) for i, item in await store.items_with_ids(name)]}


@router.post("/scenarios/{name:path}/items", status_code=201, dependencies=[Ingest])
async def add_item(store: Store, name: str = Name, *, data: ItemData) -> Any:
    """Append one item (synthetic ``input`` or a ``trace_id``) to a scenario."""
    try:
        item = await _runnable_item(store, data)
    except _ItemError as exc:
        return payload_error(exc.fields)
    return _item_json(await store.add_item(name, item), item)


@router.put("/scenarios/{name:path}/items/{item_id}", dependencies=[Ingest], responses=_NOT_FOUND)
async def replace_item(item_id: str, store: Store, name: str = Name, *, data: ItemData) -> Any:
    """Replace one item, keeping its id and place."""
    try:
        item = await _runnable_item(store, data)
    except _ItemError as exc:
        return payload_error(exc.fields)
    if not await store.replace_item(name, item_id, item):
        return error_response(404, f"scenario {name!r} has no item {item_id!r}")
    return _item_json(item_id, item)


@router.delete(
    "/scenarios/{name:path}/items/{item_id}",
    status_code=204,
    dependencies=[Ingest],
    responses=_NOT_FOUND,
)
async def delete_item(item_id: str, store: Store, name: str = Name) -> Response:
    """Delete one item."""
    if not await store.delete_item(name, item_id):
        return error_response(404, f"scenario {name!r} has no item {item_id!r}")
    return Response(status_code=204)


@router.post("/scenarios/{name:path}/runs", status_code=201, dependencies=[Ingest])
async def post_scenario_run(
    body: ScenarioRunBody, store: Store, name: str = Name
) -> dict[str, str]:
    """Store a scenario run summary (Veval's, or ours with ``items``); same ``run_id``
    again replaces it."""
    record, extra = body.to_record(name)
    await store.save_scenario_run(record, extra=extra)
    return {"run_id": record.run_id}


@router.get("/scenarios/{name:path}/runs", dependencies=[Read])
async def list_scenario_runs(
    store: Store, cursor: Cursor = None, limit: Limit = 100, name: str = Name
) -> Page[ScenarioRunRecord]:
    """A scenario's run summaries, oldest first."""
    return await store.scenario_runs_page(name, cursor=cursor, limit=limit)


@router.post("/snapshots", status_code=201, dependencies=[Ingest], responses=_NOT_FOUND)
async def post_snapshot(request: Request, body: SnapshotBody, store: Store) -> Any:
    """Store a snapshot under ``name`` (a new version when the name exists): ours
    (``snapshot``), or Veval's (``trace_id`` of a stored trace, or ``source_trace_id`` and
    ``steps``). Answers the stored snapshot, in both shapes (see :func:`_snapshot_json`).
    ``ingest`` stores what it sends; the snapshot of a stored trace (``trace_id``) reads
    its steps, so it needs ``read`` too."""
    from scenarist.replay.snapshots import SnapshotData

    where: tuple[str, ...]
    if body.snapshot is not None:
        document, where = body.snapshot, ("snapshot",)
    elif body.trace_id is not None:
        require_scope(
            request,
            "read",
            "a snapshot of a stored trace (trace_id) reads and answers its steps; "
            "send the run's steps instead (source_trace_id and steps) to store them with "
            "ingest alone",
        )
        record = await store.get_trace(body.trace_id)
        if record is None:
            return error_response(404, f"no trace {body.trace_id!r} to take a snapshot of")
        document = json.loads(dumps(SnapshotData.from_record(record, name=body.name)))
        where = ("trace_id",)
    elif body.steps is not None:
        document = {"source_trace_id": body.source_trace_id, "steps": body.steps}
        where = ()
    else:
        return payload_error(
            [
                {
                    "field": "snapshot",
                    "message": "give snapshot, trace_id, or steps",
                    "type": "missing",
                }
            ]
        )
    try:
        snapshot = SnapshotData.model_validate({**document, "name": body.name})
    except ValidationError as exc:
        return payload_error(validation_fields(exc.errors(), where))
    await store.save_snapshot(body.name, snapshot, pinned=body.pinned)
    return _snapshot_json(snapshot)


def _snapshot_json(snapshot: Any) -> dict[str, Any]:
    """A snapshot as stored, plus Veval's names (``source_trace_id``, ``step_order``,
    ``step_count``, each step's ``type``), so both clients read it."""
    data: dict[str, Any] = json.loads(dumps(snapshot))
    data["source_trace_id"] = snapshot.trace_id
    data["step_order"] = snapshot.step_order
    data["step_count"] = snapshot.step_count
    for step, json_step in zip(snapshot.steps, data.get("steps", []), strict=False):
        json_step["type"] = step.kind
    return data


@router.get("/snapshots", dependencies=[Read])
async def list_snapshots(
    store: Store, cursor: Cursor = None, limit: Limit = 50
) -> Page[SnapshotInfo]:
    """Every snapshot's latest version, by name."""
    return await store.list_snapshots(cursor=cursor, limit=limit)


@router.get("/snapshots/{name:path}", dependencies=[Read], responses=_NOT_FOUND)
async def get_snapshot(store: Store, name: str = Name) -> Any:
    """The latest version of a snapshot."""
    snapshot = await store.get_snapshot(name)
    if snapshot is None:
        return error_response(404, f"no snapshot {name!r}")
    return _snapshot_json(snapshot)
