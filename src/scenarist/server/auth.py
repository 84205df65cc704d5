"""Who may call the API: API keys with scopes, and the loopback-only open mode.

- **Open mode**: the server was told it listens on a loopback address and no active key
  exists (checked per request, so the first key created, even by another process, closes
  the door). Every request is served as anonymous, and an ``Authorization`` header is not
  checked: no key can be valid while none exists, and clients that always send one (the
  Veval SDK sends its API key on every call) work against a fresh ``scenarist serve``.
- Otherwise a request must carry ``Authorization: Bearer sk_scen_...``: none, or a key
  that is not an active key, is 401; a key without the route's scope is 403. ``admin``
  grants every scope.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable

from scenarist._extras import missing_extra

try:
    from fastapi import HTTPException, Request
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra("server", exc) from exc

from scenarist.store.sql.keys import parse_key_id

__all__ = ["has_scope", "is_loopback", "require_scope", "requires"]


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``)."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _unauthorized(message: str) -> HTTPException:
    return HTTPException(status_code=401, detail=message, headers={"WWW-Authenticate": "Bearer"})


def requires(scope: str) -> Callable[[Request], Awaitable[None]]:
    """A FastAPI dependency that lets the request through only with ``scope``."""

    async def check(request: Request) -> None:
        store = request.app.state.store
        if request.app.state.open_mode_allowed and not await store.has_active_keys():
            request.state.scopes = None
            return  # open mode: anonymous, whatever the header says (no key exists to check)
        header = request.headers.get("authorization")
        if header is None:
            raise _unauthorized(
                "this server requires an API key: send 'Authorization: Bearer sk_scen_...'"
            )
        method, _, key = header.partition(" ")
        if method.lower() != "bearer" or not key.strip():
            raise _unauthorized("the Authorization header must be 'Bearer <api key>'")
        scopes = await store.verify_api_key(key.strip())
        if scopes is None:
            raise _unauthorized("the API key is not valid (unknown, malformed or revoked)")
        request.state.api_key_id = parse_key_id(key.strip())  # the caller, for rate limits
        request.state.scopes = scopes
        if scope not in scopes and "admin" not in scopes:
            raise HTTPException(
                status_code=403,
                detail=f"the API key lacks the {scope!r} scope (it has {', '.join(scopes)})",
            )

    return check


def has_scope(request: Request, scope: str) -> bool:
    """Whether this request's caller (a key or a dashboard session, already checked by
    the route's dependency) holds ``scope``; in open mode, every scope. For routes open to
    one scope that answer more to a caller with another (``ingest`` may store a snapshot,
    only ``read`` may read a stored trace's steps)."""
    scopes: list[str] | None = getattr(request.state, "scopes", [])  # unchecked: none
    return scopes is None or scope in scopes or "admin" in scopes


def require_scope(request: Request, scope: str, doing: str) -> None:
    """403 unless the caller holds ``scope`` for ``doing`` (what the request would do
    that needs it, e.g. "taking a snapshot of a stored trace reads its steps")."""
    if not has_scope(request, scope):
        held: list[str] = getattr(request.state, "scopes", None) or []
        raise HTTPException(
            status_code=403,
            detail=f"{doing}: the API key needs the {scope!r} scope "
            f"(it has {', '.join(held) or 'none'})",
        )
