"""Dashboard sessions: a signed cookie, given after entering an API key with ``read``.

- The cookie ``scenarist_session`` is ``v1.<key id>.<expiry, unix seconds>.<signature>``,
  the signature being ``HMAC-SHA256(server secret, "v1.<key id>.<expiry>")``. It holds no
  key and no scopes: every request looks the key id up again, so revoking a key ends its
  sessions at once, and a key's scopes are the session's scopes.
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
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

from fastapi import HTTPException, Request, Response
from fastapi.responses import RedirectResponse

from scenarist._owner_only import owner_only_dir
from scenarist.server.auth import requires
from scenarist.server.dashboard._render import page_format

__all__ = [
    "SESSION_COOKIE",
    "SESSION_TTL",
    "LoginRequired",
    "clear_session_cookie",
    "login_redirect",
    "read_session",
    "safe_next",
    "session_key_id",
    "session_or_key",
    "session_secret",
    "set_session_cookie",
    "sign_session",
]

SESSION_COOKIE = "scenarist_session"
SESSION_TTL = timedelta(hours=12)
SECRET_FILE = "secret_key"
_VERSION = "v1"
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


def sign_session(secret: bytes, key_id: str, expires_at: int) -> str:
    """The cookie value for a session of ``key_id`` valid until ``expires_at``."""
    payload = f"{_VERSION}.{key_id}.{expires_at}"
    return f"{payload}.{_signature(secret, payload)}"


def read_session(secret: bytes, value: str, now: float | None = None) -> str | None:
    """The key id of a well-signed, unexpired cookie ``value``, else ``None``."""
    parts = value.split(".")
    if len(parts) != 4 or parts[0] != _VERSION or not parts[1] or not parts[2].isdigit():
        return None
    expected = _signature(secret, ".".join(parts[:3]))
    if not hmac.compare_digest(expected, parts[3]):
        return None
    if int(parts[2]) <= (time.time() if now is None else now):
        return None
    return parts[1]


def set_session_cookie(request: Request, response: Response, key_id: str) -> None:
    ttl = int(SESSION_TTL.total_seconds())
    value = sign_session(session_secret(request), key_id, int(time.time()) + ttl)
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


def session_key_id(request: Request) -> str | None:
    """The key id of this request's valid session cookie (signature and expiry only)."""
    value = request.cookies.get(SESSION_COOKIE)
    if not value or len(value) > 500:
        return None
    return read_session(session_secret(request), value)


async def _session_scopes(request: Request) -> list[str] | None:
    if request.method not in _SAFE_METHODS and not _same_origin(request):
        return None
    key_id = session_key_id(request)
    if key_id is None:
        return None
    scopes: list[str] | None = await request.app.state.store.active_key_scopes(key_id)
    if scopes is not None:
        request.state.session_key_id = key_id
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
                return
        try:
            await by_key(request)
        except HTTPException as exc:
            if exc.status_code == 401 and not has_header and _wants_page(request):
                query = request.url.query
                next_url = request.url.path + (f"?{query}" if query else "")
                htmx = request.headers.get("hx-request") == "true"
                raise LoginRequired(next_url, htmx=htmx) from exc
            raise

    return check
