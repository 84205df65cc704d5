"""Our own endpoints (``/api``): run-log ingestion, runs, run comparison, scenario history,
trace search, the trace actions (make an item, save a snapshot), API keys, health. The
JSON twins of the dashboard pages grow from these."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response

from scenarist import _json_limits
from scenarist._version import __version__
from scenarist.errors import RunLogError, UserError
from scenarist.formats.runlog import RunLog, decode_body, decode_bytes
from scenarist.server._deps import Admin, Cursor, Ingest, Limit, Read, Store
from scenarist.server._errors import error_response, payload_error
from scenarist.server._input_limits import CheckedRoute
from scenarist.server.key_policy import KeyRefused, caller_projects, projects_to_grant
from scenarist.server.projects import check_key_project
from scenarist.server.reviews import (
    ResultNotFound,
    ReviewBody,
    review_result,
    review_state,
    reviewer_of,
)
from scenarist.server.schemas import KeyCreateBody
from scenarist.server.trace_actions import (
    TraceItemBody,
    TraceItemCreated,
    TraceNotFound,
    TraceSnapshotBody,
    TraceSnapshotSaved,
    trace_to_item,
    trace_to_snapshot,
)
from scenarist.store.projects import check_project
from scenarist.store.sql.compare import (
    PREVIOUS,
    CompareError,
    StoredComparison,
    compare_stored_runs,
)
from scenarist.store.sql.keys import LastActiveKey
from scenarist.store.sql.live import AppendResult, RunClosed, RunNotFound
from scenarist.store.sql.records import (
    ApiKeyInfo,
    IngestResult,
    Page,
    RunDetail,
    RunSummary,
    ScenarioHistory,
    TraceSummary,
)
from scenarist.store.sql.reviews import ReviewState

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["scenarist"], route_class=CheckedRoute)

_RUN_LOG_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "description": (
                    "A run log: the header, the scenario records and the footer "
                    "(src/scenarist/formats/schemas/runlog.schema.json describes each record)."
                ),
                "required": ["header"],
                "properties": {
                    "header": {"type": "object"},
                    "scenarios": {"type": "array", "items": {"type": "object"}},
                    "footer": {"type": ["object", "null"]},
                },
            }
        },
        "application/x-ndjson": {
            "schema": {"type": "string", "description": "the run log file (JSON Lines)"}
        },
    },
}


def _run_log(raw: bytes, content_type: str) -> RunLog:
    """The run log in a request body (a JSON object, or JSON Lines), through the one codec."""
    source = "request body"
    if "ndjson" in content_type or "jsonl" in content_type:  # lines split at \n alone
        return decode_bytes(raw, source=source, require_run_id=True)
    try:
        data = _json_limits.parse(raw)  # checked record by record as it is decoded
    except _json_limits.JsonLimitError as exc:
        raise RunLogError(
            f"the {source}: {exc.problem}",
            fields=[{"field": "(body)", "message": exc.problem, "type": exc.kind}],
        ) from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise RunLogError(f"the {source} is not valid JSON: {exc}", invalid_json=True) from exc
    return decode_body(data, source=source, require_run_id=True)


@router.post(
    "/runs",
    dependencies=[Ingest],
    openapi_extra={"requestBody": _RUN_LOG_BODY},
    responses={201: {"model": IngestResult, "description": "stored"}},
)
async def post_run(request: Request, response: Response, store: Store) -> Any:
    """Ingest a whole run log in one transaction. The same run id again is stored once
    (200 with ``created: false``); the first upload answers 201."""
    try:
        log = _run_log(await request.body(), request.headers.get("content-type", ""))
    except RunLogError as exc:
        if exc.invalid_json:
            return error_response(400, str(exc), code="invalid_json")
        if exc.fields:
            return payload_error(exc.fields, message=str(exc))
        return error_response(422, str(exc))
    if log.header.project is not None:  # the run's own project: the key must open it
        await check_key_project(request, check_project(log.header.project))
    result = await store.ingest_run_log(log)
    response.status_code = 201 if result.created else 200
    return result


_RECORDS_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "description": (
                    "The next part of a run log whose header was posted (POST /api/runs): "
                    "scenario records, and the footer when the run is over."
                ),
                "properties": {
                    "scenarios": {"type": "array", "items": {"type": "object"}},
                    "footer": {"type": ["object", "null"]},
                },
            }
        }
    },
}


@router.post(
    "/runs/{run_id}/records",
    dependencies=[Ingest],
    openapi_extra={"requestBody": _RECORDS_BODY},
    responses={
        200: {"model": AppendResult, "description": "stored"},
        404: {"description": "no such run (post its header first)"},
        409: {"description": "the run is complete"},
    },
)
async def post_run_records(run_id: str, request: Request, store: Store) -> Any:
    """Add scenario records (and the footer, which completes it) to a run that is still
    running: the header first (``POST /api/runs`` without a footer), then parts as they
    come. Until the footer the run shows as running, with what has arrived."""
    try:
        data = _json_limits.parse(await request.body())
    except _json_limits.JsonLimitError as exc:
        return payload_error(
            [{"field": "(body)", "message": exc.problem, "type": exc.kind}], message=exc.problem
        )
    except (ValueError, UnicodeDecodeError) as exc:
        message = f"the request body is not valid JSON: {exc}"
        return error_response(400, message, code="invalid_json")
    if not isinstance(data, dict) or set(data) - {"scenarios", "footer"}:
        return error_response(
            422, "the body is an object with 'scenarios' (a list of records) and 'footer'"
        )
    try:
        header = await store.run_header(run_id)
        log = decode_body({**data, "header": header}, source="request body")
        result = await store.append_run_records(log)
    except RunNotFound as exc:
        return error_response(404, str(exc))
    except RunClosed as exc:
        return error_response(409, str(exc), code="run_complete")
    except RunLogError as exc:
        if exc.fields:
            return payload_error(exc.fields, message=str(exc))
        return error_response(422, str(exc))
    except UserError as exc:
        return error_response(422, str(exc))
    return result


@router.get("/runs", dependencies=[Read])
async def list_runs(
    store: Store,
    cursor: Cursor = None,
    limit: Limit = 50,
    kind: Literal["suite", "scenario"] | None = None,
    name: str | None = None,
) -> Page[RunSummary]:
    """Runs, newest first, one page at a time."""
    return await store.list_runs(cursor=cursor, limit=limit, kind=kind, name=name)


@router.get("/runs/{run_id}", dependencies=[Read], responses={404: {"description": "not found"}})
async def get_run(run_id: str, store: Store) -> Any:
    """One run with its scenario results and check verdicts."""
    run: RunDetail | None = await store.get_run(run_id)
    if run is None:
        return error_response(404, f"no run {run_id!r}")
    return run


@router.get(
    "/runs/{run_id}/log",
    dependencies=[Read],
    response_class=Response,
    responses={
        200: {"content": {"application/x-ndjson": {}}, "description": "the run log"},
        404: {"description": "not found, or not a suite run"},
    },
)
async def get_run_log(run_id: str, store: Store) -> Any:
    """The run log of a suite run (JSON Lines, as ``scenarist run`` writes it and ``POST
    /api/runs`` takes it), rebuilt from the stored records: ``scenarist report RUN_ID``
    reads it when the file is not on the machine."""
    from scenarist.errors import UserError

    try:
        text = await store.run_log_text(run_id)
    except UserError as exc:
        return error_response(404, str(exc))
    if text is None:
        return error_response(404, f"no run {run_id!r}")
    return Response(text.encode("utf-8", "surrogatepass"), media_type="application/x-ndjson")


@router.get(
    "/runs/{run_id}/compare",
    dependencies=[Read],
    response_model=StoredComparison,
    responses={
        404: {"description": "a run not found in this project, or no previous run"},
        422: {"description": "the baseline is the run itself"},
    },
)
async def compare_run(
    run_id: str,
    store: Store,
    baseline: str = Query(
        PREVIOUS,
        min_length=1,
        max_length=1000,
        description=(
            "the baseline run id, or 'previous': the previous run of the same suite on "
            "the same git branch, else at its merge base, else on main/master "
            "(baseline_choice says which and why)"
        ),
    ),
    alpha: float = Query(
        0.05,
        gt=0,
        lt=1,
        description="the significance level of a regression (one-sided Fisher exact test)",
    ),
) -> Any:
    """What changed from ``baseline`` to this run: fixed, broken, still failing, new,
    removed, skipped and flaky changes, both pass rates, and the scenarios whose pass
    rate dropped significantly (``regressed``) or not (``changed_not_significant``);
    ``baseline_choice`` (the rule and why), each changed scenario's last output, failing
    checks and cost/duration/token deltas (``scenarios``), the unchanged ones' deltas and
    the runs' total deltas."""
    try:
        return await compare_stored_runs(store, run_id, baseline, alpha=alpha)
    except CompareError as exc:
        return error_response(404, str(exc))


