"""The upload spool: uploads a server could not take, kept on disk until it can.

When ``RemoteStore`` cannot deliver an upload (the server is down, times out, or answers
429/5xx after the retries), it is written here instead of being lost: one JSON file per
upload in ``$SCENARIST_HOME/spool/`` (``SCENARIST_HOME`` defaults to ``./.scenarist``),
written atomically (a temporary file renamed into place), named
``<time ns>-<kind>-<digest>.json`` so files sort in the order they were spooled and a
newer upload with the same id for the same server and project (a trace saved again, a run
log completed after an interrupted upload) replaces the older file instead of joining it.

A spooled upload is data, never a request: its kind (:data:`UploadKind`), its body, the
origin of the server it was meant for (fixed when it was spooled) and its project.
:func:`sync_spool` maps the kind to its one route itself (always a ``POST``), sends an
upload only to its own origin (another origin is named with ``from_servers``, on
purpose), with its project. A spool folder under the working directory is what a cloned
repository can ship, so every file is signed (HMAC-SHA256) with a secret of this
account kept outside it (:func:`spool_secret_path`): a file without a valid signature,
or in the old method-and-path format, is never sent; it is set aside in
``spool/rejected/`` and reported. ``docs/design/spool.md`` says why.

:func:`sync_spool` deletes each file only once the server acknowledged it. Re-sending is
safe because every upload carries its id (trace id, run id, snapshot content) and the
server stores each id once. An upload the server refuses for good (400, 403, 404, 405,
409, 413, 415, 422) is set aside in ``spool/rejected/`` with the reason reported, so it
is not retried for ever (``retry_rejected`` puts them back); a refused key (401) stops
the pass and sets nothing aside. One sync at a time holds the spool (a lock on its
folder); another finds it busy and sends nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scenarist.errors import SendError, UserError
from scenarist.store._owner_only import owner_only_dir

if TYPE_CHECKING:
    from scenarist.store.remote import RemoteStore

__all__ = [
    "SetAside",
    "Spool",
    "SpooledUpload",
    "SyncResult",
    "UploadKind",
    "default_spool_dir",
    "server_origin",
    "spool_secret_path",
    "sync_spool",
    "upload_path",
]

SPOOL_FORMAT: Literal[2] = 2
UploadKind = Literal["trace", "scenario_run", "run_log", "snapshot"]
# The one route of each kind, always POSTed: nothing in a spool file names a method or a path.
_ROUTES: dict[str, str] = {
    "trace": "/v1/traces",
    "scenario_run": "/v1/scenarios/{name}/runs",
    "run_log": "/api/runs",
    "snapshot": "/v1/snapshots",
}
_REFUSED_FOR_GOOD = {400, 403, 404, 405, 409, 413, 415, 422}
_SECRET_ENV = "SCENARIST_SPOOL_SECRET_FILE"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def default_spool_dir() -> Path:
    """``$SCENARIST_HOME/spool`` (``./.scenarist/spool`` by default), absolute."""
    return (Path(os.environ.get("SCENARIST_HOME") or ".scenarist") / "spool").resolve()


def spool_secret_path() -> Path:
    """Where this account's spool secret lives: ``$SCENARIST_SPOOL_SECRET_FILE``, else
    ``$XDG_CONFIG_HOME/scenarist/spool-secret`` (``~/.config/...``): outside any working
    directory, so a repository cannot ship it."""
    named = os.environ.get(_SECRET_ENV, "").strip()
    if named:
        return Path(named).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME", "").strip()
    try:
        base = Path(config) if config else Path.home() / ".config"
    except RuntimeError as exc:  # no home folder (some containers)
        raise UserError(
            f"the upload spool needs a secret outside the working directory and this "
            f"account has no home folder: set {_SECRET_ENV} to a file path (e.g. "
            "/var/lib/scenarist/spool-secret)"
        ) from exc
    return base / "scenarist" / "spool-secret"


def server_origin(url: str) -> str:
    """``url`` as the spool compares servers: ``scheme://host:port`` lowercased, with the
    port written out, plus the path prefix of a server mounted under one; no userinfo,
    query or fragment. A ``UserError`` for a URL that is not http(s) with a host."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise UserError(f"server URL {url!r} is not a URL: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise UserError(
            f"server URL {url!r} is not an http(s) URL with a host; use e.g. "
            "http://scenarist.internal:8480"
        )
    host = parts.hostname.lower()
    if ":" in host:  # IPv6
        host = f"[{host}]"
    prefix = parts.path.rstrip("/")
    return f"{scheme}://{host}:{port or _DEFAULT_PORTS[scheme]}{prefix}"


