"""``scenarist run --replay --sandbox``: the run again, inside a network namespace whose
only interface is loopback (Linux), so that not even a child process or ``curl`` can
reach another machine.

The command is started again as ``unshare -n`` running ``ip link set lo up`` and then
this same ``scenarist`` command, marked with ``SCENARIST_SANDBOX=netns``; this process
waits and exits with its code. ``unshare -n`` needs ``CAP_SYS_ADMIN``: a user without it
(any user but root, and a root without it, as in a container's default) gets a user
namespace too (``unshare -r -n``: the caller mapped to root inside it, nothing more
outside), where the kernel allows unprivileged user namespaces. Inside,
:func:`~scenarist.tracing.http._sandbox.sandboxed` checks the kernel's list of
interfaces before the run certifies ``sandboxed``. Where no namespace can be made,
:func:`problem` says why (the kernel setting that forbids it, when one does) and what to
do: the run never goes on unsandboxed when a sandbox was asked for.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from scenarist.errors import UserError
from scenarist.tracing.http._sandbox import MARK, interfaces, sandboxed

__all__ = ["enter", "problem", "userns_blockers"]

_FIX = (
    "run on Linux with util-linux's `unshare` and iproute2's `ip`, as root or where user "
    "namespaces are allowed (sysctl user.max_user_namespaces > 0, "
    "kernel.unprivileged_userns_clone=1, kernel.apparmor_restrict_unprivileged_userns=0; "
    "in a container: --cap-add SYS_ADMIN / --privileged), or drop --sandbox (the "
    "in-process guarantee)"
)

_PLAIN = ["unshare", "-n"]
_MAPPED = ["unshare", "-r", "-n"]

#: sysctl (under /proc/sys) -> the value that forbids an unprivileged user namespace
_USERNS_SWITCHES = {
    "user/max_user_namespaces": "0",
    "kernel/unprivileged_userns_clone": "0",  # Debian, older Ubuntu
    "kernel/apparmor_restrict_unprivileged_userns": "1",  # Ubuntu 23.10+
}


def userns_blockers(proc_sys: Path = Path("/proc/sys")) -> list[str]:
    """The kernel settings that forbid this user a user namespace (``[]``: none known)."""
    found = []
    for name, forbids in _USERNS_SWITCHES.items():
        try:
            value = (proc_sys / name).read_text().strip()
        except OSError:  # not this kernel's setting
            continue
        if value == forbids:
            found.append(f"sysctl {name.replace('/', '.')} is {value}")
    return found


def _try(command: list[str]) -> str | None:
    """Why ``command`` cannot make a namespace with loopback up (``None``: it can)."""
    probe = subprocess.run(
        [*command, "sh", "-c", "ip link set lo up"], capture_output=True, text=True
    )
    if probe.returncode == 0:
        return None
    return probe.stderr.strip() or f"exit {probe.returncode}"


def _unshare() -> list[str] | str:
    """The ``unshare`` command that makes a network namespace here, or why none does:
    root's plain ``unshare -n`` first, then one with a user namespace (``-r``)."""
    tried = []
    for command in [_PLAIN, _MAPPED] if os.geteuid() == 0 else [_MAPPED]:
        why = _try(command)
        if why is None:
            return command
        tried.append(f"`{' '.join(command)}` is not allowed here ({why})")
    blockers = userns_blockers()
    if blockers:
        tried.append(f"user namespaces are off: {', '.join(blockers)}")
    return "; ".join(tried)


def _find() -> list[str] | str:
    """The command that makes the sandbox here, or why none can."""
    if not sys.platform.startswith("linux"):
        return f"network namespaces are Linux only (this is {sys.platform})"
    missing = [tool for tool in ("unshare", "ip") if shutil.which(tool) is None]
    if missing:
        return f"{' and '.join(f'`{t}`' for t in missing)} not found on PATH"
    return _unshare()


def problem() -> str | None:
    """Why a network namespace cannot be made here (``None``: it can)."""
    found = _find()
    return found if isinstance(found, str) else None


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
    unshare = _find()
    if isinstance(unshare, str):
        raise UserError(f"--sandbox cannot isolate the run: {unshare}; fix: {_FIX}")
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "scenarist", *argv])
    env = dict(os.environ, **{MARK: "netns"})
    child = subprocess.Popen(
        [*unshare, "sh", "-c", f"ip link set lo up && exec {command}"], env=env
    )
    try:
        return child.wait()
    except KeyboardInterrupt:  # the terminal's Ctrl-C reached the sandboxed run too
        return child.wait()  # its verdict (INTERRUPTED, exit 130) is the one printed
