"""Sending a run to the server while it runs (``scenarist run`` with ``SCENARIST_URL``).

The header goes first (``POST /api/runs``, no scenarios, no footer: the dashboard shows
the run as running), then the scenario records in batches (``POST /api/runs/{id}/records``:
every ``batch_size`` records or ``interval_s`` seconds, whichever comes first), from a
background thread so a slow server never slows the run. At the end the client sends the
whole run log as before (it completes the run: a complete log replaces the incomplete one,
so a part lost on the way leaves no hole), and spools it when the server is down. A run
that dies keeps on the server every batch sent before.

Live sending is best effort: the first failure stops it (``failed`` says why) and the run
goes on; the final upload is what must arrive.
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scenarist.formats.runlog import RunLogFooter, RunLogHeader, ScenarioRecord
    from scenarist.store.remote import RemoteStore

__all__ = ["LiveUpload"]

_STOP = object()


class LiveUpload:
    """``start(header)``, ``add(record)`` per finished scenario, ``finish()``."""

    def __init__(self, store: RemoteStore, *, batch_size: int = 50, interval_s: float = 2.0):
        self._store = store
        self._batch_size = batch_size
        self._interval_s = interval_s
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._run_id: str | None = None
        self.failed: str | None = None
        """Why live sending stopped (``None``: every part was delivered)."""
        self.sent = 0
        """Scenario records delivered."""

    def start(self, header: RunLogHeader) -> None:
        from scenarist._jsonable import to_json_value

        self._run_id = header.run_id
        body = {"header": to_json_value(header.model_dump()), "scenarios": []}
        self._queue.put(("header", body))
        self._thread = threading.Thread(target=self._work, name="scenarist-live", daemon=True)
        self._thread.start()

    def add(self, record: ScenarioRecord) -> None:
        from scenarist.formats.runlog import record_json

        if self._thread is not None and self.failed is None:
            self._queue.put(("record", json.loads(record_json(record))))

    def finish(self, footer: RunLogFooter | None = None, *, timeout_s: float = 30.0) -> None:
        """Send what is pending (and ``footer``, which completes the run), then stop."""
        if self._thread is None:
            return
        if footer is not None:
            self._queue.put(("footer", footer.model_dump(mode="json")))
        self._queue.put(_STOP)
        self._thread.join(timeout_s)
        self._thread = None

    def _post(self, path: str, body: Any) -> None:
        if self.failed is not None:
            return
        try:
            asyncio.run(self._store._request("POST", path, body=body))
        except Exception as exc:  # best effort: the final upload still carries the run
            self.failed = str(exc)

    def _records_path(self) -> str:
        from urllib.parse import quote

        return f"/api/runs/{quote(self._run_id or '', safe='')}/records"

    def _work(self) -> None:
        pending: list[Any] = []
        started = 0.0
        while True:
            wait = None if not pending else max(0.0, started + self._interval_s - time.monotonic())
            try:
                item = self._queue.get(timeout=wait)
            except queue.Empty:
                item = None
            if item is _STOP:
                if pending:
                    self._post(self._records_path(), {"scenarios": pending})
                return
            if item is not None:
                kind, body = item
                if kind == "header":
                    self._post("/api/runs", body)
                    continue
                if kind == "footer":
                    self._post(self._records_path(), {"scenarios": pending, "footer": body})
                    self.sent += len(pending) if self.failed is None else 0
                    pending = []
                    continue
                if not pending:
                    started = time.monotonic()
                pending.append(body)
            full = len(pending) >= self._batch_size
            due = pending and time.monotonic() >= started + self._interval_s
            if full or due:
                self._post(self._records_path(), {"scenarios": pending})
                self.sent += len(pending) if self.failed is None else 0
                pending = []
