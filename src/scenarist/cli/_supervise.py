"""``scenarist run`` watched from a parent process: a run that dies without its verdict
is reported, never taken for a pass.

User code can end the process in ways no ``try`` sees: ``os._exit(0)`` in an agent, a
crash in a C extension, the out-of-memory killer. Run in-process, such an end left exit
code 0, no verdict line and no JUnit file: a CI job turned green. So ``scenarist run``
forks at once, before anything but the standard library is imported (about a
millisecond): the child runs the command as before, on the same terminal, files and
process group; the parent only waits. The child tells the parent, through a pipe:

* ``plan <json>``: the run log's path, the JUnit path, the scenarios' names in order,
  how many run at once (sent when the run log's header is written);
* ``exit <code>``: the command ended through its own code (a verdict, an error line,
  Ctrl-C), with this exit code, which the parent then exits with.

A child that ends without ``exit`` ended behind the CLI's back: the parent prints a
verdict line naming what happened (the exit code or signal), the scenario that was
running and the run log's state, writes the JUnit file from what the run log holds with
an error for each interrupted scenario, and exits with :data:`DIED`.

Signals: the child is in the same process group, so a Ctrl-C on the terminal reaches it
directly; the parent forwards a ``SIGINT`` sent to it alone (``kill -INT``, a CI runner)
and ``SIGTERM``/``SIGHUP``, telling them apart by ``si_code`` (the kernel's for the
terminal's, the user's for ``kill``). A child ended by one of these signals (sent to
it, or forwarded) makes the parent end by the same signal, as ``scenarist run`` did
before: a run stopped on purpose is not reported as one that died. Supervision needs
``os.fork`` and ``signal.sigtimedwait`` (Linux and most Unixes; not macOS or Windows,
where the run stays in one process as before). ``SCENARIST_SUPERVISE=0`` turns it off
(e.g. to debug the run in one process).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DIED", "announce", "finish", "start", "supported"]

DIED = 3
"""The exit code of a run whose process ended without its verdict."""

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_WAITED = (*_SIGNALS, signal.SIGCHLD)  # blocked in the parent, taken by sigtimedwait
_SI_KERNEL = 0x80  # si_code of a signal the kernel sent (a terminal's Ctrl-C)
_POLL_S = 0.05  # how often the parent looks at pending signals and the child

_channel: int | None = None  # the child's end of the pipe, when supervised


def supported() -> bool:
    """Whether this run can be supervised: ``os.fork`` and ``signal.sigtimedwait`` exist,
    ``SCENARIST_SUPERVISE`` is not ``0``, and the process has one thread (a fork copies
    only the calling thread: a lock another one held, e.g. started by a
    ``sitecustomize``, would stay locked in the child)."""
    import threading

    return (
        hasattr(os, "fork")
        and hasattr(signal, "sigtimedwait")
        and os.environ.get("SCENARIST_SUPERVISE", "1") != "0"
        and threading.active_count() == 1
    )


def start() -> int | None:
    """Fork: in the child return ``None`` (go on and run the command); in the parent wait
    for the child and return the exit code to end with."""
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _WAITED)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        global _channel
        _channel = write_end
        return None
    os.close(write_end)
    try:
        return _Parent(pid, read_end).wait()
    finally:
        os.close(read_end)


def announce(
    run_log: str,
    junit: str | None,
    scenarios: list[str],
    groups: list[int],
    parallel: int,
    junit_full: bool = False,
) -> None:
    """Child: the run is starting (its log's header is written)."""
    plan = {
        "run_log": run_log,
        "junit": junit,
        "junit_full": junit_full,
        "scenarios": scenarios,
        "groups": groups,
        "parallel": parallel,
    }
    _send(f"plan {json.dumps(plan)}\n")


def finish(code: int) -> None:
    """Child: the command ended through its own code with exit ``code``."""
    _send(f"exit {code}\n")


def _send(line: str) -> None:
    if _channel is None:
        return
    data = line.encode("utf-8", "backslashreplace")
    try:
        while data:
            data = data[os.write(_channel, data) :]
    except OSError:  # the parent is gone: nobody to tell
        pass


@dataclass
class _Parent:
    pid: int
    read_end: int
    received: bytearray = field(default_factory=bytearray)

    def wait(self) -> int:
        status = self._run()
        lines = bytes(self.received).decode("utf-8", "replace").splitlines()
        plan: dict[str, Any] | None = None
        for line in lines:
            kind, _, rest = line.partition(" ")
            if kind == "exit":
                return int(rest)
            if kind == "plan":
                plan = json.loads(rest)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) in _SIGNALS:
            _die_by(os.WTERMSIG(status))  # stopped on purpose: end as the run itself did
        return _report_death(status, plan)

    def _run(self) -> int:
        """Collect what the child sends and forward signals until it ends; its status."""
        open_pipe = True
        while True:
            if open_pipe:
                ready, _, _ = select.select([self.read_end], [], [], _POLL_S)
                if ready:
                    chunk = os.read(self.read_end, 65536)
                    if chunk:
                        self.received += chunk
                    else:  # the child has exited (no descendant holds the pipe)
                        open_pipe = False
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self._drain()
                return status
            # the pipe closed: the child is ending, and its SIGCHLD wakes this at once
            self._forward(signal.sigtimedwait(_WAITED, 0 if open_pipe else _POLL_S))

    def _drain(self) -> None:
        os.set_blocking(self.read_end, False)
        while True:
            try:
                chunk = os.read(self.read_end, 65536)
            except BlockingIOError:
                return
            if not chunk:
                return
            self.received += chunk

    def _forward(self, info: Any) -> None:
        if info is None or info.si_signo == signal.SIGCHLD:
            return
        if info.si_signo == signal.SIGINT and info.si_code == _SI_KERNEL:
            return  # the terminal's Ctrl-C: the child, in the same process group, has it
        with contextlib.suppress(ProcessLookupError):  # it has just ended
            os.kill(self.pid, info.si_signo)


def _die_by(signum: int) -> None:
    signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
    os.kill(os.getpid(), signum)


def _report_death(status: int, plan: dict[str, Any] | None) -> int:
    """The verdict line (and JUnit file) of a run whose process ended without its own."""
    how = _how(status)
    if plan is None:
        sys.stdout.write(
            f"scenarist: ERROR (exit {DIED}): the run ended without its verdict: its process "
            f"{how} before any scenario started (os._exit or a crash while loading the files); "
            "no run log or JUnit file was written\n"
        )
        sys.stdout.flush()
        return DIED
    from scenarist.cli._died import report_interrupted_run

    return report_interrupted_run(plan, how, DIED)


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"was killed by {name}"
    return f"exited with code {os.waitstatus_to_exitcode(status)}"
