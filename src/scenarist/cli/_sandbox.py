"""``scenarist run --replay --sandbox``: the run again, inside a network namespace whose
only interface is loopback (Linux), so that not even a child process or ``curl`` can
reach another machine.

The command is started again as ``unshare -n`` (with ``-r``, a user namespace mapping the
caller to root, when not root) running ``ip link set lo up`` and then this same
``scenarist`` command, marked with ``SCENARIST_SANDBOX=netns``; this process waits and
exits with its code. Inside, :func:`~scenarist.tracing.http._sandbox.sandboxed` checks
the kernel's list of interfaces before the run certifies ``sandboxed``. Where a namespace
cannot be made, :func:`problem` says why and what to do: the run never goes on
unsandboxed when a sandbox was asked for.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

from scenarist.errors import UserError
from scenarist.tracing.http._sandbox import MARK, interfaces, sandboxed

__all__ = ["enter", "problem"]

_FIX = (
    "run on Linux with util-linux's `unshare` and iproute2's `ip`, where user namespaces "
    "are allowed (sysctl kernel.unprivileged_userns_clone=1, or a container started with "
    "--cap-add SYS_ADMIN / --privileged), or drop --sandbox (the in-process guarantee)"
)


def _unshare() -> list[str]:
    return ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-r", "-n"]


def problem() -> str | None:
    """Why a network namespace cannot be made here (``None``: it can)."""
    if not sys.platform.startswith("linux"):
        return f"network namespaces are Linux only (this is {sys.platform})"
    missing = [tool for tool in ("unshare", "ip") if shutil.which(tool) is None]
    if missing:
        return f"{' and '.join(f'`{t}`' for t in missing)} not found on PATH"
    probe = subprocess.run(
        [*_unshare(), "sh", "-c", "ip link set lo up"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        why = probe.stderr.strip() or f"exit {probe.returncode}"
        return f"`{' '.join(_unshare())}` is not allowed here ({why})"
    return None


def enter(argv: list[str]) -> int:
    """Run ``scenarist <argv>`` in the sandbox and return its exit code; raise
    :class:`UserError` when this process claims the sandbox but is not in one, or when
    no sandbox can be made."""
    if os.environ.get(MARK):
        if not sandboxed():
            seen = ", ".join(interfaces()) or "none readable"
            raise UserError(
                f"{MARK} is set but the kernel does not show loopback as this process's only "
                f"network interface (interfaces: {seen}): it is not in scenarist's sandbox; "
                f"unset {MARK} and run with --sandbox"
            )
        return -1  # already inside: run here
    why = problem()
    if why is not None:
        raise UserError(f"--sandbox cannot isolate the run: {why}; fix: {_FIX}")
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "scenarist", *argv])
    env = dict(os.environ, **{MARK: "netns"})
    child = subprocess.Popen(
        [*_unshare(), "sh", "-c", f"ip link set lo up && exec {command}"], env=env
    )
    try:
        return child.wait()
    except KeyboardInterrupt:  # the terminal's Ctrl-C reached the sandboxed run too
        return child.wait()  # its verdict (INTERRUPTED, exit 130) is the one printed
