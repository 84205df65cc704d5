"""Cross-site request forgery protection for the dashboard's forms.

The dashboard's forms change data (scenario items), and in open mode (loopback, no key)
any web page the user visits could post to ``http://127.0.0.1:…``. So every form carries
a token that another site cannot know:

- the browser gets a random ``scenarist_csrf`` cookie (``HttpOnly``, ``SameSite=Strict``);
- forms carry ``HMAC-SHA256(app secret, cookie)`` in a hidden ``csrf_token`` field;
- a POST is accepted only when the field matches the cookie it came with, and when its
  ``Origin`` header, if sent, is this server's own origin.

The secret is random per app instance (a restart invalidates open forms, nothing else).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from fastapi import Request, Response

__all__ = ["COOKIE", "FIELD", "CsrfError", "csrf_token", "set_cookie", "verify_csrf"]

COOKIE = "scenarist_csrf"
FIELD = "csrf_token"


class CsrfError(Exception):
    """The form did not carry a valid CSRF token."""


def _secret(request: Request) -> bytes:
    state = request.app.state
    secret: bytes | None = getattr(state, "csrf_secret", None)
    if secret is None:
        secret = secrets.token_bytes(32)
        state.csrf_secret = secret
    return secret


def _sign(request: Request, cookie: str) -> str:
    return hmac.new(_secret(request), cookie.encode(), hashlib.sha256).hexdigest()


def csrf_token(request: Request, response_cookies: list[str]) -> str:
    """The token for this browser's forms; when it has no cookie yet, a new cookie value
    is appended to ``response_cookies`` for :func:`set_cookie`."""
    cookie = request.cookies.get(COOKIE)
    if not cookie or len(cookie) > 200:
        cookie = secrets.token_urlsafe(32)
        response_cookies.append(cookie)
    return _sign(request, cookie)


def set_cookie(request: Request, response: Response, value: str) -> None:
    """The CSRF cookie, ``Secure`` when ``request`` came over https (directly, or through
    a proxy the server trusts: uvicorn sets the scheme from ``X-Forwarded-Proto`` then)."""
    response.set_cookie(
        COOKIE,
        value,
        httponly=True,
        samesite="strict",
        path="/",
        secure=request.url.scheme == "https",
    )


def verify_csrf(request: Request, token: str | None) -> None:
    """Raise :class:`CsrfError` unless ``token`` matches this browser's cookie."""
    origin = request.headers.get("origin")
    if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
        raise CsrfError(f"the form was posted from another origin ({origin!r})")
    cookie = request.cookies.get(COOKIE)
    if not cookie or not token:
        raise CsrfError("the form has no CSRF token: reload the page and submit again")
    if not hmac.compare_digest(_sign(request, cookie), token):
        raise CsrfError("the form's CSRF token is not valid: reload the page and submit again")
