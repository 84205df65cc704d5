"""Dashboard sessions: a signed cookie, given after entering an API key with ``read``.

- The cookie ``scenarist_session`` is
  ``v2.<key id>.<session id>.<expiry, unix seconds>.<signature>``, the signature being
  ``HMAC-SHA256(server secret, "v2.<key id>.<session id>.<expiry>")`` and the session id
  random per login. It holds no key and no scopes: every request looks the key id up
  again (one read, which also checks the session was not ended), so revoking a key ends
  its sessions at once, and a key's scopes are the session's scopes.
- ``POST /logout`` ends the session on the server (its id is kept among the revoked
  sessions until the cookie would have expired), so a copy of the cookie taken before
  opens nothing afterwards; the key's other sessions go on. ``v1`` cookies (no session
  id, so no way to end them early) are no longer accepted: sign in again.
- It is ``HttpOnly``, ``SameSite=Strict``, ``Secure`` when the login came over https, and
  expires after :data:`SESSION_TTL` (12 hours; the signed expiry is checked, not only the
  browser's ``Max-Age``).
- The secret: ``SCENARIST_SECRET_KEY`` when set (give every replica of a server the same
  value), else a random secret kept in ``$SCENARIST_HOME/secret_key`` (created ``0600`` on
  first use), so a restart keeps sessions. Deleting that file signs everyone out.
- The route dependencies (:func:`session_or_key`) accept a session only when the request
  has no ``Authorization`` header (a bad key is never rescued by a cookie), and, for
  methods that change data, only when an ``Origin`` header, if sent, is this server's own
  (the dashboard's forms also check their CSRF token).
- A browser asking for an HTML page without a key or a session is sent to
  ``/login?next=<page>`` (htmx requests get 401 with ``HX-Redirect``); API clients keep
  their JSON 401.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote

from fastapi import HTTPException, Request, Response
from fastapi.responses import RedirectResponse

from scenarist.server.auth import requires
from scenarist.server.dashboard._render import page_format
from scenarist.server.projects import check_key_project
from scenarist.store._owner_only import owner_only_dir

__all__ = [
    "SESSION_COOKIE",
    "SESSION_TTL",
    "LoginRequired",
    "SessionCookie",
    "clear_session_cookie",
    "current_session",
    "end_session",
    "login_redirect",
    "read_session",
    "safe_next",
    "session_or_key",
    "session_secret",
    "set_session_cookie",
    "sign_session",
]

SESSION_COOKIE = "scenarist_session"
SESSION_TTL = timedelta(hours=12)
SECRET_FILE = "secret_key"
_VERSION = "v2"
_NOT_PAGES = ("/api/", "/v1/", "/static/", "/docs", "/redoc", "/openapi.json")
_SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def _secret_from_home() -> bytes:
    home = Path(os.environ.get("SCENARIST_HOME") or ".scenarist")
    path = home / SECRET_FILE
    try:
        return path.read_text().strip().encode()
    except FileNotFoundError:
        pass
    owner_only_dir(home)
    value = secrets.token_hex(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return path.read_text().strip().encode()
    with os.fdopen(fd, "w") as file:
        file.write(value + "\n")
    return value.encode()


def session_secret(request: Request) -> bytes:
    """The server secret that signs sessions (see the module docstring)."""
    state = request.app.state
    secret: bytes | None = getattr(state, "session_secret", None)
    if secret is None:
        configured = os.environ.get("SCENARIST_SECRET_KEY", "").strip()
        secret = configured.encode() if configured else _secret_from_home()
        state.session_secret = secret
    return secret


def _signature(secret: bytes, payload: str) -> str:
    return hmac.new(secret, payload.encode(), hashlib.sha256).hexdigest()


class SessionCookie(NamedTuple):
    """What a valid session cookie says: whose key, which session, until when."""

    key_id: str
    session_id: str
    expires_at: int
    """Unix seconds."""


def sign_session(secret: bytes, key_id: str, expires_at: int, session_id: str) -> str:
    """The cookie value for session ``session_id`` of ``key_id``, valid until
    ``expires_at``."""
    payload = f"{_VERSION}.{key_id}.{session_id}.{expires_at}"
    return f"{payload}.{_signature(secret, payload)}"


def read_session(secret: bytes, value: str, now: float | None = None) -> SessionCookie | None:
    """The session of a well-signed, unexpired cookie ``value``, else ``None`` (whether
    it was ended by logout is the store's to say)."""
    parts = value.split(".")
    if len(parts) != 5 or parts[0] != _VERSION or not all(parts[1:3]) or not parts[3].isdigit():
        return None
    expected = _signature(secret, ".".join(parts[:4]))
    if not hmac.compare_digest(expected, parts[4]):
        return None
    if int(parts[3]) <= (time.time() if now is None else now):
        return None
    return SessionCookie(parts[1], parts[2], int(parts[3]))


def set_session_cookie(request: Request, response: Response, key_id: str) -> None:
    ttl = int(SESSION_TTL.total_seconds())
    expires_at = int(time.time()) + ttl
    value = sign_session(session_secret(request), key_id, expires_at, secrets.token_hex(16))
    response.set_cookie(
        SESSION_COOKIE,
        value,
        max_age=ttl,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def clear_session_cookie(request: Request, response: Response) -> None:
    response.delete_cookie(
        SESSION_COOKIE,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def _same_origin(request: Request) -> bool:
    origin = request.headers.get("origin")
    return origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"


def current_session(request: Request) -> SessionCookie | None:
    """This request's valid session cookie (signature and expiry only)."""
    value = request.cookies.get(SESSION_COOKIE)
    if not value or len(value) > 500:
        return None
    return read_session(session_secret(request), value)


async def end_session(request: Request) -> None:
    """End this request's session on the server (logout): its cookie, or any copy of
    it, opens nothing afterwards."""
    session = current_session(request)
    if session is not None:
        expires_at = datetime.fromtimestamp(session.expires_at, UTC)
        await request.app.state.store.revoke_session(session.session_id, expires_at)


async def _session_scopes(request: Request) -> list[str] | None:
    if request.method not in _SAFE_METHODS and not _same_origin(request):
        return None
    session = current_session(request)
    if session is None:
        return None
    store = request.app.state.store
    scopes: list[str] | None = await store.session_scopes(session.key_id, session.session_id)
    if scopes is not None:
        request.state.session_key_id = session.key_id
        request.state.scopes = scopes
    return scopes


class LoginRequired(Exception):
    """A browser asked for a page without a key or a valid session."""

    def __init__(self, next_url: str, *, htmx: bool) -> None:
        super().__init__(next_url)
        self.next_url = next_url
        self.htmx = htmx


def safe_next(value: str | None) -> str:
    """A local path to return to after login (anything else becomes ``/``)."""
    if (
        not value
        or not value.startswith("/")
        or value.startswith(("//", "/login", "/logout"))
        or "\\" in value
        or any(ord(c) < 32 for c in value)
    ):
        return "/"
    return value


def _wants_page(request: Request) -> bool:
    path = request.url.path
    if request.method not in ("GET", "HEAD") or path.startswith(_NOT_PAGES):
        return False
    return not page_format(request, path)[1]


def login_redirect(request: Request, exc: Exception) -> Response:
    """The handler for :class:`LoginRequired`: 303 to ``/login?next=…``."""
    assert isinstance(exc, LoginRequired)
    target = "/login?next=" + quote(safe_next(exc.next_url), safe="")
    if exc.htmx:
        return Response(status_code=401, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)


def session_or_key(scope: str) -> Callable[[Request], Awaitable[None]]:
    """Like :func:`scenarist.server.auth.requires`, also accepting a dashboard session."""
    by_key = requires(scope)

    async def check(request: Request) -> None:
        has_header = "authorization" in request.headers
        if not has_header:
            scopes = await _session_scopes(request)
            if scopes is not None:
                if scope not in scopes and "admin" not in scopes:
                    raise HTTPException(
                        status_code=403,
                        detail=f"this session's key lacks the {scope!r} scope "
                        f"(it has {', '.join(scopes)})",
                    )
                await check_key_project(request)
                return
        try:
            await by_key(request)
            await check_key_project(request)
        except HTTPException as exc:
            if exc.status_code == 401 and not has_header and _wants_page(request):
                query = request.url.query
                next_url = request.url.path + (f"?{query}" if query else "")
                htmx = request.headers.get("hx-request") == "true"
                raise LoginRequired(next_url, htmx=htmx) from exc
            raise

    return check
