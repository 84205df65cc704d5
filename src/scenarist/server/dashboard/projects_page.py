"""``/projects``: every project the caller may open, what each holds, and a link to it.

The all-projects view for keys that may see several (a global key, open mode, or a key
limited to a few): runs, traces and the newest run of each project, newest activity
first, each linking to its overview (``/?project=NAME``). The JSON twin is
``/projects.json``. Only the projects the request's key opens are read or listed
(:func:`scenarist.server.projects.readable_projects`), so a limited key learns nothing of the
others, not even their names. :func:`elsewhere` is the same list for the overview's empty
state: an empty project names the caller's projects that hold runs.
"""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel

from scenarist.server._deps import Read, Store
from scenarist.server._input_limits import CheckedRoute
from scenarist.server.dashboard._render import page_format, render
from scenarist.server.projects import readable_projects
from scenarist.store.projects import current_project
from scenarist.store.sql.projects import ProjectActivity
from scenarist.store.sql.store import SqlStore

__all__ = ["ProjectsPage", "elsewhere", "router"]

router = APIRouter(include_in_schema=False, route_class=CheckedRoute)

_NEVER = datetime.min.replace(tzinfo=UTC)


class ProjectsPage(BaseModel):
    current: str
    projects: list[ProjectActivity]
    """The projects the caller may open, newest run first (then by name)."""


async def readable_activity(store: SqlStore) -> list[ProjectActivity]:
    found = await store.project_activity(await readable_projects(store))
    return sorted(found, key=lambda p: (-(p.last_run_at or _NEVER).timestamp(), p.project))


async def elsewhere(store: SqlStore) -> list[ProjectActivity]:
    """The caller's other projects that hold runs (the overview's empty state)."""
    current = current_project()
    return [p for p in await readable_activity(store) if p.project != current and p.runs]


@router.get("/projects", dependencies=[Read])
@router.get("/projects.json", dependencies=[Read])
async def projects(request: Request, store: Store) -> Response:
    """Every project the caller may open (HTML, or its JSON twin)."""
    wants_json = page_format(request)[1] or request.url.path.endswith(".json")
    page = ProjectsPage(current=current_project(), projects=await readable_activity(store))
    return render("projects.html", page, wants_json=wants_json)
