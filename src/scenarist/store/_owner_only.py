"""Folders and files only their owner can read: what scenarist keeps under its home.

Run logs, the spool, the database and the session secret hold agent inputs and outputs,
traces and API key hashes. Folders scenarist creates are ``0700`` and the database file
``0600`` whatever the umask lets through (SQLite gives its ``-wal`` and ``-shm`` files the
database file's mode, so creating that file first is enough). Folders and files that
already exist keep their mode: the user chose it (a team may share a folder on purpose).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["owner_only_dir", "owner_only_file"]


def owner_only_dir(path: str | os.PathLike[str]) -> Path:
    """``path`` as a folder (``mkdir -p``), each folder this call creates ``0700``."""
    folder = Path(path)
    missing: list[Path] = []
    current = folder
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for created in reversed(missing):
        try:
            created.mkdir(mode=0o700)
        except FileExistsError:  # made meanwhile by another process: theirs to keep
            continue
    if not folder.is_dir():
        raise NotADirectoryError(f"{folder} exists and is not a folder")
    return folder


def owner_only_file(path: str | os.PathLike[str]) -> Path:
    """``path`` created empty with mode ``0600`` when it does not exist yet."""
    file = Path(path)
    try:
        handle = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return file
    os.close(handle)
    return file
