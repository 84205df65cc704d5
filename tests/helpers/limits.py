"""The one limit the tests put on a wait that only a hang can reach.

A test that waits (a subprocess, a server starting, a thread, a marker file, a barrier)
guards against a hang with ``HANG_S``, never with a figure sized to the work: the suite
runs on shared 2-core machines beside other jobs (``make check`` with two busy loops,
mypy and four workers), where a child Python that takes 20 s quiet took over 110 s.
``HANG_S`` is long enough that a machine four times slower than that never reaches it, so
reaching it means something hung. Speed is measured in ``bench/``, never in a test; a test
about a timeout uses a target that waits for an event never set, so its verdict cannot
change with the machine's speed.

pytest-timeout's per-test limit (``timeout`` in ``pyproject.toml``) is longer than
``HANG_S``: a wait that hangs reports itself first, with what the child printed.
"""

from __future__ import annotations

__all__ = ["HANG_MS", "HANG_S"]

HANG_S = 600.0
HANG_MS = int(HANG_S * 1000)
