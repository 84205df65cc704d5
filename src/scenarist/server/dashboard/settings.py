"""``/settings`` (``admin`` scope, by key or session): the API keys.

``GET /settings`` lists every key (id, name, scopes, created, revoked; last use is not
recorded); its JSON twin (``/settings.json``, ``?format=json`` or a non-HTML ``Accept``)
is the same list. ``POST /settings`` (CSRF-checked form): ``action=create`` (``name``,
one ``scope`` field per scope) answers 201 with the page showing the new key once (sent
``Cache-Control: no-store``; it is never shown again, only its hash is stored);
``action=revoke`` (``key_id``) redirects back (303). A revoked key's sessions end at once.
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
from scenarist.store.sql.keys import SCOPES
from scenarist.store.sql.records import ApiKeyInfo

__all__ = ["CreatedKey", "SettingsPage", "router"]

router = APIRouter(include_in_schema=False, route_class=CheckedRoute)


class CreatedKey(BaseModel):
    """A key just created: the only time ``key`` is ever shown."""

    key_id: str
    name: str | None
    scopes: list[str]
    key: str


class SettingsPage(BaseModel):
    keys: list[ApiKeyInfo]
    scopes: list[str]
    signed_in_as: str | None = None
    open_mode: bool = False
    created: CreatedKey | None = None
    error: str | None = None


async def _page(request: Request, store: Store, **extra: object) -> SettingsPage:
    keys = await store.list_api_keys()
    open_mode = request.app.state.open_mode_allowed and not any(k.revoked_at is None for k in keys)
    return SettingsPage.model_validate(
        {
            "keys": keys,
            "scopes": list(SCOPES),
            "signed_in_as": getattr(request.state, "session_key_id", None),
            "open_mode": open_mode,
            **extra,
        }
    )


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
    try:
        if action == "create":
            name = (form.get("name") or [""])[-1].strip() or None
            info, key = await store.create_api_key(form.get("scope", []), name)
            created = CreatedKey(key_id=info.key_id, name=info.name, scopes=info.scopes, key=key)
            page = await _page(request, store, created=created)
            return render_form(request, "settings.html", page, status_code=201)
        if action == "revoke":
            key_id = (form.get("key_id") or [""])[-1]
            if await store.revoke_api_key(key_id):
                return RedirectResponse("/settings", status_code=303)
            error = f"there is no active key {key_id!r}"
        else:
            error = f"unknown action {action!r}: use 'create' or 'revoke'"
    except UserError as exc:
        error = str(exc)
    page = await _page(request, store, error=error)
    return render_form(request, "settings.html", page, status_code=422)
