"""Store tests: each has its own ``SCENARIST_HOME``; the remote store and the spool talk to
a real server (``live_server``, shared with the server tests)."""

from __future__ import annotations

from tests.server.conftest import _private_home, live_server

__all__ = ["_private_home", "live_server"]
