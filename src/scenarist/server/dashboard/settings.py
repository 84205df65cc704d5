"""``/settings`` (``admin`` scope, by key or session): the API keys.

``GET /settings`` lists the keys the caller may manage (id, name, scopes, projects,
created, revoked; last use is not recorded): every key for a global admin key, the keys
within its projects for a project-limited one (:mod:`scenarist.server.key_policy`, the
rule ``/api/keys`` follows too). Its JSON twin (``/settings.json``, ``?format=json`` or a
non-HTML ``Accept``) is the same list. ``POST /settings`` (CSRF-checked form):
``action=create`` (``name``, one ``scope`` field per scope, ``project``: projects,
comma-separated or one field each; none: every project for a global admin, its own for
a limited one) answers 201 with the page showing the new key once (sent
``Cache-Control: no-store``; it is never shown again, only its hash is stored), 403 for
projects the caller may not grant; ``action=revoke`` (``key_id``) redirects back (303),
or answers 404 for a key that is unknown, revoked, or not the caller's to revoke, and
409 when a project-limited admin would revoke the server's last active key. A
revoked key's sessions end at once.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel

from scenarist.errors import UserError
from scenarist.server._deps import Admin, Store
from scenarist.server._input_limits import CheckedRoute
from scenarist.server.dashboard._csrf import FIELD, CsrfError, verify_csrf
from scenarist.server.dashboard._render import page_format, render
from scenarist.server.dashboard.login import csrf_failed, parse_form, render_form
from scenarist.server.key_policy import KeyRefused, caller_projects, projects_to_grant
from scenarist.store.sql.keys import SCOPES, LastActiveKey
from scenarist.store.sql.records import ApiKeyInfo

__all__ = ["CreatedKey", "SettingsPage", "router"]

router = APIRouter(include_in_schema=False, route_class=CheckedRoute)


class CreatedKey(BaseModel):
    """A key just created: the only time ``key`` is ever shown."""

    key_id: str
    name: str | None
    scopes: list[str]
    key: str
    projects: list[str] | None = None


class SettingsPage(BaseModel):
    keys: list[ApiKeyInfo]
    scopes: list[str]
    grantable_projects: list[str] | None = None
    """The projects the caller may grant; ``None``: any (a global admin key)."""
    signed_in_as: str | None = None
    open_mode: bool = False
    created: CreatedKey | None = None
    error: str | None = None


async def _page(request: Request, store: Store, **extra: object) -> SettingsPage:
    own = await caller_projects(request)
    keys = await store.list_api_keys(within=own)
    open_mode = request.app.state.open_mode_allowed and not await store.has_active_keys()
    return SettingsPage.model_validate(
        {
            "keys": keys,
            "scopes": list(SCOPES),
            "grantable_projects": own,
            "signed_in_as": getattr(request.state, "session_key_id", None),
            "open_mode": open_mode,
            **extra,
        }
    )


def _projects_field(values: list[str]) -> list[str] | None:
    """The form's ``project`` fields (each may list several, comma-separated); ``None``
    when none is filled in."""
    named = [p.strip() for value in values for p in value.split(",") if p.strip()]
    return named or None


@router.get("/settings", dependencies=[Admin])
@router.get("/settings.json", dependencies=[Admin])
async def settings(request: Request, store: Store) -> Response:
    wants_json = page_format(request)[1] or request.url.path.endswith(".json")
    page = await _page(request, store)
    if wants_json:
        return render("settings.html", page, wants_json=True)
    return render_form(request, "settings.html", page)


@router.post("/settings", dependencies=[Admin])
async def change_settings(request: Request, store: Store) -> Response:
    form = parse_form(await request.body())
    try:
        verify_csrf(request, (form.get(FIELD) or [""])[-1])
    except CsrfError as exc:
        return csrf_failed(exc)
    action = (form.get("action") or [""])[-1]
    error: str | None = None
    status_code = 422
    try:
        if action == "create":
            name = (form.get("name") or [""])[-1].strip() or None
            asked = _projects_field(form.get("project", []))
            projects = projects_to_grant(await caller_projects(request), asked)
            info, key = await store.create_api_key(form.get("scope", []), name, projects=projects)
            created = CreatedKey(
                key_id=info.key_id,
                name=info.name,
                scopes=info.scopes,
                key=key,
                projects=info.projects,
            )
            page = await _page(request, store, created=created)
            return render_form(request, "settings.html", page, status_code=201)
        if action == "revoke":
            key_id = (form.get("key_id") or [""])[-1]
            if await store.revoke_api_key(key_id, within=await caller_projects(request)):
                return RedirectResponse("/settings", status_code=303)
            error, status_code = f"there is no active key {key_id!r}", 404
        else:
            error = f"unknown action {action!r}: use 'create' or 'revoke'"
    except KeyRefused as exc:
        error, status_code = str(exc), 403
    except LastActiveKey as exc:
        error, status_code = str(exc), 409
    except UserError as exc:
        error = str(exc)
    page = await _page(request, store, error=error)
    return render_form(request, "settings.html", page, status_code=status_code)