@router.get(
    "/runs/{run_id}/scenarios/{position}/reviews",
    dependencies=[Read],
    response_model=ReviewState,
    responses={404: {"description": "no such scenario result"}},
)
async def get_review(run_id: str, position: int, store: Store) -> Any:
    """A scenario result's review: the reviewed verdict, the override, the expected-failure
    mark in force, the comments, and every change (who, when)."""
    try:
        return await review_state(store, run_id, position)
    except ResultNotFound as exc:
        return error_response(404, str(exc))


@router.post(
    "/runs/{run_id}/scenarios/{position}/reviews",
    status_code=201,
    dependencies=[Ingest],
    response_model=ReviewState,
    responses={404: {"description": "no such scenario result"}},
)
async def post_review(
    request: Request, run_id: str, position: int, body: ReviewBody, store: Store
) -> Any:
    """Review a scenario result: ``expect`` (an expected failure until ``expires_at``),
    ``unexpect``, ``comment``, ``override`` (``verdict`` and ``reason``),
    ``clear_override``. Appended to its history with the caller's key id; answers the
    review."""
    try:
        return await review_result(store, run_id, position, body, reviewer_of(request))
    except ResultNotFound as exc:
        return error_response(404, str(exc))
    except UserError as exc:
        return error_response(422, str(exc))


