"""Which API keys a caller may list, create and revoke: one rule for every path that
manages keys through the server (``/api/keys``, the ``/settings`` form and its JSON
twin), for a Bearer key and a dashboard session alike.

A key opens every project (``projects`` is ``None``: a global key, the owner's) or the
projects it lists. A global admin manages every key. An admin key limited to projects
(``scenarist keys create --project alpha --scope admin``) is a tenant's admin:

- it lists only the keys whose projects are some of its own (never a global key, never
  a key that opens another project);
- it creates only keys whose projects are a non-empty subset of its own: naming none
  gives its own projects; naming another is refused (403, naming the projects it may
  grant);
- it revokes only keys within its projects; any other key, global ones included, is
  answered as an unknown key would be (404), so it learns no other tenant's key ids.

The keys commands of the CLI (``scenarist keys ...``) open the database itself: whoever
runs them holds the database, the owner.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request

from scenarist.store.projects import check_project

__all__ = ["KeyRefused", "caller_projects", "projects_to_grant"]


class KeyRefused(Exception):
    """The caller may not create that key (a 403)."""


async def caller_projects(request: Request) -> list[str] | None:
    """The projects the caller's key (a Bearer key's, or the dashboard session's) is
    limited to; ``None`` for a global key and in open mode (one local user)."""
    state: Any = request.state
    if hasattr(state, "key_projects"):  # read once already by check_key_project
        cached: list[str] | None = state.key_projects
        return cached
    key_id = getattr(state, "api_key_id", None) or getattr(state, "session_key_id", None)
    if not key_id:
        return None
    projects: list[str] | None = await request.app.state.store.key_projects(key_id)
    return projects


def projects_to_grant(own: list[str] | None, asked: list[str] | None) -> list[str] | None:
    """The projects of a key a caller limited to ``own`` (``None``: every project) asks
    to create with ``asked`` (``None``: none named). A global caller grants what it asks;
    a limited one its own projects by default, some of them when it names them, and
    never more (:class:`KeyRefused`). Bad names are a ``UserError`` naming the field."""
    if asked is not None:
        asked = [check_project(p, source="key project") for p in asked]
    if own is None:
        return asked
    if asked is None:
        return sorted(own)
    outside = sorted(set(asked) - set(own))
    if outside:
        raise KeyRefused(
            f"this API key may grant the project(s) {', '.join(sorted(own))} only, not "
            f"{', '.join(outside)}: name some of its projects, or none for all of them"
        )
    return asked
