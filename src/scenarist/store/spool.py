"""The upload spool: payloads a server could not take, kept on disk until it can.

When ``RemoteStore`` cannot deliver a write (the server is down, times out, or answers
429/5xx after the retries), the request is written here instead of being lost: one JSON
file per payload in ``$SCENARIST_HOME/spool/`` (``SCENARIST_HOME`` defaults to
``./.scenarist``), written atomically (a temporary file renamed into place), named
``<time ns>-<kind>-<digest of the payload id>.json`` so files sort in the order they were
spooled and a newer payload with the same id (a trace saved again, a run log completed
after an interrupted upload) replaces the older file instead of joining it.

:func:`sync_spool` re-sends the files in order and deletes each only once the server
acknowledged it. Re-sending is safe because every payload carries its id (trace id, run
id, snapshot content) and the server stores each id once: a payload whose
acknowledgement was lost and is sent again is still counted once. A payload the server
refuses for good (400, 413, 422) is moved to ``spool/rejected/`` so it cannot block the
rest; nothing is ever deleted without an acknowledgement.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from scenarist.errors import SendError
from scenarist.store._owner_only import owner_only_dir

if TYPE_CHECKING:
    from scenarist.store.remote import RemoteStore

__all__ = ["Spool", "SpooledPayload", "SyncResult", "default_spool_dir", "sync_spool"]

SPOOL_FORMAT = 1
PayloadKind = Literal["trace", "scenario_run", "run_log", "snapshot"]
_REFUSED_FOR_GOOD = {400, 404, 405, 409, 413, 415, 422}


def default_spool_dir() -> Path:
    """``$SCENARIST_HOME/spool`` (``./.scenarist/spool`` by default), absolute."""
    return (Path(os.environ.get("SCENARIST_HOME") or ".scenarist") / "spool").resolve()


class SpooledPayload(BaseModel):
    """One request that could not be delivered, as stored in its spool file."""

    spool_format: int = SPOOL_FORMAT
    kind: PayloadKind
    payload_id: str
    method: str
    path: str
    body: Any = None
    server_url: str | None = None
    spooled_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    reason: str = ""


class SyncResult(BaseModel):
    """What :func:`sync_spool` did: files sent (and deleted), refused, still waiting."""

    sent: list[str] = Field(default_factory=list)
    rejected: list[str] = Field(default_factory=list)
    remaining: int = 0
    error: str | None = None

    def summary(self) -> str:
        line = f"sent {len(self.sent)} spooled payload(s), {self.remaining} still spooled"
        if self.rejected:
            line += f", {len(self.rejected)} refused by the server (moved to spool/rejected/)"
        return line + (f": {self.error}" if self.error else "")


def _digest(kind: str, payload_id: str) -> str:
    return hashlib.sha256(f"{kind}\0{payload_id}".encode()).hexdigest()[:24]


class Spool:
    """A spool folder (created on first write)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_spool_dir()

    def put(self, payload: SpooledPayload) -> Path:
        """Write ``payload`` atomically; replaces an older file of the same kind and id."""
        owner_only_dir(self.directory)
        suffix = f"-{payload.kind}-{_digest(payload.kind, payload.payload_id)}.json"
        older = list(self.directory.glob(f"*{suffix}"))
        target = self.directory / f"{time.time_ns():020d}{suffix}"
        text = payload.model_dump_json()
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        for path in older:
            if path != target:
                path.unlink(missing_ok=True)
        return target

    def pending(self) -> list[Path]:
        """Spooled files, oldest first (temporary files of a write in progress left out)."""
        if not self.directory.is_dir():
            return []
        return sorted(
            p for p in self.directory.glob("*.json") if p.is_file() and not p.name.startswith(".")
        )

    def read(self, path: Path) -> SpooledPayload:
        return SpooledPayload.model_validate_json(path.read_text(encoding="utf-8"))

    def reject(self, path: Path) -> Path:
        """Move a file the server refused for good to ``rejected/``."""
        folder = owner_only_dir(self.directory / "rejected")
        target = folder / path.name
        os.replace(path, target)
        return target


async def sync_spool(
    store: RemoteStore, spool: Spool | None = None, *, server_url: str | None = None
) -> SyncResult:
    """Send every spooled payload through ``store``, oldest first (with ``server_url``,
    only those that were meant for that server).

    Each file is deleted only after the server acknowledged it. A delivery failure (the
    server still down, 5xx or 429 after the retries) stops the pass: what is left stays
    for next time. A refusal for good moves the file to ``rejected/`` and goes on.
    """
    spool = spool or store.spool
    result = SyncResult()
    paths = spool.pending()
    for path in paths:
        try:
            payload = spool.read(path)
        except FileNotFoundError:  # another sync sent it meanwhile
            continue
        except ValueError:
            result.rejected.append(str(spool.reject(path)))
            continue
        if server_url is not None and payload.server_url != server_url:
            continue
        try:
            await store.send_payload(payload)
        except SendError as exc:
            if exc.status_code in _REFUSED_FOR_GOOD:
                result.rejected.append(str(spool.reject(path)))
                continue
            result.error = str(exc)
            break
        path.unlink(missing_ok=True)
        result.sent.append(path.name)
    result.remaining = len(spool.pending())
    return result