@router.get(
    "/scenarios/{name:path}/history",
    dependencies=[Read],
    response_model=ScenarioHistory,
    responses={409: {"description": "several suites hold the name: add ?suite="}},
)
async def scenario_history(
    store: Store,
    cursor: Cursor = None,
    limit: Limit = 100,
    name: str = Path(min_length=1, max_length=1000),
    suite: str | None = Query(
        default=None,
        max_length=1000,
        description="the suite whose scenario this is (empty: Veval-style runs); "
        "needed when several suites hold a scenario of this name",
    ),
) -> Any:
    """A scenario's status across runs, newest first, with its pass rate. A scenario is
    known by its suite and name: when several suites hold ``name`` and no ``suite`` is
    given, the answer is a 409 naming them."""
    suites = await store.scenario_suites(name)
    if suite is None and len(suites) > 1:
        listed = ", ".join(repr(s) for s in suites)
        return error_response(
            409,
            f"scenario {name!r} is in {len(suites)} suites ({listed}); add ?suite= naming "
            "one (empty for Veval-style runs)",
            code="ambiguous_scenario",
            suites=suites,
        )
    if suite is None:
        suite = suites[0] if suites else ""
    return await store.scenario_history(name, suite=suite, cursor=cursor, limit=limit)


@router.get("/traces", dependencies=[Read])
async def search_traces(
    store: Store,
    agent_name: str | None = None,
    status: str | None = None,
    since: Annotated[datetime | None, Query(description="started at or after")] = None,
    until: Annotated[datetime | None, Query(description="started before")] = None,
    min_cost: Annotated[float | None, Query(ge=0, description="cost_usd at least")] = None,
    max_cost: Annotated[float | None, Query(ge=0, description="cost_usd at most")] = None,
    replay: Annotated[bool | None, Query(description="only replays (true) or none")] = None,
    q: Annotated[
        str | None, Query(max_length=500, description="text in the trace, any case")
    ] = None,
    previews: Annotated[bool, Query(description="add input/output previews")] = False,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> Page[TraceSummary]:
    """Traces, newest first, filtered by agent, status, start, cost, replay and text."""
    return await store.search_traces(
        agent_name=agent_name,
        status=status,
        since=since,
        until=until,
        min_cost=min_cost,
        max_cost=max_cost,
        replay=replay,
        text=q,
        previews=previews,
        cursor=cursor,
        limit=limit,
    )


@router.post(
    "/traces/{trace_id}/item",
    status_code=201,
    dependencies=[Ingest],
    response_model=TraceItemCreated,
    responses={404: {"description": "no such trace"}},
)
async def trace_item(trace_id: str, body: TraceItemBody, store: Store) -> Any:
    """Make the trace a trace-backed item of ``scenario_name`` (appended to its items)."""
    try:
        return await trace_to_item(store, trace_id, body.scenario_name, body.name)
    except TraceNotFound as exc:
        return error_response(404, str(exc))


@router.post(
    "/traces/{trace_id}/snapshot",
    status_code=201,
    dependencies=[Ingest],
    response_model=TraceSnapshotSaved,
    responses={404: {"description": "no such trace"}},
)
async def trace_snapshot(trace_id: str, body: TraceSnapshotBody, store: Store) -> Any:
    """Save the trace's steps as the snapshot ``name`` (a new version when it exists)."""
    try:
        return await trace_to_snapshot(store, trace_id, body.name)
    except TraceNotFound as exc:
        return error_response(404, str(exc))


@router.get("/keys", dependencies=[Admin])
async def list_keys(request: Request, store: Store) -> list[ApiKeyInfo]:
    """The API keys the caller may manage (never the keys themselves): every key for a
    global admin key, those within its projects for a project-limited one."""
    return await store.list_api_keys(within=await caller_projects(request))


@router.post("/keys", status_code=201, dependencies=[Admin])
async def create_key(request: Request, body: KeyCreateBody, store: Store) -> Any:
    """Create a key; the answer holds it once (``key``), only its hash is kept. A key
    limited to projects creates keys within them only (by default, its own projects)."""
    try:
        projects = projects_to_grant(await caller_projects(request), body.projects)
    except KeyRefused as exc:
        return error_response(403, str(exc))
    info, key = await store.create_api_key(body.scopes, body.name, projects=projects)
    return {**info.model_dump(mode="json"), "key": key}


@router.delete("/keys/{key_id}", status_code=204, dependencies=[Admin])
async def revoke_key(request: Request, key_id: str, store: Store) -> Response:
    """Revoke a key (a project-limited admin: a key within its projects; any other
    answers 404, as an unknown key does; the server's last active key, 409)."""
    try:
        revoked = await store.revoke_api_key(key_id, within=await caller_projects(request))
    except LastActiveKey as exc:
        return error_response(409, str(exc), code="last_active_key")
    if not revoked:
        return error_response(404, f"no active key {key_id!r}")
    return Response(status_code=204)


@router.get("/health")
async def health(store: Store) -> dict[str, Any]:
    """Liveness and the database in use (no key needed)."""
    return {"status": "ok", "version": __version__, "database": store.dialect}
