"""Projects: one store, several teams. Every run, trace and scenario item belongs to one.

A project is a short name (letters, digits, ``.``, ``_``, ``-``; at most 64 characters).
Which project a store reads and writes, first that applies:

1. the one given to the store or client (``SqlStore(project=...)``,
   ``RemoteStore(project=...)``, ``Client(project=...)``, ``scenarist run --project``);
2. inside a server request, the request's project (:func:`project_scope`, set by the
   server from ``?project=`` or the ``X-Scenarist-Project`` header);
3. ``SCENARIST_PROJECT``;
4. :data:`DEFAULT_PROJECT` (``"default"``), where everything stored before projects
   existed lives.

Veval's ``project_id`` (``ClientOptions(project_id=...)``) is this project.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from scenarist.errors import UserError

__all__ = [
    "DEFAULT_PROJECT",
    "PROJECT_HEADER",
    "check_project",
    "current_project",
    "project_scope",
    "switch_project",
]

DEFAULT_PROJECT = "default"
PROJECT_HEADER = "X-Scenarist-Project"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_request_project: ContextVar[str | None] = ContextVar("scenarist_project", default=None)


def check_project(name: str, *, source: str = "project") -> str:
    """``name`` if it is a valid project name, else a ``UserError`` naming ``source``."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise UserError(
            f"{source}: {name!r} is not a project name; use 1-64 letters, digits, '.', '_' "
            "or '-', starting with a letter or digit (e.g. 'support-bot')"
        )
    return name


def current_project() -> str:
    """The project of this context: a server request's, else ``SCENARIST_PROJECT``,
    else ``"default"``."""
    scoped = _request_project.get()
    if scoped is not None:
        return scoped
    from_env = os.environ.get("SCENARIST_PROJECT", "").strip()
    if from_env:
        return check_project(from_env, source="SCENARIST_PROJECT")
    return DEFAULT_PROJECT


@contextmanager
def project_scope(name: str) -> Iterator[None]:
    """Stores without a project of their own use ``name`` inside the block."""
    token = _request_project.set(check_project(name))
    try:
        yield
    finally:
        _request_project.reset(token)


def switch_project(name: str) -> None:
    """Use ``name`` for the rest of the current :func:`project_scope` (a server request
    whose key opens one project only, and that named none)."""
    _request_project.set(check_project(name))