def upload_path(kind: str, body: Any) -> str:
    """The route an upload of ``kind`` is POSTed to. A scenario run's name (from its body)
    is percent-encoded whole, so it stays one path segment of that route."""
    route = _ROUTES.get(kind)
    if route is None:
        raise _Untrusted(f"unknown upload kind {kind!r}")
    if kind != "scenario_run":
        return route
    name = body.get("scenario_name") if isinstance(body, dict) else None
    if not isinstance(name, str) or not name or len(name) > 1000:
        raise _Untrusted("a scenario run without a valid scenario_name")
    return route.format(name=quote(name, safe=""))


class _Untrusted(ValueError):
    """A spool file that must not be sent: unreadable, old format, or not signed here."""


class _Busy(RuntimeError):
    """Another ``scenarist sync`` holds the spool."""


class SpooledUpload(BaseModel):
    """One upload that could not be delivered, as stored in its spool file (with its
    ``signature``, which :meth:`Spool.put` computes)."""

    model_config = ConfigDict(extra="forbid")

    spool_format: Literal[2] = SPOOL_FORMAT
    kind: UploadKind
    payload_id: str
    origin: str
    project: str | None = None  # None: the server's choice (the key's only project)
    body: Any = None
    spooled_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    reason: str = ""


class SetAside(BaseModel):
    """A spool file moved to ``rejected/``, and why."""

    file: str
    reason: str


class SyncResult(BaseModel):
    """What :func:`sync_spool` did: uploads sent (and deleted), set aside, still waiting."""

    origin: str = ""
    sent: list[str] = Field(default_factory=list)
    rejected: list[SetAside] = Field(default_factory=list)  # refused by the server
    untrusted: list[SetAside] = Field(default_factory=list)  # never sent
    other_origins: dict[str, int] = Field(default_factory=dict)  # kept for their server
    remaining: int = 0  # still waiting for this server
    error: str | None = None
    busy: bool = False

    @property
    def needs_attention(self) -> bool:
        """Something is left for this server or was set aside in this pass."""
        return bool(self.remaining or self.rejected or self.untrusted or self.error)

    def summary(self) -> str:
        lines = [f"sent {len(self.sent)} spooled payload(s), {self.remaining} still spooled"]
        if self.error:
            lines[0] += f": {self.error}"
        for item in self.untrusted:
            lines.append(f"not sent, set aside in spool/rejected/: {item.file}: {item.reason}")
        for item in self.rejected:
            lines.append(f"rejected by the server, set aside in spool/rejected/: {item.file}: "
                         f"{item.reason}")  # fmt: skip
        if self.rejected:
            lines.append(
                "once the key can send them, put them back with `scenarist sync --retry-rejected`"
            )
        for origin, count in sorted(self.other_origins.items()):
            lines.append(
                f"kept {count} upload(s) spooled for {origin}, not this server ({self.origin}): "
                f"send them there with `scenarist sync --url {origin}`, or here on purpose "
                f"with `scenarist sync --from-server {origin}`"
            )
        return "\n".join(lines)


def _canonical(document: dict[str, Any]) -> bytes:
    signed = [document.get(name) for name in
              ("spool_format", "kind", "payload_id", "origin", "project", "body")]  # fmt: skip
    return json.dumps(signed, sort_keys=True, separators=(",", ":")).encode()


def _digest(*parts: str | None) -> str:
    return hashlib.sha256("\0".join(p or "" for p in parts).encode()).hexdigest()[:24]


