"""``/login`` and ``/logout``: a browser trades an API key with ``read`` for a session.

``GET /login`` shows the form; ``POST /login`` (CSRF-checked) verifies the key, sets the
signed session cookie (:mod:`.session`) and redirects (303) to ``next``, a local path.
A wrong key answers 401 and a key without ``read`` (or ``admin``) 403, with the form
again. ``POST /logout`` (CSRF-checked) ends the session on the server and clears the
cookie. :func:`install_sessions` adds
these routes, the settings page (:mod:`.settings`) and the login redirect to the app.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from pydantic import BaseModel

from scenarist.server._input_limits import CheckedRoute
from scenarist.server.dashboard._csrf import FIELD, CsrfError, csrf_token, set_cookie, verify_csrf
from scenarist.server.dashboard._render import render
from scenarist.server.dashboard.session import (
    LoginRequired,
    clear_session_cookie,
    end_session,
    login_redirect,
    safe_next,
    set_session_cookie,
)
from scenarist.store.sql.keys import parse_key_id

__all__ = ["LoginPage", "csrf_failed", "install_sessions", "parse_form", "render_form", "router"]

router = APIRouter(include_in_schema=False, route_class=CheckedRoute)


class LoginPage(BaseModel):
    """The login form: where to go afterwards, and why the last attempt failed."""

    next: str
    error: str | None = None
    open_mode: bool = False


def parse_form(body: bytes) -> dict[str, list[str]]:
    """An ``application/x-www-form-urlencoded`` body (every value of every field)."""
    return parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)


def csrf_failed(exc: CsrfError) -> JSONResponse:
    return JSONResponse({"error": {"code": "csrf_failed", "message": str(exc)}}, status_code=403)


def render_form(
    request: Request, template: str, page: BaseModel, *, status_code: int = 200
) -> Response:
    """``template`` as HTML with a CSRF token for its forms (and the cookie, if new)."""
    new_cookies: list[str] = []
    token = csrf_token(request, new_cookies)
    response = render(template, page, wants_json=False, status_code=status_code, csrf_token=token)
    for value in new_cookies:
        set_cookie(request, response, value)
    response.headers["Cache-Control"] = "no-store"
    return response


async def _open_mode(request: Request) -> bool:
    if not request.app.state.open_mode_allowed:
        return False
    return not await request.app.state.store.has_active_keys()


@router.get("/login")
async def login_form(request: Request, next: str | None = None) -> Response:
    page = LoginPage(next=safe_next(next), open_mode=await _open_mode(request))
    return render_form(request, "login.html", page)


@router.post("/login")
async def login(request: Request) -> Response:
    form = {k: v[-1] for k, v in parse_form(await request.body()).items()}
    try:
        verify_csrf(request, form.get(FIELD))
    except CsrfError as exc:
        return csrf_failed(exc)
    target = safe_next(form.get("next"))
    key = form.get("api_key", "").strip()
    scopes = await request.app.state.store.verify_api_key(key) if key else None
    key_id = parse_key_id(key)
    error, status = None, 200
    if scopes is None or key_id is None:
        error, status = "That API key is not valid (unknown, mistyped or revoked).", 401
    elif "read" not in scopes and "admin" not in scopes:
        error, status = f"That key lacks the 'read' scope (it has {', '.join(scopes)}).", 403
    if error is not None or key_id is None:
        page = LoginPage(next=target, error=error, open_mode=await _open_mode(request))
        return render_form(request, "login.html", page, status_code=status)
    response = RedirectResponse(target, status_code=303)
    set_session_cookie(request, response, key_id)
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    form = {k: v[-1] for k, v in parse_form(await request.body()).items()}
    try:
        verify_csrf(request, form.get(FIELD))
    except CsrfError as exc:
        return csrf_failed(exc)
    await end_session(request)  # on the server: a copy of the cookie is dead too
    response = RedirectResponse("/login", status_code=303)
    clear_session_cookie(request, response)
    return response


def install_sessions(app: FastAPI) -> None:
    """Add ``/login``, ``/logout``, ``/settings`` and the login redirect to ``app``."""
    from scenarist.server.dashboard.settings import router as settings_router

    app.include_router(router)
    app.include_router(settings_router)
    app.add_exception_handler(LoginRequired, login_redirect)
