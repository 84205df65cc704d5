"""What another web site cannot make the server do through its user's browser.

A server on 127.0.0.1 in open mode answers anyone who can reach it, and every page the
user visits can reach it: it may send "simple" requests (``POST`` with ``text/plain`` or
a form body, no custom header, no preflight) and read nothing back, or rebind its own
name to 127.0.0.1 and read everything (DNS rebinding). Before any route runs, this ASGI
middleware refuses:

- **a foreign host name** (``421 host_not_allowed``): a server bound to a loopback address
  answers only to loopback names (``127.0.0.1`` and the rest of ``127.0.0.0/8``,
  ``localhost``, ``[::1]``, any port) and the configured allow-list; a server bound to
  another address (keys required) answers to any name unless an allow-list is set. The
  allow-list (``create_app(allowed_hosts=...)``, ``scenarist serve --allowed-host``,
  ``SCENARIST_ALLOWED_HOSTS``) names hosts without ports; ``*`` admits every name.
  Rebinding needs a name the attacker controls, so the check is on names, keys or not:
  open mode comes back whenever the last key is revoked.
- **a state-changing request from another origin** (``403 cross_origin``): any method but
  ``GET``, ``HEAD`` and ``OPTIONS`` whose ``Origin`` is not this server's own
  (``scheme://host:port``; ``null`` included) or whose ``Sec-Fetch-Site`` is
  ``cross-site`` or ``same-site`` (another port of the same host is another origin).
  Browsers send one or both on every such request; the CLI, the SDKs and scripts send
  neither and pass, as do the dashboard's own forms.
- **a JSON endpoint sent something else** (``415 unsupported_media_type``): a request to
  ``/api/`` or ``/v1/`` with a body type that is not JSON (``application/json``,
  ``*/*+json``, or JSON Lines for run logs), as ``text/plain`` and form bodies are the
  only ones a foreign page can send without asking first. No ``Content-Type`` at all is
  accepted (a script's bodiless ``POST``; a browser without an ``Origin`` cannot send it).
  ``POST /v1/traces`` also takes ``application/x-protobuf`` (OTLP's binary encoding): not
  a type a page can send without a CORS preflight, which this server never grants.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable

from scenarist.server._errors import error_response

try:
    from starlette.types import ASGIApp, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from scenarist._extras import missing_extra

    raise missing_extra("server", exc) from exc

__all__ = ["ALLOWED_HOSTS_ENV", "RequestGuard", "allowed_hosts_from_env", "host_name"]

ALLOWED_HOSTS_ENV = "SCENARIST_ALLOWED_HOSTS"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_FOREIGN_FETCH_SITES = frozenset({b"cross-site", b"same-site"})
_JSON_PREFIXES = ("/api/", "/v1/")
_JSON_LINES = frozenset({"ndjson", "x-ndjson", "jsonl", "x-jsonl", "jsonlines", "x-jsonlines"})


def allowed_hosts_from_env() -> list[str]:
    """``SCENARIST_ALLOWED_HOSTS`` split on commas (empty when unset)."""
    return [name for name in os.environ.get(ALLOWED_HOSTS_ENV, "").split(",") if name.strip()]


def host_name(host: str) -> str:
    """The name in a ``Host`` header: lower case, without port or brackets."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    name, _, port = host.rpartition(":")
    return name if name and port.isdigit() and ":" not in name else host.rstrip(".")


def _is_loopback_name(name: str) -> bool:
    if name in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _is_otlp_protobuf(path: str, content_type: str) -> bool:
    media = content_type.partition(";")[0].strip().lower()
    return path == "/v1/traces" and media == "application/x-protobuf"


def _is_json(content_type: str) -> bool:
    media = content_type.partition(";")[0].strip().lower()
    main, _, sub = media.partition("/")
    return main == "application" and (sub == "json" or sub.endswith("+json") or sub in _JSON_LINES)


class RequestGuard:
    """The checks of the module docstring, as ASGI middleware (before routing)."""

    def __init__(
        self, app: ASGIApp, *, loopback_only: bool, allowed_hosts: Iterable[str] = ()
    ) -> None:
        self.app = app
        self.loopback_only = loopback_only
        self.allowed = frozenset(host_name(name) for name in allowed_hosts if name.strip())

    def _host_allowed(self, name: str) -> bool:
        if "*" in self.allowed or name in self.allowed or _is_loopback_name(name):
            return True
        return not self.loopback_only and not self.allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, bytes] = dict(scope.get("headers", []))
        refusal = self._refusal(scope, headers)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, code, message = refusal
        await error_response(status, message, code=code)(scope, receive, send)

    def _refusal(self, scope: Scope, headers: dict[bytes, bytes]) -> tuple[int, str, str] | None:
        host = headers.get(b"host", b"").decode("latin-1")
        if host and not self._host_allowed(host_name(host)):
            return (
                421,
                "host_not_allowed",
                f"this server does not answer to the host name {host!r}: a server on a "
                "loopback address serves only 127.0.0.1, localhost and [::1] (a page "
                "could otherwise read it through DNS rebinding). To serve another name, "
                f"list it with `scenarist serve --allowed-host NAME` or {ALLOWED_HOSTS_ENV}",
            )
        if scope["method"] in _SAFE_METHODS:
            return None
        origin = headers.get(b"origin")
        own = f"{scope.get('scheme', 'http')}://{host}"
        fetch_site = headers.get(b"sec-fetch-site", b"").lower()
        if (origin is not None and origin.decode("latin-1") != own) or (
            fetch_site in _FOREIGN_FETCH_SITES
        ):
            sender = origin.decode("latin-1") if origin is not None else fetch_site.decode()
            return (
                403,
                "cross_origin",
                f"refused a {scope['method']} from another origin ({sender!r}): this server "
                "takes changes from its own pages and from clients that are not browsers "
                "(the CLI, the SDKs, scripts), never from another site",
            )
        content_type = headers.get(b"content-type")
        if (
            content_type is not None
            and scope["path"].startswith(_JSON_PREFIXES)
            and not _is_json(content_type.decode("latin-1"))
            and not _is_otlp_protobuf(scope["path"], content_type.decode("latin-1"))
        ):
            return (
                415,
                "unsupported_media_type",
                f"this endpoint takes JSON, not {content_type.decode('latin-1')!r}: send "
                "Content-Type: application/json (or application/x-ndjson for a run log file)",
            )
        return None
