"""The dashboard's routes: each builds its page model (``pages.py``) and renders it as
HTML or as its JSON twin (``_render.py``). No SQL here, and no page logic either.

=====================================  ===========================================
``/`` (``/index.json``)                overview: runs (``?suite=&branch=&since=&until=``),
                                       charts, broken and flaky
``/suites/{name}``                     one suite's runs and its trend
``/runs/{run_id}``                     one run (``?status=``, ``?tag=``, ``?q=`` filters,
                                       ``?sort=``, ``?group=``)
``/runs/{run_id}/scenarios/{n}``       one scenario of a run: checks and its trace (+ form:
                                       ``…/review`` reviews it)
``/runs/{run_id}/compare``             the run against ``?baseline=`` (default: the
                                       baseline rule, ``store/sql/compare.py``)
``/compare``                            any two runs (``?run=&baseline=``, the pickers)
``/traces/{trace_id}``                 a stored agent run (``?run=``: the item verdict of
                                       that run), waterfall, chat, span tree (+ forms:
                                       ``…/item`` makes an item, ``…/snapshot`` saves one)
``/scenarios/{name}``                  one scenario's history (``?suite=``: whose)
``/broken``, ``/flaky``                every scenario that broke recently, every flaky one
``/items/{name}``                      a Veval-style scenario's items (+ forms)
``/static/…``                          CSS, our script, vendored htmx and Chart.js
=====================================  ===========================================

Each page's JSON twin: ``.json`` after the last path segment, ``?format=json``, or an
``Accept`` header without ``text/html``. Pages need the ``read`` scope, the item and
trace forms ``ingest``, through the API's own auth dependency (open on loopback with no key).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Annotated
from urllib.parse import parse_qs

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError

from scenarist.errors import UserError
from scenarist.model.items import NO_INPUT_MESSAGE, ScenarioItem
from scenarist.server._deps import Cursor, Ingest, Read, Store
from scenarist.server._input_limits import CheckedRoute
from scenarist.server.auth import has_scope
from scenarist.server.dashboard import api_docs, pages, projects_page, trace_list
from scenarist.server.dashboard._csrf import (
    FIELD,
    CsrfError,
    csrf_token,
    set_cookie,
    verify_csrf,
)
from scenarist.server.dashboard._render import not_found, page_format, render, url_part
from scenarist.server.dashboard.login import install_sessions
from scenarist.server.reviews import ResultNotFound, ReviewBody, review_result, reviewer_of
from scenarist.server.trace_actions import TraceNotFound, trace_to_item, trace_to_snapshot
from scenarist.store.sql.compare import PREVIOUS, CompareError

__all__ = ["install_dashboard", "router"]

router = APIRouter(include_in_schema=False, route_class=CheckedRoute)
STATIC = Path(__file__).resolve().parent.parent / "static"
PageSize = Annotated[int, Query(ge=1, le=200, description="page size")]


def install_dashboard(app: FastAPI) -> None:
    """Add the dashboard's pages and static files to ``app``."""
    app.include_router(trace_list.router)  # /traces, before /traces/{trace_id}
    app.include_router(projects_page.router)  # /projects
    app.include_router(router)
    app.include_router(api_docs.router)  # /docs, /redoc
    install_sessions(app)  # /login, /logout, /settings (login.py, settings.py)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")


def _choice(value: str | None, allowed: tuple[str, ...] | None = None) -> str | None:
    if not value or (allowed is not None and value not in allowed):
        return None
    return value


def _one_of(value: str | None, field: str, allowed: tuple[str, ...]) -> str:
    """A query parameter that must be one of ``allowed`` (the first when absent)."""
    if not value:
        return allowed[0]
    if value not in allowed:
        raise UserError(f"{field}={value!r} is not one of {', '.join(allowed)}")
    return value


def _day(value: str | None, field: str, *, end: bool = False) -> datetime | None:
    """A ``YYYY-MM-DD`` filter as a UTC bound (``end``: the day after, exclusive)."""
    if not value:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise UserError(f"{field}={value!r} is not a date: use YYYY-MM-DD") from None
    return datetime.combine(day + timedelta(days=1 if end else 0), time(), UTC)


