"""``RemoteStore``: the :class:`~scenarist.store.Store` protocol over a scenarist server's
HTTP API, so a client keeps its runs on a shared server::

    client = Client(store=RemoteStore("http://scenarist.internal:8480", api_key="sk_scen_..."))

It uses httpx2 (httpx when httpx2 is missing), imported on first use. Each operation opens
its own connection, so one store serves the fresh event loops of the sync wrappers.
Requests answered 429 or 5xx, or that fail to connect, are retried (``retries`` times,
with backoff, honouring ``Retry-After`` up to 10 s); then a write raises
:class:`~scenarist.errors.SendError` and a read :class:`~scenarist.errors.RequestError`.
A read of something the server does not have (404) is ``None``, as the protocol says.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from scenarist._jsonable import to_json_value
from scenarist.errors import RequestError, SendError
from scenarist.items import ScenarioItem, ScenarioRunRecord
from scenarist.tracing.record import TraceRecord

if TYPE_CHECKING:
    from scenarist.replay.snapshots import SnapshotData

__all__ = ["RemoteStore"]

_RETRY_STATUSES = {429, 500, 502, 503, 504}


def _http() -> Any:
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
            "run: pip install 'scenarist[server]'"
        ) from exc


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
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.retries = retries
        self._transport = transport  # tests: an ASGI or mock transport

    async def _request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
        allow_404: bool = False,
    ) -> Any:
        http = _http()
        error_class = RequestError if method == "GET" else SendError
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        options: dict[str, Any] = {"timeout": self.timeout_s, "headers": headers}
        if self._transport is not None:
            options["transport"] = self._transport
        url = f"{self.base_url}{path}"
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
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
            return response.json() if response.content else None
        raise AssertionError("unreachable")  # pragma: no cover

    async def save_trace(self, record: TraceRecord) -> None:
        from scenarist.tracing.veval_wire import to_veval

        await self._request("POST", "/v1/traces", body=to_veval(record))

    async def get_trace(self, trace_id: str) -> TraceRecord | None:
        from scenarist.tracing.veval_wire import from_veval

        data = await self._request("GET", f"/v1/traces/{_name(trace_id)}", allow_404=True)
        return None if data is None else from_veval(data)

    async def save_scenario_run(self, run: ScenarioRunRecord) -> None:
        path = f"/v1/scenarios/{_name(run.scenario_name)}/runs"
        await self._request("POST", path, body=_json(run))

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
        await self._request(
            "POST", "/v1/snapshots", body={"name": name, "snapshot": _json(snapshot)}
        )

    async def get_snapshot(self, name: str) -> SnapshotData | None:
        from scenarist.replay.snapshots import SnapshotData

        data = await self._request("GET", f"/v1/snapshots/{_name(name)}", allow_404=True)
        return None if data is None else SnapshotData.model_validate(data)


def _retry_after(response: Any, default: float) -> float:
    value = response.headers.get("retry-after")
    try:
        return min(float(value), 10.0) if value is not None else default
    except ValueError:
        return default


def _message(response: Any) -> str:
    try:
        return str(response.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return json.dumps(response.text[:300])
