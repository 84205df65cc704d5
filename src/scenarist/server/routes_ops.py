"""Operations endpoints: pins and pruning (``/api``) and the server-side judge
(``/v1/judge``). Kept apart from the data endpoints they protect or use."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request

from scenarist.server._deps import Admin, Ingest, Store
from scenarist.server._errors import error_response
from scenarist.server._input_limits import CheckedRoute
from scenarist.server.auth import require_scope
from scenarist.server.judging import (
    JudgeBody,
    JudgeNotConfigured,
    JudgeVerdict,
    judge_trace,
    server_judge,
)
from scenarist.store.sql.retention import PruneResult, retention_days_from_env

__all__ = ["router"]

router = APIRouter(tags=["operations"], route_class=CheckedRoute)
_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "not found"}}


async def _pin(store: Store, what: Literal["run", "trace"], object_id: str, pinned: bool) -> Any:
    if not await store.set_pinned(what, object_id, pinned):
        return error_response(404, f"no {what} {object_id!r}")
    return {f"{what}_id": object_id, "pinned": pinned}


@router.post("/api/traces/{trace_id}/pin", dependencies=[Ingest], responses=_NOT_FOUND)
async def pin_trace(trace_id: str, store: Store) -> Any:
    """Keep this trace whatever the retention policy (pinning twice is harmless)."""
    return await _pin(store, "trace", trace_id, True)


@router.delete("/api/traces/{trace_id}/pin", dependencies=[Ingest], responses=_NOT_FOUND)
async def unpin_trace(trace_id: str, store: Store) -> Any:
    """Let retention delete this trace again once it is old enough."""
    return await _pin(store, "trace", trace_id, False)


@router.post("/api/runs/{run_id}/pin", dependencies=[Ingest], responses=_NOT_FOUND)
async def pin_run(run_id: str, store: Store) -> Any:
    """Keep this run whatever the retention policy."""
    return await _pin(store, "run", run_id, True)


@router.delete("/api/runs/{run_id}/pin", dependencies=[Ingest], responses=_NOT_FOUND)
async def unpin_run(run_id: str, store: Store) -> Any:
    """Let retention delete this run again once it is old enough."""
    return await _pin(store, "run", run_id, False)


@router.post("/api/retention/prune", dependencies=[Admin])
async def prune(store: Store) -> PruneResult:
    """Apply the retention policy (``SCENARIST_RETENTION_DAYS``) to the request's project
    now (the server's start prunes every project)."""
    return await store.prune_older_than_days(retention_days_from_env())


@router.post(
    "/v1/judge",
    dependencies=[Ingest],
    responses={
        200: {"model": JudgeVerdict},
        404: {"description": "unknown trace_id"},
        503: {"description": "no judge model is configured on the server"},
    },
)
async def judge(body: JudgeBody, request: Request, store: Store) -> Any:
    """Judge a trace against criteria with the server's judge model (Veval's
    ``client.judge``): ``{passed, score, reasoning, status, judge}``. A stored trace
    (``trace_id``) is read to be judged, and the reasoning tells of it: that needs
    ``read``; a trace sent inline (``trace``, or Veval's ``input`` and ``output``), ``ingest``
    alone."""
    if body.trace_id is not None:
        require_scope(
            request, "read", "judging a stored trace (trace_id) reads its steps; send the "
            "trace itself (trace) to judge it with ingest alone",
        )  # fmt: skip
    try:
        provider = server_judge(getattr(request.app.state, "judge", None))
    except JudgeNotConfigured as exc:
        return error_response(503, str(exc), code="judge_not_configured")
    from scenarist.model.veval_wire import from_veval

    if body.trace is not None:
        record = from_veval(body.trace.model_dump())
    elif body.is_pair:  # the Veval SDK: its run's last step, judged as a one-turn run
        record = from_veval(
            {"trace_id": "judged", "status": "success", "input": body.input, "output": body.output}
        )
    else:
        found = await store.get_trace(body.trace_id or "")
        if found is None:
            return error_response(404, f"no trace {body.trace_id!r}")
        record = found
    return await judge_trace(body, record, provider)
