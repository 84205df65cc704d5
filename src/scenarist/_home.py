"""``$SCENARIST_HOME``: the one folder scenarist keeps its files in (the database, run
logs, the upload spool, saved judge calibrations). A shared leaf: judges and the CLI find
it without reaching into the store layer."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["scenarist_home"]


def scenarist_home() -> Path:
    """``$SCENARIST_HOME``, default ``./.scenarist``."""
    return Path(os.environ.get("SCENARIST_HOME") or ".scenarist")