class Spool:
    """A spool folder (created on first write), signed with this account's secret."""

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        secret_file: str | os.PathLike[str] | None = None,
    ) -> None:
        self.directory = Path(directory) if directory is not None else default_spool_dir()
        self._secret_file = None if secret_file is None else Path(secret_file)

    @property
    def secret_file(self) -> Path:
        return self._secret_file or spool_secret_path()

    def _secret(self, *, create: bool) -> bytes | None:
        """The account's spool secret; made on first use when ``create`` (else ``None``
        when there is none)."""
        path = self.secret_file
        try:
            secret = path.read_bytes().strip()
        except FileNotFoundError:
            if not create:
                return None
            _make_secret(path)
            secret = path.read_bytes().strip()
        if not secret and create:
            raise UserError(
                f"the spool secret {path} is empty; delete it and a new one is made (files "
                "spooled with the old one can no longer be sent)"
            )
        return secret or None

    def _sign(self, document: dict[str, Any], secret: bytes) -> str:
        return hmac.new(secret, _canonical(document), hashlib.sha256).hexdigest()

    def put(self, upload: SpooledUpload) -> Path:
        """Write ``upload`` atomically and signed; replaces an older file of the same
        kind, id, server and project."""
        secret = self._secret(create=True)
        assert secret is not None  # made, or a UserError
        owner_only_dir(self.directory)
        digest = _digest(upload.kind, upload.payload_id, upload.origin, upload.project)
        suffix = f"-{upload.kind}-{digest}.json"
        older = list(self.directory.glob(f"*{suffix}"))
        target = self.directory / f"{time.time_ns():020d}{suffix}"
        # signed as it will be read back: JSON parsed, so the signature is of the same data
        document = json.loads(upload.model_dump_json())
        document["signature"] = self._sign(document, secret)
        text = json.dumps(document)
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

    def read(self, path: Path) -> SpooledUpload:
        """The upload in ``path``, checked: a ``ValueError`` (with the reason) for
        a file that must not be sent; ``FileNotFoundError`` when it is gone."""
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise _Untrusted(f"unreadable ({exc})") from exc
        if not isinstance(document, dict):
            raise _Untrusted("unreadable (not a JSON object)")
        if "method" in document or "path" in document:
            request = f"{document.get('method', '?')} {document.get('path', '?')}"
            raise _Untrusted(
                f"written by an older scenarist, or planted: it names a request "
                f"({request[:200]!r}) where a spooled upload names only its kind. If you "
                "spooled it yourself, upload that run again"
            )
        if document.get("spool_format") != SPOOL_FORMAT:
            raise _Untrusted(
                f"spool format {str(document.get('spool_format'))[:20]!r}, not "
                f"{SPOOL_FORMAT}: written by another scenarist version"
            )
        signature = document.pop("signature", None)
        secret = self._secret(create=False)
        if secret is None or not isinstance(signature, str):
            raise _Untrusted(
                f"no signature from this account's spool secret ({self.secret_file}): it "
                "was not spooled here (a file shipped with a repository, or copied from "
                "another account)"
            )
        if not hmac.compare_digest(signature, self._sign(document, secret)):
            raise _Untrusted(
                f"its signature does not match this account's spool secret "
                f"({self.secret_file}): it was not spooled here, or was changed since (a "
                "file shipped with a repository, or copied from another account)"
            )
        try:
            upload = SpooledUpload.model_validate(document)
            upload_path(upload.kind, upload.body)
        except ValidationError as exc:
            raise _Untrusted(f"unreadable ({exc.error_count()} invalid field(s))") from exc
        return upload

    def set_aside(self, path: Path) -> Path:
        """Move a file that will not be sent again as it is to ``rejected/``."""
        folder = owner_only_dir(self.directory / "rejected")
        target = folder / path.name
        os.replace(path, target)
        return target

    def retry_rejected(self) -> int:
        """Put the files of ``rejected/`` back in the spool (checked again when sent)."""
        folder = self.directory / "rejected"
        moved = 0
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                os.replace(path, self.directory / path.name)
            except FileNotFoundError:
                continue
            moved += 1
        return moved

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the spool for one sync; raises when another sync holds it. A lock
        on the folder itself (no lock file left behind), released by the system if the
        process dies. Without ``fcntl`` (not POSIX), one sync at a time is the user's."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not on POSIX
            yield
            return
        folder = os.open(owner_only_dir(self.directory), os.O_RDONLY)
        try:
            try:
                fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise _Busy(
                    f"another `scenarist sync` is sending the spool {self.directory} now; "
                    "nothing sent by this one (run it again when that one is done)"
                ) from exc
            try:
                yield
            finally:
                fcntl.flock(folder, fcntl.LOCK_UN)
        finally:
            os.close(folder)


