"""Where the CLI keeps run logs: ``$SCENARIST_HOME/runs/<run_id>.jsonl``.

``SCENARIST_HOME`` defaults to ``.scenarist`` in the working directory, the folder of the
database (:mod:`scenarist.store.location`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from scenarist.errors import UserError
from scenarist.runlog import RunLog, read_jsonl, write_jsonl

__all__ = ["find_run_log", "load_run_log", "runs_dir", "save_run_log", "store_in_local_database"]


def runs_dir() -> Path:
    """The runs folder, made owner-only (``0700``) when it does not exist yet."""
    from scenarist._owner_only import owner_only_dir
    from scenarist.store.location import scenarist_home

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


def load_run_log(reference: str, *, exclude: str | None = None) -> RunLog:
    """The run log ``reference`` names (see :func:`find_run_log`); what reading it left out
    (a last line cut off mid-write) is noted on stderr."""
    log = read_jsonl(find_run_log(reference, exclude=exclude))
    for note in log.notes:
        sys.stderr.write(f"note: {note}\n")
    return log


def save_run_log(log: RunLog, path: Path) -> None:
    """Write ``log`` atomically (a reader never sees half a file)."""
    partial = path.with_name(f".{path.name}.partial")
    write_jsonl(log, partial)
    os.replace(partial, path)


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
