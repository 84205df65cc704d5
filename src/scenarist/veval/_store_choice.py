"""Which store a client keeps its runs in: given, a server by URL, or the local default.

An explicit ``store`` wins. Otherwise a server URL (``base_url`` or ``SCENARIST_URL``)
selects :class:`scenarist.store.remote.RemoteStore` with the key ``api_key`` (or
``SCENARIST_API_KEY``); what an unreachable server does not take is spooled for
``scenarist sync``, never silently dropped (``raise_on_send_failure=True`` raises
instead). With neither, the local SQLite store of :mod:`scenarist.store.default`.
"""

from __future__ import annotations

import os

from scenarist.errors import UserError
from scenarist.store.base import Store

__all__ = ["choose_store"]


def choose_store(
    api_key: str | None,
    base_url: str | None,
    store: Store | None,
    raise_on_send_failure: bool,
    project: str | None = None,
) -> Store:
    """The store a client with these arguments uses; ``project`` scopes it
    (:mod:`scenarist.store.projects`; a given store is scoped when it can be)."""
    if store is not None:
        scoped = getattr(store, "scoped", None)
        return scoped(project) if project is not None and callable(scoped) else store
    url = base_url or os.environ.get("SCENARIST_URL")
    if url:
        from scenarist.store.remote import RemoteStore, http_library

        try:
            http_library()
        except ImportError as exc:
            raise UserError(
                f"a scenarist server at {url!r} was configured; talking to it needs httpx2: "
                "pip install 'scenarist[remote]' (or unset SCENARIST_URL to keep runs in "
                "the local database)"
            ) from exc
        return RemoteStore(
            url,
            api_key or os.environ.get("SCENARIST_API_KEY"),
            raise_on_send_failure=raise_on_send_failure,
            project=project,
        )
    from scenarist.store.default import default_store

    return default_store(project)
