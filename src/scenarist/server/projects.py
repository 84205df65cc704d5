"""Which project a request reads and writes, and whether its API key may.

The project is named by ``?project=`` (the dashboard's switcher, links), else the
``X-Scenarist-Project`` header (``RemoteStore``, ``Client(project=...)``), else the
``scenarist_project`` cookie (set when a page opened with ``?project=`` was served to a
caller who may open that project, so the dashboard stays on the project chosen), else it
is the key's only project, else ``default``. The cookie is a remembered choice, not a
request: one that is not a project name is ignored, and one naming a project the key does
not open counts as naming none (a link to another project, or a choice made under another
key, must not lock a session out of its own project). :class:`ProjectScope` sets it for the request
(:func:`scenarist.store.projects.project_scope`): the app's one store then reads and writes
that project in every route, with no route naming it.

A key created with projects (``scenarist keys create --project a``) opens those only:
:func:`check_key_project` answers 403 for any other, after the key is verified.
"""

from __future__ import annotations

from contextvars import ContextVar
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from fastapi import HTTPException, Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scenarist.errors import UserError
from scenarist.server._errors import error_response
from scenarist.store.projects import (
    DEFAULT_PROJECT,
    PROJECT_HEADER,
    check_project,
    current_project,
    project_scope,
    switch_project,
)

__all__ = ["COOKIE", "ProjectScope", "check_key_project", "readable_projects", "switcher"]

COOKIE = "scenarist_project"
_HEADER = PROJECT_HEADER.lower().encode()
_listed: ContextVar[list[str] | None] = ContextVar("scenarist_listed_projects", default=None)


_opened: ContextVar[tuple[str, ...] | None] = ContextVar("scenarist_opened", default=None)
_EVERY = ("*",)


def switcher() -> dict[str, Any] | None:
    """What the page header's project switcher shows: the current project and the
    projects the caller may open (read once per page request by :class:`ProjectScope`);
    ``None`` before the request was authorised (the login page lists no project)."""
    opened = _opened.get()
    if opened is None:
        return None
    current = current_project()
    listed = set(_listed.get() or [])
    if opened != _EVERY:
        listed &= set(opened)
    return {"current": current, "projects": sorted({*listed, current})}


async def readable_projects(store: Any) -> list[str]:
    """Every project this request's key (or open mode) opens, by name: the database's
    projects for a key that opens all, the key's own list otherwise (the current project
    at least)."""
    opened = _opened.get()
    current = current_project()
    if opened is None:
        return [current]
    if opened == _EVERY:
        return sorted({*(await store.list_projects()), current})
    return sorted({*opened, current} if current in opened else set(opened))


def _opens(opened: tuple[str, ...] | None, project: str) -> bool:
    """Whether this request's checked key (or open mode) opens ``project``."""
    return opened is not None and (opened == _EVERY or project in opened)


def _is_page(scope: Scope) -> bool:
    if scope.get("method") != "GET":
        return False
    for name, value in scope.get("headers", []):
        if name == b"accept":
            return b"text/html" in value
    return False


def _named(scope: Scope) -> tuple[str | None, str]:
    """The project the request names, and where (``query``, ``header``, ``cookie``)."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if query.get("project"):
        return query["project"][0], "query"
    cookie_header = None
    for name, value in scope.get("headers", []):
        if name == _HEADER:
            return value.decode("latin-1"), "header"
        if name == b"cookie":
            cookie_header = value.decode("latin-1")
    if cookie_header:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(cookie_header)
        except Exception:  # a malformed Cookie header names no project
            return None, "cookie"
        if COOKIE in jar:  # a remembered choice: one that is not a project name (a
            # cookie the server never set, e.g. planted by a sibling domain) is ignored
            value = jar[COOKIE].value
            return (value, "cookie") if _is_project_name(value) else (None, "")
    return None, ""


def _is_project_name(value: str) -> bool:
    try:
        check_project(value)
    except UserError:
        return False
    return True


class ProjectScope:
    """ASGI middleware: the request's project for everything inside it (400 when the
    name is not a project name); ``?project=`` on a page (a browser's GET for HTML)
    also sets the cookie."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        named, source = _named(scope)
        try:
            project = DEFAULT_PROJECT if named is None else check_project(named)
        except UserError as exc:
            where = {"query": "?project=", "header": PROJECT_HEADER, "cookie": COOKIE}[source]
            await error_response(400, f"{where}: {exc}", code="bad_project")(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        state["project_named"], state["project_source"] = named is not None, source
        remember = source == "query" and _is_page(scope)  # a browser chose it

        async def with_cookie(message: Message) -> None:
            # remembered only when the page was served to a caller who may open the
            # project: a refused one (a link naming a project the key does not open),
            # or a page served without a key (the login form), remembers nothing
            if (
                remember
                and message["type"] == "http.response.start"
                and 200 <= message["status"] < 300
                and _opens(_opened.get(), project)
            ):
                cookie = f"{COOKIE}={project}; Path=/; SameSite=Lax; HttpOnly"
                if scope.get("scheme") == "https":  # (a trusted proxy's X-Forwarded-Proto too)
                    cookie += "; Secure"
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie.encode())]
            await send(message)

        with project_scope(project):
            listed = None
            if _is_page(scope):  # one small read: the switcher's choices
                store = getattr(scope.get("app"), "state", None)
                store = getattr(store, "store", None)
                if store is not None:
                    try:
                        listed = await store.list_projects()
                    except Exception:  # the page itself reports an unavailable database
                        listed = None
            token = _listed.set(listed)
            unopened = _opened.set(None)  # until this request's key is checked
            try:
                await self.app(scope, receive, with_cookie)
            finally:
                _opened.reset(unopened)
                _listed.reset(token)


async def check_key_project(request: Request, project: str | None = None) -> None:
    """403 unless the request's key (or the session's) opens ``project`` (default: the
    request's); a request that named no project gets the key's only project."""
    state: Any = request.state
    key_id = getattr(state, "api_key_id", None) or getattr(state, "session_key_id", None)
    if not key_id:
        _opened.set(_EVERY)  # open mode: one local user, every project
        return
    allowed = await request.app.state.store.key_projects(key_id)
    state.key_projects = allowed  # for the key routes (scenarist.server.key_policy)
    if allowed is None:
        _opened.set(_EVERY)
        return
    wanted = project or current_project()
    named = getattr(state, "project_named", False)
    remembered = getattr(state, "project_source", "") == "cookie"
    if project is None and named and remembered and wanted not in allowed:
        # the browser's remembered choice, made under another key or planted: this key
        # does not open it, so the request is served as if it had named none
        named, wanted = False, DEFAULT_PROJECT
        switch_project(DEFAULT_PROJECT)
    if project is None and not named and len(allowed) == 1:
        switch_project(allowed[0])
        _opened.set(tuple(allowed))
        return
    if wanted not in allowed:
        raise HTTPException(
            status_code=403,
            detail=f"this API key is scoped to the project(s) {', '.join(allowed)}, not "
            f"{wanted!r}; name one of them ({PROJECT_HEADER} or ?project=)",
        )
    _opened.set(tuple(allowed))
