"""Watching the scenario runs a piece of code makes: ``scenarist run`` imports a file whose
module-level code calls ``run_scenario(..., items=...)`` and counts those runs' results
as it counts scenarios (``docs/design/cli.md``).

Every finished :class:`~scenarist.veval.results.ScenarioRunResult` is handed to each open
:func:`watching` block. A plain list behind a lock, not a context variable: the sync
``run_scenario`` may run its loop in another thread (``run_sync`` inside a running loop),
where a context variable set by the caller would not be seen.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scenarist.veval.results import ScenarioRunResult

__all__ = ["seen", "watching"]

_lock = threading.Lock()
_watchers: list[list[ScenarioRunResult]] = []


@contextmanager
def watching() -> Iterator[list[ScenarioRunResult]]:
    """The scenario runs that finish inside the block, in finishing order."""
    runs: list[ScenarioRunResult] = []
    with _lock:
        _watchers.append(runs)
    try:
        yield runs
    finally:
        with _lock:
            _watchers.remove(runs)


def seen(run: ScenarioRunResult) -> None:
    """Hand a finished run to every open :func:`watching` block."""
    with _lock:
        for runs in _watchers:
            runs.append(run)
