"""``scenarist run --replay --sandbox``: the run inside a network namespace with only
loopback up, so even a child process (``curl``) cannot reach another machine; what the
in-process guards cannot stop, shown beside it.

The sandbox test runs where ``unshare -n`` works (Linux, root or user namespaces) and
skips with the reason elsewhere; the unsupported case is tested everywhere. The same run
is made by a user without root (``unshare -r -n``: a user namespace), here as uid 65534
when the tests run as root, and by a root without ``CAP_SYS_ADMIN`` (a container's
default), where the kernel allows it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.replay.cassette_support import echo_script

from scenarist.cli._sandbox import problem, userns_blockers
from scenarist.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]

AGENT = """
import json, os, socket, subprocess, threading

import httpx
from scenarist import Scenario, StringMatching

BODY = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "q"}]})


def curl(url):
    command = ["curl", "-s", "-o", "/dev/null", "--max-time", "10", url]
    return subprocess.run(command).returncode


def agent(inputs):
    reply = httpx.post(os.environ["FAKE_URL"] + "/v1/chat/completions", content=BODY)
    answer = reply.json()["choices"][0]["message"]["content"]
    # a child process to another address of this machine: no in-process guard sees it
    outside = curl(os.environ["OUTSIDE_URL"])
    # a child process to a server on the run's own loopback: a sandbox lets it through
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def serve():
        connection, _ = server.accept()
        connection.recv(65536)
        connection.sendall(b"HTTP/1.0 200 OK\\r\\ncontent-length: 2\\r\\n\\r\\nok")
        connection.close()

    threading.Thread(target=serve, daemon=True).start()
    inside = curl(f"http://127.0.0.1:{server.getsockname()[1]}/")
    server.close()
    return f"answer {answer} | outside={outside} inside={inside}"


asks = Scenario("asks").interact("hello").check(StringMatching(keyword="answer")).with_target(agent)
"""


def _machine_address() -> str | None:
    """An address of this machine that is not loopback (``None``: none)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # a UDP "connect" sends nothing: it picks a route
        address = str(probe.getsockname()[0])
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") or address == "0.0.0.0" else address


