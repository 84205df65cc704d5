"""Where the CLI keeps run logs: ``$SCENARIST_HOME/runs/<run_id>.jsonl``.

``SCENARIST_HOME`` defaults to ``.scenarist`` in the working directory, the folder of the
database (:mod:`scenarist.store.location`). When a run's results cannot be kept (a full
disk, a read-only folder, a locked database), :func:`write_problem` and
:func:`database_problem` give the one line that says which file, why, and what to do.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from scenarist.errors import UserError
from scenarist.formats.runlog import RunLog, read_jsonl, write_jsonl

if TYPE_CHECKING:
    from scenarist.store.sql.store import SqlStore

__all__ = [
    "HOME_FIX",
    "database_problem",
    "find_run_log",
    "load_run_log",
    "runs_dir",
    "save_run_log",
    "store_in_local_database",
    "write_problem",
]

HOME_FIX = "set SCENARIST_HOME to a writable folder (it holds the run logs and the database)"


def runs_dir() -> Path:
    """The runs folder, made owner-only (``0700``) when it does not exist yet."""
    from scenarist._home import scenarist_home
    from scenarist.store._owner_only import owner_only_dir

    folder = scenarist_home() / "runs"
    with contextlib.suppress(OSError):  # unwritable: reading works, a write says why
        owner_only_dir(folder)
    return folder


def find_run_log(reference: str, *, exclude: str | None = None) -> Path:
    """A run log path from a file path, a run id in the runs folder, or ``last``."""
    if reference == "last":
        logs = [p for p in runs_dir().glob("*.jsonl") if p.stem != exclude]
        if not logs:
            raise UserError(
                f"no previous run in {runs_dir()}; run `scenarist run` once first, or give "
                "a run log file"
            )
        return max(logs, key=lambda p: (p.stat().st_mtime_ns, p.name))
    path = Path(reference)
    if path.is_file():
        return path
    stored = runs_dir() / f"{reference}.jsonl"
    if stored.is_file():
        return stored
    raise UserError(
        f"{reference!r} is neither a run log file nor a run id in {runs_dir()}; check it, "
        "or use 'last'"
    )


def load_run_log(
    reference: str, *, exclude: str | None = None, project: str | None = None
) -> RunLog:
    """The run log ``reference`` names (see :func:`find_run_log`); a run id whose file is
    not in the runs folder is read from the database (:func:`stored_run_log`: the server
    at ``SCENARIST_URL`` when it is set, else the local one, in ``project``). What reading
    it left out (a last line cut off mid-write) is noted on stderr."""
    try:
        log = read_jsonl(find_run_log(reference, exclude=exclude))
    except UserError:
        if reference == "last" or not _could_be_run_id(reference):
            raise
        log = stored_run_log(reference, project)
    for note in log.notes:
        sys.stderr.write(f"note: {note}\n")
    return log


def _could_be_run_id(reference: str) -> bool:
    """Not a file path: no folder separator, no ``.jsonl`` suffix."""
    return not ("/" in reference or os.sep in reference or reference.endswith(".jsonl"))


def stored_run_log(run_id: str, project: str | None) -> RunLog:
    """Run ``run_id`` rebuilt from the database: each scenario's full record and the run's
    header and footer are kept there (``GET /api/runs/{id}/log`` on a server). Not found:
    a ``UserError`` saying where it was looked for, and the project that holds it when
    another local project does."""
    from scenarist._sync import run_sync

    missing = f"{run_id!r} is neither a run log file, a run id in {runs_dir()},"

    url = os.environ.get("SCENARIST_URL")
    if url:
        from scenarist.store.remote import RemoteStore

        remote = RemoteStore(url, os.environ.get("SCENARIST_API_KEY"), project=project)
        found = run_sync(remote.get_run_log, run_id)
        if found is not None:
            return found
        shown = f"project {project!r}" if project else "the key's project"
        raise UserError(
            f"{missing} nor a run of {shown} on the server {url}; name its project with "
            "--project NAME"
        )
    from scenarist.formats.runlog import decode_text
    from scenarist.store.location import database_label, resolve_database_url

    resolved = resolve_database_url()
    label = database_label()
    if resolved.startswith("sqlite") and not Path(label).is_file():
        raise UserError(f"{missing} nor in a database (there is none at {label}); check it")
    from scenarist.store.default import default_store

    store = default_store(project)
    text = run_sync(store.run_log_text, run_id)
    if text is not None:
        return decode_text(text, source=f"run {run_id!r} in the database {label}")
    hint = "; check the id, or use 'last'"
    for name in run_sync(store.list_projects):
        if name != store.project and _holds(store.scoped(name), run_id):
            hint = f"; it is in project {name!r}: add --project {name}"
            break
    raise UserError(f"{missing} nor a run of project {store.project!r} in {label}{hint}")


def save_run_log(log: RunLog, path: Path) -> None:
    """Write ``log`` atomically (a reader never sees half a file)."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        write_jsonl(log, partial)
        os.replace(partial, path)
    except OSError:
        partial.unlink(missing_ok=True)  # a full disk must not keep half a file around
        raise


def store_in_local_database(log: RunLog) -> str:
    """Ingest ``log`` into the database ``Client()`` and ``scenarist serve`` use; return
    its label (a file path, or a URL without its password). Ingestion is idempotent, so a
    later upload of the same run never duplicates it."""
    from scenarist._sync import run_sync
    from scenarist.store.default import default_store
    from scenarist.store.location import database_label

    store = default_store()
    run_sync(store.ingest_run_log, log)
    return database_label(store.url)


def write_problem(what: str, path: object, exc: OSError, fix: str) -> str:
    """``cannot write the run log /x: No space left on device; <fix>`` (no traceback)."""
    return f"cannot write {what} {path}: {_os_reason(exc)}; {fix}"


def _os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def database_problem(exc: Exception, kept: Path | None) -> str | None:
    """The line for a run that could not be stored in the database (locked, full,
    read-only, a bad URL), or ``None`` for an exception that is not about the database.

    The driver's first line only: SQLAlchemy's full message carries the SQL and its
    parameters (the run's data), which is noise here and may be private.
    """
    from scenarist.store.location import database_label

    sqlalchemy_errors = sys.modules.get("sqlalchemy.exc")
    if isinstance(exc, OSError):
        reason = _os_reason(exc)
    elif isinstance(exc, UserError):
        reason = str(exc)
    elif sqlalchemy_errors is not None and isinstance(exc, sqlalchemy_errors.SQLAlchemyError):
        original = getattr(exc, "orig", None)
        text = str(original if original is not None else exc).strip()
        reason = (text.splitlines() or [type(exc).__name__])[0][:300]
    else:
        return None
    try:
        label = database_label()
    except UserError:
        label = "(SCENARIST_DATABASE_URL)"
    if "locked" in reason:
        fix = (
            "another program holds a write lock on it: run again when it is done, or set "
            "SCENARIST_DATABASE_URL to another database"
        )
    else:
        fix = (
            "check that it is writable and the disk has space, or set SCENARIST_DATABASE_URL "
            "to another database"
        )
    kept_note = f" (the run log is kept: {kept})" if kept is not None else ""
    return f"could not store the run in the database {label}: {reason}; {fix}{kept_note}"


def _holds(store: SqlStore, run_id: str) -> bool:
    from scenarist._sync import run_sync

    try:
        return run_sync(store.run_log_text, run_id) is not None
    except UserError:  # there, but a Veval-style run
        return True
