"""Whether this process runs in scenarist's network sandbox, and so which guarantee a
strict replay gives (:class:`~scenarist.model.certificate.ReplayCertificate`).

``scenarist run --replay --sandbox`` starts the run again inside a new network namespace
(``unshare -n``, with a user namespace when not root) whose only interface is loopback,
and marks it with ``SCENARIST_SANDBOX=netns``. The mark alone proves nothing (anyone can
set a variable): :func:`sandboxed` also asks the kernel which interfaces this process's
namespace has, and says yes only when loopback is all there is. Then no process of the
run (a child ``python``, ``curl``) can reach another machine; loopback still works (a
local fake provider, a test database), so the sandbox proves that no traffic left the
machine, while the in-process guards prove that no LLM call left this process.
"""

from __future__ import annotations

import os
from functools import lru_cache

from scenarist.model.certificate import Guarantee

__all__ = ["MARK", "guarantee", "interfaces", "sandboxed"]

MARK = "SCENARIST_SANDBOX"
"""Set to ``netns`` in the sandboxed run's environment."""


def interfaces() -> list[str]:
    """The network interfaces of this process's namespace (``[]`` where unknown)."""
    import socket

    try:
        return [name for _, name in socket.if_nameindex()]
    except (OSError, AttributeError):  # no netlink (a restricted container), not Linux
        return []


@lru_cache(maxsize=1)
def sandboxed() -> bool:
    """Marked as the sandbox, and loopback is the only interface the kernel shows."""
    names = interfaces()
    return os.environ.get(MARK) == "netns" and names == ["lo"]


def guarantee(strict: bool) -> Guarantee:
    """The guarantee of a replay: ``none`` unless strict, else in-process or sandboxed."""
    if not strict:
        return "none"
    return "sandboxed" if sandboxed() else "in-process"