@router.get("/", dependencies=[Read])
@router.get("/index.json", dependencies=[Read])
async def overview(
    request: Request,
    store: Store,
    cursor: Cursor = None,
    limit: PageSize = 30,
    suite: str | None = None,
    branch: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> Response:
    wants_json = page_format(request)[1] or request.url.path.endswith(".json")
    filters = pages.RunFilters(
        suite=_choice(suite),
        branch=_choice(branch),
        since=_day(since, "since"),
        until=_day(until, "until", end=True),
    )
    page = await pages.overview_page(store, cursor=cursor, limit=limit, filters=filters)
    if not page.runs and cursor is None and not filters.active:  # say where the runs are
        page.elsewhere = await projects_page.elsewhere(store)
    return render("overview.html", page, wants_json=wants_json)


@router.get("/suites/{name:path}", dependencies=[Read])
async def suite(
    request: Request, name: str, store: Store, cursor: Cursor = None, limit: PageSize = 50
) -> Response:
    name, wants_json = page_format(request, name)
    page = await pages.suite_page(store, name, cursor=cursor, limit=limit)
    return render("suite.html", page, wants_json=wants_json)


@router.get("/runs/{run_id}", dependencies=[Read])
async def run(
    request: Request,
    run_id: str,
    store: Store,
    status: str | None = None,
    tag: str | None = None,
    q: str | None = None,
    sort: str | None = None,
    group: str | None = None,
) -> Response:
    run_id, wants_json = page_format(request, run_id)
    page = await pages.run_page(
        store,
        run_id,
        status=_choice(status, pages.STATUSES),
        tag=_choice(tag),
        search=_choice(q.strip() if q else None),
        sort=_one_of(sort, "sort", pages.SORTS),
        group=_one_of(group, "group", pages.GROUPINGS),
    )
    if page is None:
        return not_found(f"no run {run_id!r}", wants_json=wants_json)
    response = render("run.html", page, wants_json=wants_json)
    if request.headers.get("hx-target") == "live-poll" and page.state != "running":
        response.headers["HX-Refresh"] = "true"  # over: the whole page once, then no polling
    return response


@router.get("/runs/{run_id}/scenarios/{position}", dependencies=[Read])
async def scenario_in_run(request: Request, run_id: str, position: str, store: Store) -> Response:
    position, wants_json = page_format(request, position)
    return await _scenario_response(request, store, run_id, position, wants_json=wants_json)


async def _scenario_response(
    request: Request,
    store: Store,
    run_id: str,
    position: str,
    *,
    wants_json: bool,
    error: str | None = None,
) -> Response:
    """The scenario page with its review form (and its CSRF token)."""
    page = None
    if position.isdigit():
        page = await pages.scenario_trace_page(store, run_id, int(position))
    if page is None:
        return not_found(f"run {run_id!r} has no scenario {position!r}", wants_json=wants_json)
    new_cookies: list[str] = []
    response = render(
        "scenario_trace.html",
        page,
        wants_json=wants_json,
        status_code=422 if error else 200,
        csrf_token=csrf_token(request, new_cookies),
        review_error=error,
    )
    for value in new_cookies:
        set_cookie(request, response, value)
    return response


@router.post("/runs/{run_id}/scenarios/{position}/review", dependencies=[Ingest])
@router.post("/runs/{run_id}/scenarios/{position}/review.json", dependencies=[Ingest])
async def review(request: Request, run_id: str, position: str, store: Store) -> Response:
    """The scenario page's review form (``action``: expect with ``expires_at``, unexpect,
    comment, override with ``verdict``, clear_override; ``reason``): appends the change,
    then redirects (303) back to the scenario page. Its JSON twin (``…/review.json``)
    answers 201 with the review (``GET /api/runs/{id}/scenarios/{n}/reviews``'s shape)."""
    wants_json = _post_wants_json(request)
    form = _form(await request.body())
    try:
        verify_csrf(request, form.get(FIELD))
    except CsrfError as exc:
        return _csrf_failed(exc)
    if not position.isdigit():
        return not_found(f"run {run_id!r} has no scenario {position!r}", wants_json=wants_json)
    try:
        body = ReviewBody.model_validate({k: v for k, v in form.items() if k != FIELD and v != ""})
        state = await review_result(store, run_id, int(position), body, reviewer_of(request))
    except ResultNotFound as exc:
        return not_found(str(exc), wants_json=wants_json)
    except (UserError, ValidationError) as exc:
        message = str(exc) if isinstance(exc, UserError) else _validation_message(exc)
        refused = _form_error(request, message)
        if wants_json or refused is not None:
            return refused or JSONResponse(
                {"error": {"code": "invalid_form", "message": message}}, 422
            )
        return await _scenario_response(
            request, store, run_id, position, wants_json=False, error=message
        )
    if wants_json:
        return JSONResponse(state.model_dump(mode="json"), 201)
    return RedirectResponse(
        f"/runs/{url_part(run_id)}/scenarios/{position}#review", status_code=303
    )


def _validation_message(exc: ValidationError) -> str:
    """A form's validation errors in one line, each naming its field."""
    return "; ".join(
        f"{'.'.join(str(p) for p in error['loc']) or 'form'}: {error['msg']}"
        for error in exc.errors()
    )


@router.get("/traces/{trace_id}", dependencies=[Read])
async def trace(request: Request, trace_id: str, store: Store) -> Response:
    trace_id, wants_json = page_format(request, trace_id)
    return await _trace_response(request, store, trace_id, wants_json=wants_json)


async def _trace_response(
    request: Request, store: Store, trace_id: str, *, wants_json: bool, error: str | None = None
) -> Response:
    """The trace page with its two action forms (and their CSRF token)."""
    page = await pages.trace_page(store, trace_id, run_id=_choice(request.query_params.get("run")))
    if page is None:
        return not_found(f"no trace {trace_id!r}", wants_json=wants_json)
    saved = request.query_params.get("snapshot_saved")
    if saved:  # shown only when that snapshot really is of this trace
        snapshot = await store.get_snapshot(saved)
        saved = saved if snapshot is not None and snapshot.trace_id == trace_id else None
    new_cookies: list[str] = []
    response = render(
        "trace.html",
        page,
        wants_json=wants_json,
        status_code=422 if error else 200,
        csrf_token=csrf_token(request, new_cookies),
        action_error=error,
        snapshot_saved=saved or None,
    )
    for value in new_cookies:
        set_cookie(request, response, value)
    return response


@router.get("/scenarios/{name:path}", dependencies=[Read])
async def history(
    request: Request, name: str, store: Store, cursor: Cursor = None, limit: PageSize = 50
) -> Response:
    name, wants_json = page_format(request, name)
    # ``?suite=`` present but empty names the Veval-style runs' (and unnamed suites') own
    suite = request.query_params.get("suite")
    page = await pages.history_page(store, name, suite=suite, cursor=cursor, limit=limit)
    return render("history.html", page, wants_json=wants_json)


@router.get("/broken", dependencies=[Read])
@router.get("/broken.json", dependencies=[Read])
async def broken(request: Request, store: Store) -> Response:
    """Every scenario that broke within the newest 50 runs (the overview shows 10)."""
    wants_json = page_format(request)[1] or request.url.path.endswith(".json")
    page = await pages.recent_page(store, "broken")
    return render("recent.html", page, wants_json=wants_json)


@router.get("/flaky", dependencies=[Read])
@router.get("/flaky.json", dependencies=[Read])
async def flaky(request: Request, store: Store) -> Response:
    """Every flaky scenario within the newest 50 runs (the overview shows 10)."""
    wants_json = page_format(request)[1] or request.url.path.endswith(".json")
    page = await pages.recent_page(store, "flaky")
    return render("recent.html", page, wants_json=wants_json)


async def _items_response(
    request: Request, store: Store, name: str, *, wants_json: bool, error: str | None = None
) -> Response:
    page = await pages.items_page(store, name, error=error)
    new_cookies: list[str] = []
    token = csrf_token(request, new_cookies)
    response = render(
        "items.html",
        page,
        wants_json=wants_json,
        status_code=422 if error else 200,
        csrf_token=token,
    )
    for value in new_cookies:
        set_cookie(request, response, value)
    return response


@router.get("/items/{name:path}", dependencies=[Read])
async def items(request: Request, name: str, store: Store) -> Response:
    name, wants_json = page_format(request, name)
    return await _items_response(request, store, name, wants_json=wants_json)


def _form(body: bytes) -> dict[str, str]:
    fields = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
    return {key: values[-1] for key, values in fields.items()}


@router.post("/items/{name:path}", dependencies=[Ingest])
async def change_items(request: Request, name: str, store: Store) -> Response:
    """The item forms: ``action=create`` (name, input or trace id, tags) or
    ``action=delete`` (item_id). Success redirects back to the page (303)."""
    form = _form(await request.body())
    try:
        verify_csrf(request, form.get(FIELD))
    except CsrfError as exc:
        body = {"error": {"code": "csrf_failed", "message": str(exc)}}
        return JSONResponse(body, status_code=403)
    error: str | None = None
    action = form.get("action")
    try:
        if action == "create":
            input_text = form.get("input") or None
            trace_id = form.get("trace_id", "").strip() or None
            if input_text is None and trace_id is None:
                raise UserError(NO_INPUT_MESSAGE)
            tags = [t.strip() for t in form.get("tags", "").split(",") if t.strip()]
            item = ScenarioItem(
                name=form.get("name", "").strip() or None,
                input=input_text,
                trace_id=trace_id,
                tags=tags,
            )
            if trace_id is not None and await store.get_trace(trace_id) is None:
                # as the API (POST /v1/scenarios/{name}/items): a trace of this project
                raise UserError(
                    f"trace {trace_id!r} is not stored on this server; post the trace "
                    "first (POST /v1/traces) or fix the trace id"
                )
            await store.add_item(name, item)
        elif action == "delete":
            if not await store.delete_item(name, form.get("item_id", "")):
                error = f"scenario {name!r} has no item {form.get('item_id', '')!r}"
        else:
            error = f"unknown action {action!r}: use 'create' or 'delete'"
    except UserError as exc:
        error = str(exc)
    if error is not None:
        refused = _form_error(request, error)
        if refused is not None:
            return refused
        return await _items_response(request, store, name, wants_json=False, error=error)
    return RedirectResponse(f"/items/{url_part(name)}", status_code=303)


def _csrf_failed(exc: CsrfError) -> Response:
    body = {"error": {"code": "csrf_failed", "message": str(exc)}}
    return JSONResponse(body, status_code=403)


def _form_error(request: Request, message: str) -> Response | None:
    """A form's error for a caller without ``read`` (an ``ingest`` key): the error alone,
    as JSON (422), never the page, which shows what only ``read`` may see (a trace's
    steps, a scenario's items). ``None`` when the caller may see the page."""
    if has_scope(request, "read"):
        return None
    return JSONResponse({"error": {"code": "invalid_form", "message": message}}, 422)


def _post_wants_json(request: Request) -> bool:
    """A form's JSON twin: ``….json``, ``?format=json`` or ``Accept: application/json``
    (a plain form post, ``Accept: */*`` included, keeps its redirect)."""
    chosen = request.query_params.get("format")
    if chosen in ("json", "html"):
        return chosen == "json"
    accept = request.headers.get("accept", "")
    return request.url.path.endswith(".json") or (
        "application/json" in accept and "text/html" not in accept
    )


@router.post("/traces/{trace_id}/item", dependencies=[Ingest])
@router.post("/traces/{trace_id}/item.json", dependencies=[Ingest])
async def trace_item(request: Request, trace_id: str, store: Store) -> Response:
    """The trace page's "make this a trace-backed item" form (``scenario_name``,
    ``name``): appends the item, then redirects (303) to that scenario's items page. Its
    JSON twin (``…/item.json``) answers 201 with the item and, when the trace cannot be
    replayed (an OpenTelemetry trace without its LLM calls' content, no steps), why:
    ``replay_problem``; its errors are JSON too."""
    wants_json = _post_wants_json(request)
    form = _form(await request.body())
    try:
        verify_csrf(request, form.get(FIELD))
    except CsrfError as exc:
        return _csrf_failed(exc)
    try:
        created = await trace_to_item(
            store, trace_id, form.get("scenario_name", ""), form.get("name")
        )
    except TraceNotFound as exc:
        return not_found(str(exc), wants_json=wants_json)
    except UserError as exc:
        refused = _form_error(request, str(exc))
        if wants_json or refused is not None:
            return refused or JSONResponse(
                {"error": {"code": "invalid_form", "message": str(exc)}}, 422
            )
        return await _trace_response(request, store, trace_id, wants_json=False, error=str(exc))
    items_url = f"/items/{url_part(created.scenario_name)}"
    if wants_json:
        return JSONResponse({**created.model_dump(mode="json"), "items_url": items_url}, 201)
    return RedirectResponse(items_url, status_code=303)


@router.post("/traces/{trace_id}/snapshot", dependencies=[Ingest])
async def trace_snapshot(request: Request, trace_id: str, store: Store) -> Response:
    """The trace page's "save as snapshot" form (``name``): saves it, then redirects
    (303) back to the trace page, which says it was saved."""
    form = _form(await request.body())
    try:
        verify_csrf(request, form.get(FIELD))
    except CsrfError as exc:
        return _csrf_failed(exc)
    try:
        saved = await trace_to_snapshot(store, trace_id, form.get("name", ""))
    except TraceNotFound as exc:
        return not_found(str(exc), wants_json=False)
    except UserError as exc:
        refused = _form_error(request, str(exc))
        if refused is not None:
            return refused
        return await _trace_response(request, store, trace_id, wants_json=False, error=str(exc))
    return RedirectResponse(
        f"/traces/{url_part(trace_id)}?snapshot_saved={url_part(saved.name)}", status_code=303
    )


@router.get("/runs/{run_id}/compare", dependencies=[Read])
@router.get("/runs/{run_id}/compare.json", dependencies=[Read])
async def compare(
    request: Request,
    run_id: str,
    store: Store,
    baseline: str = PREVIOUS,
    alpha: float = Query(0.05, gt=0, lt=1),
) -> Response:
    """The run against ``baseline`` (a run id, default per the baseline rule); ``alpha``:
    the level of a significant regression."""
    wants_json = page_format(request)[1] or request.url.path.endswith(".json")
    return await _compare(run_id, baseline or PREVIOUS, alpha, store, wants_json=wants_json)


@router.get("/compare", dependencies=[Read])
@router.get("/compare.json", dependencies=[Read])
async def compare_any(
    request: Request,
    store: Store,
    run: str = "",
    baseline: str = PREVIOUS,
    baseline_id: str = "",
    alpha: float = Query(0.05, gt=0, lt=1),
) -> Response:
    """Any two runs (the compare page's pickers): ``run`` against ``baseline_id`` if
    typed, else ``baseline`` (a run id or ``previous``)."""
    wants_json = page_format(request)[1] or request.url.path.endswith(".json")
    if not run.strip():
        raise UserError("run is required: /compare?run=RUN_ID&baseline=RUN_ID")
    chosen = baseline_id.strip() or baseline or PREVIOUS
    return await _compare(run.strip(), chosen, alpha, store, wants_json=wants_json)


async def _compare(
    run_id: str, baseline: str, alpha: float, store: Store, *, wants_json: bool
) -> Response:
    try:
        page = await pages.compare_page(store, run_id, baseline, alpha)
    except CompareError as exc:
        return not_found(str(exc), wants_json=wants_json)
    return render("compare.html", page, wants_json=wants_json)
