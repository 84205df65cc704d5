"""``RemoteStore``: the :class:`~scenarist.store.Store` protocol over a scenarist server's
HTTP API, so a client keeps its runs on a shared server::

    client = Client(store=RemoteStore("http://scenarist.internal:8480", api_key="sk_scen_..."))

It uses httpx2 (httpx when httpx2 is missing), imported on first use. Each operation opens
its own connection, so one store serves the fresh event loops of the sync wrappers.
Requests answered 429 or 5xx, or that fail to connect, are retried (``retries`` times,
with backoff, honouring ``Retry-After`` up to 10 s); then a read raises
:class:`~scenarist.errors.RequestError`. A read of something the server does not have
(404) is ``None``, as the protocol says.

Writes that carry results (traces, scenario runs, run logs, snapshots) are never lost:
when they still cannot be delivered after the retries (no connection, a timeout, 408,
429 or 5xx) they are written to the spool (:mod:`scenarist.store.spool`) as data (kind,
body, this server's origin, the project), a warning is logged (logger
``scenarist.remote``) and the file is added to :attr:`RemoteStore.spooled`;
``scenarist sync`` sends them later, and so does this store after its first successful
write (the uploads that were meant for the same server). A refusal the payload itself
caused (4xx: a bad key, an invalid body) raises :class:`~scenarist.errors.SendError`:
sending it again would not help. With ``raise_on_send_failure=True`` every failed write
raises instead of spooling.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from pydantic import BaseModel

from scenarist._jsonable import to_json_value
from scenarist.errors import RequestError, SendError
from scenarist.model.items import ScenarioItem, ScenarioRunRecord
from scenarist.model.record import TraceRecord
from scenarist.store.spool import (
    Spool,
    SpooledUpload,
    SyncResult,
    UploadKind,
    server_origin,
    sync_spool,
    upload_path,
)
from scenarist.store.sql.records import Page, TraceSummary
from scenarist.tracing.http._network_guard import unguarded

if TYPE_CHECKING:
    from scenarist.formats.runlog import RunLog
    from scenarist.replay.snapshots import SnapshotData

__all__ = ["RemoteStore", "UploadResult", "http_library", "read_run_log_records"]

_RETRY_STATUSES = {408, 429, 500, 502, 503, 504}
_STORE_PROJECT: Any = object()  # the project header from the store (or SCENARIST_PROJECT)
logger = logging.getLogger("scenarist.remote")


class UploadResult(BaseModel):
    """The outcome of :meth:`RemoteStore.upload_run_log`: the server's answer, or the
    spool file the run log waits in (``spooled``)."""

    run_id: str
    created: bool | None = None
    complete: bool
    scenario_count: int
    spooled: str | None = None


def http_library() -> Any:
    """httpx2, else httpx; an ``ImportError`` naming the extra when neither is installed."""
    try:
        import httpx2

        return httpx2
    except ImportError:
        pass
    try:
        import httpx

        return httpx
    except ImportError as exc:
        raise ImportError(
            "RemoteStore needs httpx2 (or httpx), which is not installed; "
            "run: pip install 'scenarist[remote]'"
        ) from exc


@functools.cache
def _tls_context(http: Any) -> Any:
    """One TLS context per process for the store's clients (``None``: the library's own
    default each time). The store makes a client per request, and building the context,
    which loads the CA bundle, cost about 60 ms of CPU per client."""
    create = getattr(http, "create_ssl_context", None)
    return None if create is None else create()


def _name(value: str) -> str:
    return quote(value, safe="")


def _json(model: Any) -> Any:
    return to_json_value(model.model_dump())


class RemoteStore:
    """Implements :class:`~scenarist.store.Store` by calling a scenarist server."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout_s: float = 30.0,
        retries: int = 2,
        transport: Any = None,
        spool: Spool | str | os.PathLike[str] | None = None,
        raise_on_send_failure: bool = False,
        sync_spool_on_start: bool = True,
        project: str | None = None,
    ) -> None:
        from scenarist.store.projects import check_project

        self.base_url = base_url.rstrip("/")
        self.origin = server_origin(self.base_url)  # what the spool compares servers by
        # None: the server's choice (the key's only project, else "default"), unless
        # SCENARIST_PROJECT names one when a request is made
        self.project = None if project is None else check_project(project)
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.retries = retries
        self._transport = transport  # tests: an ASGI or mock transport
        self.spool = spool if isinstance(spool, Spool) else Spool(spool)
        self.raise_on_send_failure = raise_on_send_failure
        self.spooled: list[Path] = []  # files this store wrote to the spool
        self._spool_synced = not sync_spool_on_start

    async def _request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
        allow_404: bool = False,
        project: str | None = _STORE_PROJECT,
        raw: bool = False,
    ) -> Any:
        http = http_library()
        error_class = RequestError if method == "GET" else SendError
        url = f"{self.base_url}{path}"
        if not path.startswith("/") or urlsplit(url).netloc != urlsplit(self.base_url).netloc:
            raise error_class(f"refusing to send to {url!r}: not a route of {self.base_url}")
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        if project is _STORE_PROJECT:
            project = self._project()
        if project:
            from scenarist.store.projects import PROJECT_HEADER

            headers[PROJECT_HEADER] = project
        options: dict[str, Any] = {"timeout": self.timeout_s, "headers": headers}
        if self._transport is not None:
            options["transport"] = self._transport
        elif (context := _tls_context(http)) is not None:
            options["verify"] = context
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                with unguarded():  # a cassette replay's network guard is for the agent
                    async with http.AsyncClient(**options) as client:
                        response = await client.request(method, url, json=body, params=params)
            except http.HTTPError as exc:
                if last:
                    raise error_class(
                        f"{method} {url} failed: {type(exc).__name__}: {exc}; is the "
                        "server running and the URL right?"
                    ) from exc
                await asyncio.sleep(0.2 * 2**attempt)
                continue
            if response.status_code in _RETRY_STATUSES and not last:
                await asyncio.sleep(_retry_after(response, 0.2 * 2**attempt))
                continue
            if response.status_code == 404 and allow_404:
                return None
            if response.status_code >= 400:
                raise error_class(
                    f"{method} {url} answered {response.status_code}: {_message(response)}",
                    status_code=response.status_code,
                )
            if raw:
                return response.content
            return response.json() if response.content else None
        raise AssertionError("unreachable")  # pragma: no cover

    # -- writes: delivered, or spooled ----------------------------------------------

    def _project(self) -> str | None:
        """The project this store names (``None``: the server's choice)."""
        return self.project or os.environ.get("SCENARIST_PROJECT", "").strip() or None

    async def _send(self, kind: UploadKind, payload_id: str, body: Any) -> tuple[Any, Path | None]:
        """Deliver one upload (POSTed to its kind's route); on a delivery failure spool it
        (unless strict). Returns the server's answer, or ``None`` and the spool file."""
        project = self._project()
        try:
            answer = await self._request(
                "POST", upload_path(kind, body), body=body, project=project
            )
        except SendError as exc:
            if self.raise_on_send_failure or not _undelivered(exc):
                raise
            upload = SpooledUpload(
                kind=kind, payload_id=payload_id, origin=self.origin, project=project,
                body=body, reason=str(exc),
            )  # fmt: skip
            spooled = self.spool.put(upload)
            self.spooled.append(spooled)
            logger.warning(
                "scenarist: could not upload %s %r (%s); kept in %s, run `scenarist sync` "
                "to send it",
                kind.replace("_", " "), payload_id, exc, spooled,
            )  # fmt: skip
            return None, spooled
        if not self._spool_synced:
            self._spool_synced = True
            await self._sync_own_spool()
        return answer, None

    async def _sync_own_spool(self) -> None:
        """Send what earlier runs spooled for this server (the server is up again)."""
        try:
            result = await sync_spool(self)
        except Exception as exc:  # a broken spool must not break the run that found it
            logger.warning("scenarist: could not send spooled uploads: %s", exc)
            return
        if result.busy:  # another sync is sending them
            return
        if result.sent or result.rejected or result.untrusted or result.error:
            logger.warning("scenarist: %s", result.summary())

    async def send_upload(self, upload: SpooledUpload) -> Any:
        """Send a spooled upload once more, to its kind's route with its project
        (retried, never spooled again). It must have been spooled for this server or
        named on purpose: :func:`~scenarist.store.spool.sync_spool` checks that."""
        path = upload_path(upload.kind, upload.body)
        return await self._request("POST", path, body=upload.body, project=upload.project)

    async def sync(
        self, *, from_servers: Iterable[str] = (), retry_rejected: bool = False
    ) -> SyncResult:
        """Send the uploads spooled for this server (and for ``from_servers``, named on
        purpose) to it, oldest first (see :func:`~scenarist.store.spool.sync_spool`)."""
        self._spool_synced = True
        return await sync_spool(self, from_servers=from_servers, retry_rejected=retry_rejected)

    async def save_trace(self, record: TraceRecord) -> None:
        from scenarist.model.veval_wire import to_veval

        await self._send("trace", record.trace_id, to_veval(record))

    async def get_trace(self, trace_id: str) -> TraceRecord | None:
        from scenarist.model.veval_wire import from_veval

        data = await self._request("GET", f"/v1/traces/{_name(trace_id)}", allow_404=True)
        return None if data is None else from_veval(data)

    async def search_traces(
        self,
        *,
        agent_name: str | None = None,
        status: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
        since: datetime | None = None,
        until: datetime | None = None,
        min_cost: float | None = None,
        max_cost: float | None = None,
        replay: bool | None = None,
        text: str | None = None,
        previews: bool = False,
    ) -> Page[TraceSummary]:
        """The server's traces (``GET /api/traces``), as ``SqlStore.search_traces``."""
        params = {
            "agent_name": agent_name,
            "status": status,
            "cursor": cursor,
            "limit": limit,
            "since": since.isoformat() if since is not None else None,
            "until": until.isoformat() if until is not None else None,
            "min_cost": min_cost,
            "max_cost": max_cost,
            "replay": None if replay is None else str(replay).lower(),
            "q": text,
            "previews": "true" if previews else None,
        }
        data = await self._request(
            "GET", "/api/traces", params={k: v for k, v in params.items() if v is not None}
        )
        return Page[TraceSummary].model_validate(data)

    async def save_scenario_run(self, run: ScenarioRunRecord) -> None:
        await self._send("scenario_run", run.run_id, _json(run))

    async def list_scenario_runs(self, scenario_name: str) -> list[ScenarioRunRecord]:
        runs: list[ScenarioRunRecord] = []
        params: dict[str, Any] = {"limit": 500}
        while True:
            page = await self._request(
                "GET", f"/v1/scenarios/{_name(scenario_name)}/runs", params=params
            )
            runs.extend(ScenarioRunRecord.model_validate(r) for r in page["items"])
            if not page.get("next_cursor"):
                return runs
            params["cursor"] = page["next_cursor"]

    async def get_items(self, scenario_name: str) -> list[ScenarioItem]:
        data = await self._request("GET", f"/v1/scenarios/{_name(scenario_name)}/items")
        return [ScenarioItem.model_validate(item) for item in data["items"]]

    async def save_items(self, scenario_name: str, items: list[ScenarioItem]) -> None:
        body = {"items": [_json(item) for item in items]}
        await self._request("PUT", f"/v1/scenarios/{_name(scenario_name)}/items", body=body)

    async def save_snapshot(self, name: str, snapshot: SnapshotData) -> None:
        body = {"name": name, "snapshot": _json(snapshot)}
        payload_id = f"{name}\0{json.dumps(body['snapshot'], sort_keys=True)}"
        await self._send("snapshot", payload_id, body)

    async def upload_run_log(self, source: RunLog | str | os.PathLike[str]) -> UploadResult:
        """Upload a run log (a :class:`~scenarist.formats.runlog.RunLog` or a JSON Lines file).

        A file without a footer (an interrupted run) is uploaded as an incomplete run; a
        last line cut off mid-write is left out. Uploading the complete log later replaces
        the incomplete run; the same log twice is stored once.
        """
        if isinstance(source, str | os.PathLike):
            from scenarist.formats.runlog import read_jsonl

            source = read_jsonl(source, require_run_id=True)
            for note in source.notes:
                logger.warning("%s", note)
        from scenarist._jsonable import dump_data

        body = dump_data(source)
        run_id = source.header.run_id
        footer = source.footer
        scenarios = source.scenarios
        answer, spooled = await self._send("run_log", run_id, body)
        return UploadResult(
            run_id=run_id,
            created=None if answer is None else bool(answer.get("created")),
            complete=footer is not None,
            scenario_count=len(scenarios),
            spooled=None if spooled is None else str(spooled),
        )

    async def get_run_log(self, run_id: str) -> RunLog | None:
        """The run log of the server's suite run ``run_id`` (``GET /api/runs/{id}/log``),
        decoded as a file is; ``None`` when the project holds no such run."""
        from scenarist.formats.runlog import decode_bytes

        data = await self._request(
            "GET", f"/api/runs/{_name(run_id)}/log", allow_404=True, raw=True
        )
        if data is None:
            return None
        return decode_bytes(data, source=f"run {run_id!r} on {self.base_url}")

    async def get_snapshot(self, name: str) -> SnapshotData | None:
        from scenarist.replay.snapshots import SnapshotData

        data = await self._request("GET", f"/v1/snapshots/{_name(name)}", allow_404=True)
        return None if data is None else SnapshotData.model_validate(data)


def _undelivered(error: SendError) -> bool:
    """The server never took the payload (no answer, or one worth retrying later)."""
    return error.status_code is None or error.status_code in _RETRY_STATUSES


def _retry_after(response: Any, default: float) -> float:
    """The server's ``X-Retry-After-Ms`` (exact) or ``Retry-After`` (seconds), capped."""
    exact = response.headers.get("x-retry-after-ms")
    value = response.headers.get("retry-after")
    try:
        if exact is not None:
            return min(float(exact) / 1000, 10.0)
        return min(float(value), 10.0) if value is not None else default
    except ValueError:
        return default


def read_run_log_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of a run log file as JSON objects, read through the one codec
    (:func:`scenarist.formats.runlog.read_jsonl`: migrated, validated; a last line cut off
    mid-write is left out)."""
    from scenarist._jsonable import dump_data
    from scenarist.formats.runlog import read_jsonl

    log = read_jsonl(path, require_run_id=True)
    return [dump_data(record) for record in log.records()]


def _message(response: Any) -> str:
    try:
        return str(response.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return json.dumps(response.text[:300])