class _Counter:
    """A TCP port on every interface, answering and counting each connection."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("0.0.0.0", 0))
        self._sock.listen(16)
        self.port = self._sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            connection.recv(65536)
            connection.sendall(b"HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok")
            connection.close()

    def close(self) -> None:
        self._sock.close()


@pytest.fixture
def outside() -> Iterator[tuple[str, _Counter]]:
    address = _machine_address()
    if address is None:
        pytest.skip("this machine has no address other than loopback to reach")
    counter = _Counter()
    try:
        yield f"http://{address}:{counter.port}/", counter
    finally:
        counter.close()


def _scenarist(
    *args: str, env: dict[str, str], cwd: Path, prefix: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "scenarist", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _output(home: Path) -> str:
    newest = max((home / "runs").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    scenario = json.loads(newest.read_text().splitlines()[1])
    return str(scenario["result"]["final_trace"]["interactions"][0]["outputs"])


def test_the_sandbox_stops_a_child_process_the_in_process_guards_cannot(
    tmp_path: Path, outside: tuple[str, _Counter]
) -> None:
    why = problem() or (None if shutil.which("curl") else "`curl` is not installed")
    if why is not None:
        pytest.skip(f"no network namespace here: {why}")
    url, counter = outside
    (tmp_path / "asks.py").write_text(AGENT)
    with FakeLLMServer(echo_script()) as server:
        env = dict(
            os.environ,
            PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{ROOT}",
            SCENARIST_HOME=str(tmp_path / "home"),
            FAKE_URL=server.url,
            OUTSIDE_URL=url,
        )
        env.pop("SCENARIST_URL", None)
        recorded = _scenarist("run", "asks.py", "--record", env=env, cwd=tmp_path)
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        sent, reached = len(server.requests), counter.connections

        guarded = _scenarist("run", "asks.py", "--replay", env=env, cwd=tmp_path)
        assert guarded.returncode == 0, guarded.stdout + guarded.stderr
        assert "0 live (guarantee: in-process)" in guarded.stdout
        # in-process guards: the child curl reached the other address (that is the gap)
        assert "outside=0 inside=0" in _output(tmp_path / "home")
        assert counter.connections == reached + 1
        reached = counter.connections

        boxed = _scenarist("run", "asks.py", "--replay", "--sandbox", env=env, cwd=tmp_path)
        assert boxed.returncode == 0, boxed.stdout + boxed.stderr
        assert "1 replayed, 0 missed, 0 refused, 0 live (guarantee: sandboxed)" in boxed.stdout
        output = _output(tmp_path / "home")
        assert "outside=0" not in output and "inside=0" in output, output
        assert counter.connections == reached, "a child process left the sandbox"
        assert len(server.requests) == sent
    header = json.loads(
        max((tmp_path / "home" / "runs").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
        .read_text()
        .splitlines()[0]
    )
    assert header["certificate"]["guarantee"] == "sandboxed"


def test_a_sandbox_that_cannot_be_made_is_an_error_never_an_unsandboxed_run(
    tmp_path: Path,
) -> None:
    (tmp_path / "asks.py").write_text(AGENT)
    (tmp_path / ".cassettes").mkdir()
    (tmp_path / "bin").mkdir()  # a PATH without unshare or ip
    env = dict(
        os.environ,
        PATH=str(tmp_path / "bin"),
        PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{ROOT}",
        SCENARIST_HOME=str(tmp_path / "home"),
        FAKE_URL="http://127.0.0.1:9",
        OUTSIDE_URL="http://127.0.0.1:9",
    )
    done = _scenarist("run", "asks.py", "--replay", "--sandbox", env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--sandbox cannot isolate the run:" in done.stderr
    assert "not found on PATH" in done.stderr and "fix:" in done.stderr
    assert not (tmp_path / "home" / "runs").exists() or not any(
        (tmp_path / "home" / "runs").iterdir()
    ), "the run went ahead unsandboxed"


def test_a_sandbox_mark_outside_a_sandbox_is_refused(tmp_path: Path) -> None:
    """``SCENARIST_SANDBOX`` alone proves nothing: the kernel's interfaces decide."""
    if [name for _, name in socket.if_nameindex()] == ["lo"]:
        pytest.skip("this process is already in a loopback-only namespace")
    (tmp_path / "asks.py").write_text(AGENT)
    env = dict(
        os.environ,
        PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{ROOT}",
        SCENARIST_HOME=str(tmp_path / "home"),
        SCENARIST_SANDBOX="netns",
        FAKE_URL="http://127.0.0.1:9",
        OUTSIDE_URL="http://127.0.0.1:9",
    )
    done = _scenarist("run", "asks.py", "--replay", "--sandbox", env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "it is not in scenarist's sandbox" in done.stderr and "interfaces: lo, " in done.stderr


NOBODY = 65534
_AS_NOBODY = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--")


def _blocked(paths: list[Path]) -> dict[Path, set[str]]:
    """The folders on the way to ``paths`` that others cannot enter (``/root``, mode
    700), each with the names inside it that the way goes through."""
    found: dict[Path, set[str]] = {}
    for path in paths:
        for parent, child in zip(path.parents, [path, *path.parents], strict=False):
            if not parent.stat().st_mode & stat.S_IXOTH:
                found.setdefault(parent, set()).add(child.name)
    return found


def _unprivileged(work: Path) -> tuple[str, ...]:
    """The command prefix that runs a command as uid 65534. This Python (its venv, its
    base installation) and the code may lie in a folder others cannot enter (``/root``
    of a root that made its venv there): the command then runs in a mount namespace of
    its own (nothing changes outside it) in which each such folder is a fresh one that
    holds only the ways through it."""
    needed = [Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve(), ROOT]
    blocked = _blocked([p.resolve() for p in needed])
    if not blocked:
        return _AS_NOBODY
    lines = ["set -e"]
    stash = work / ".stash"
    for number, (folder, names) in enumerate(
        sorted(blocked.items(), key=lambda i: len(i[0].parts))
    ):
        for name in sorted(names):
            kept = stash / f"{number}-{name}"
            make = "mkdir -p" if (folder / name).is_dir() else "touch"
            lines += [f"{make} '{kept}'", f"mount --bind '{folder / name}' '{kept}'"]
        lines.append(f"mount -t tmpfs -o mode=0755 tmpfs '{folder}'")
        for name in sorted(names):
            kept = stash / f"{number}-{name}"
            make = "mkdir -p" if kept.is_dir() or (folder / name).is_dir() else "touch"
            lines += [f"{make} '{folder / name}'", f"mount --bind '{kept}' '{folder / name}'"]
    lines.append('exec "$@"')
    script = work / ".as_nobody.sh"
    script.write_text("\n".join(lines) + "\n")
    return ("unshare", "-m", "sh", str(script), *_AS_NOBODY)


def _sandboxed_run(
    work: Path, outside: tuple[str, _Counter], prefix: tuple[str, ...], owner: int
) -> None:
    """Record, then replay with --sandbox through ``prefix``: certified ``sandboxed``,
    loopback up inside, the machine's other address out of reach, the run's files the
    user's own."""
    url, counter = outside
    (work / "asks.py").write_text(AGENT)
    os.chown(work / "asks.py", owner, owner)
    with FakeLLMServer(echo_script()) as server:
        env = dict(
            os.environ,
            HOME=str(work),
            PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{ROOT}",
            SCENARIST_HOME=str(work / "home"),
            FAKE_URL=server.url,
            OUTSIDE_URL=url,
        )
        env.pop("SCENARIST_URL", None)
        recorded = _scenarist("run", "asks.py", "--record", env=env, cwd=work, prefix=prefix)
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        sent, reached = len(server.requests), counter.connections
        boxed = _scenarist(
            "run", "asks.py", "--replay", "--sandbox", env=env, cwd=work, prefix=prefix
        )
        assert boxed.returncode == 0, boxed.stdout + boxed.stderr
        assert "1 replayed, 0 missed, 0 refused, 0 live (guarantee: sandboxed)" in boxed.stdout
        output = _output(work / "home")
        assert "inside=0" in output, output  # a server on the sandbox's loopback answered
        assert "outside=0" not in output, output  # the other address could not be reached
        assert counter.connections == reached, "a child process left the sandbox"
        assert len(server.requests) == sent
    newest = max((work / "home" / "runs").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    assert json.loads(newest.read_text().splitlines()[0])["certificate"]["guarantee"] == (
        "sandboxed"
    )
    assert newest.stat().st_uid == owner  # written by the user, not by a root


@pytest.fixture
def work() -> Iterator[Path]:
    """A folder uid 65534 can write (pytest's own are root's, mode 700, when root)."""
    folder = Path(tempfile.mkdtemp(prefix="scenarist-sandbox-"))
    folder.chmod(0o755)
    if os.geteuid() == 0:
        os.chown(folder, NOBODY, NOBODY)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _needs(*tools: str) -> None:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed")


def test_the_sandbox_works_for_a_user_without_root(
    work: Path, outside: tuple[str, _Counter]
) -> None:
    """``unshare -r -n``: a user namespace maps the user to root inside it, which may
    then make the network namespace; outside, the run is the user's."""
    _needs("curl", "unshare", "ip")
    if os.geteuid() != 0:  # this user is the one without root
        why = problem()
        if why is not None:
            pytest.skip(f"this user cannot make a network namespace here: {why}")
        _sandboxed_run(work, outside, (), os.geteuid())
        return
    _needs("setpriv")
    probe = subprocess.run(
        [*_AS_NOBODY, "unshare", "-r", "-n", "sh", "-c", "ip link set lo up"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        off = ", ".join(userns_blockers()) or "no sysctl says why"
        pytest.skip(
            f"uid {NOBODY} cannot make a user namespace here ({probe.stderr.strip()}; {off})"
        )
    prefix = _unprivileged(work)
    runs = subprocess.run(
        [*prefix, sys.executable, "-c", "import scenarist, httpx"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
    )
    if runs.returncode != 0:
        pytest.skip(f"uid {NOBODY} cannot run this Python here: {runs.stderr.strip()}")
    _sandboxed_run(work, outside, prefix, NOBODY)


def test_a_root_without_cap_sys_admin_gets_a_user_namespace(
    work: Path, outside: tuple[str, _Counter]
) -> None:
    """A root without ``CAP_SYS_ADMIN`` (a container's default) cannot ``unshare -n``;
    the sandbox then takes a user namespace too, as for any user."""
    _needs("curl", "unshare", "ip", "setpriv")
    if os.geteuid() != 0:
        pytest.skip("only a root can drop CAP_SYS_ADMIN from itself to run this")
    drop = ("setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin", "--")
    if subprocess.run([*drop, "unshare", "-n", "true"], capture_output=True).returncode == 0:
        pytest.skip("`unshare -n` works here without CAP_SYS_ADMIN")
    probe = subprocess.run([*drop, "unshare", "-r", "-n", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        off = ", ".join(userns_blockers()) or "no sysctl says why"
        pytest.skip(f"no user namespace here either ({probe.stderr.strip()}; {off})")
    os.chown(work, 0, 0)
    _sandboxed_run(work, outside, drop, 0)


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"user/max_user_namespaces": "0"}, ["sysctl user.max_user_namespaces is 0"]),
        (
            {"kernel/apparmor_restrict_unprivileged_userns": "1"},
            ["sysctl kernel.apparmor_restrict_unprivileged_userns is 1"],
        ),
        (
            {"kernel/unprivileged_userns_clone": "0", "user/max_user_namespaces": "1000"},
            ["sysctl kernel.unprivileged_userns_clone is 0"],
        ),
        ({"user/max_user_namespaces": "96362"}, []),
    ],
)
def test_the_kernel_setting_that_forbids_user_namespaces_is_named(
    tmp_path: Path, settings: dict[str, str], expected: list[str]
) -> None:
    for name, value in settings.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(value + "\n")
    assert sorted(userns_blockers(tmp_path)) == sorted(expected)