async def sync_spool(
    store: RemoteStore,
    spool: Spool | None = None,
    *,
    from_servers: Iterable[str] = (),
    retry_rejected: bool = False,
) -> SyncResult:
    """Send the uploads spooled for ``store``'s server (and for ``from_servers``, named
    on purpose) to it, oldest first, each with its own project.

    Each file is deleted only after the server acknowledged it. A delivery failure (the
    server still down, 5xx or 429 after the retries) or a refused key (401) stops the
    pass: what is left stays for next time. A refusal of the upload itself (400, 403,
    404, 422...) sets it aside in ``rejected/`` and goes on; so does a file that must not
    be sent (:meth:`Spool.read`). Uploads for other servers are kept and counted.
    """
    spool = spool or store.spool
    result = SyncResult(origin=store.origin)
    accepted = {store.origin, *(server_origin(url) for url in from_servers)}
    if not spool.directory.is_dir():
        return result
    try:
        with spool.lock():
            if retry_rejected:
                spool.retry_rejected()
            await _send_all(store, spool, accepted, result)
    except _Busy as exc:
        result.busy = True
        result.error = str(exc)
        result.remaining = len(spool.pending())
    return result


async def _send_all(
    store: RemoteStore, spool: Spool, accepted: set[str], result: SyncResult
) -> None:
    stopped = False
    for path in spool.pending():
        try:
            upload = spool.read(path)
        except FileNotFoundError:  # replaced by a newer version meanwhile
            continue
        except _Untrusted as exc:
            if _set_aside(spool, path):
                result.untrusted.append(SetAside(file=path.name, reason=str(exc)))
            continue
        if upload.origin not in accepted:
            result.other_origins[upload.origin] = result.other_origins.get(upload.origin, 0) + 1
            continue
        if stopped:
            result.remaining += 1
            continue
        try:
            await store.send_upload(upload)
        except SendError as exc:
            if exc.status_code == 401:
                result.error = (
                    f"{exc}; the server refused the API key: check SCENARIST_API_KEY "
                    "(or --api-key); nothing was set aside"
                )
            elif exc.status_code in _REFUSED_FOR_GOOD:
                label = f"{upload.kind.replace('_', ' ')} {upload.payload_id[:80]!r}"
                where = f" for project {upload.project!r}" if upload.project else ""
                if _set_aside(spool, path):
                    result.rejected.append(
                        SetAside(file=path.name, reason=f"{label}{where}: {exc}")
                    )
                continue
            else:
                result.error = str(exc)
            stopped = True
            result.remaining += 1
            continue
        path.unlink(missing_ok=True)
        result.sent.append(path.name)


def _make_secret(path: Path) -> None:
    """32 random bytes (hex) in ``path``, mode ``0600``, unless another process made it
    first: written to a temporary file and hard-linked into place, so no process ever
    reads a half-written secret or replaces one already in use."""
    owner_only_dir(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")  # mode 0600
    try:
        with os.fdopen(handle, "w", encoding="ascii") as file:
            file.write(secrets.token_hex(32))
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: create-if-absent, then write
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                return
            with os.fdopen(fd, "w", encoding="ascii") as file:
                file.write(Path(temporary).read_text(encoding="ascii"))
    finally:
        Path(temporary).unlink(missing_ok=True)


def _set_aside(spool: Spool, path: Path) -> bool:
    """Move ``path`` to ``rejected/``; ``False`` when it is gone (a newer version of the
    same upload replaced it meanwhile: that one waits for its own turn)."""
    try:
        spool.set_aside(path)
    except FileNotFoundError:
        return False
    return True
