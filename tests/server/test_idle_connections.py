"""``scenarist serve`` survives connections that never send a byte: 1,100 of them (more
than the common 1,024 open-files limit, which the server process gets here) and
``/api/health`` still answers. Idle connections are dropped (a header timeout; the
oldest idle one when the connection cap is reached), so the files they hold come back."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from tests.helpers.limits import HANG_S

from scenarist.server.threaded import free_port

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits")

IDLE = 1_100
SERVER_FILES = 1_024  # the server process's open-files limit (soft and hard)
# How long health may take to come back: a bound for a loaded machine, not a measure (the
# server drops idle connections within a second or two of the flood here).
RECOVERY_S = 180.0
OURS = ("SCENARIST_URL", "SCENARIST_HEADER_TIMEOUT_S", "SCENARIST_MAX_CONNECTIONS")


def _server_limits() -> None:  # in the child, before exec
    resource.setrlimit(resource.RLIMIT_NOFILE, (SERVER_FILES, SERVER_FILES))


@pytest.fixture(
    params=[
        pytest.param({"SCENARIST_HEADER_TIMEOUT_S": "2"}, id="cap"),  # the default cap
        pytest.param(  # the header timeout alone
            {"SCENARIST_HEADER_TIMEOUT_S": "2", "SCENARIST_MAX_CONNECTIONS": "100000"},
            id="header-timeout",
        ),
        pytest.param({"SCENARIST_HEADER_TIMEOUT_S": "100000"}, id="cap-alone"),
    ]
)
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """``scenarist serve`` in its own process, at most 1,024 open files."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in OURS}
    env |= {"SCENARIST_HOME": str(tmp_path / "home"), **request.param}
    command = [
        sys.executable, "-m", "scenarist", "serve", "--port", str(port),
        "--database-url", f"sqlite:///{tmp_path / 'scenarist.db'}",
    ]  # fmt: skip
    log = (tmp_path / "serve.log").open("w")
    process = subprocess.Popen(
        command, env=env, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_server_limits
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + HANG_S
        while time.monotonic() < deadline:
            assert process.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                if httpx2.get(f"{url}/api/health", timeout=5).status_code == 200:
                    break
            except httpx2.HTTPError:
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=HANG_S)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _enough_files_here() -> None:
    """This process holds the idle sockets: raise its own limit if it must."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = IDLE + 200
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"this process may open {hard} files; the test needs {needed}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def test_health_answers_despite_idle_connections(server: str) -> None:
    _enough_files_here()
    port = int(server.rsplit(":", 1)[1])
    idle: list[socket.socket] = []
    try:
        for _ in range(IDLE):
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))  # completes in the kernel's backlog
            idle.append(sock)
        answered = None
        deadline = time.monotonic() + RECOVERY_S
        while answered is None and time.monotonic() < deadline:
            try:
                response = httpx2.get(f"{server}/api/health", timeout=10)
                if response.status_code == 200:
                    answered = response
            except httpx2.HTTPError:
                time.sleep(0.5)
        assert answered is not None, f"/api/health did not answer within {RECOVERY_S} s"
    finally:
        for sock in idle:
            sock.close()
    # and the server still serves normally afterwards
    assert httpx2.get(f"{server}/api/health", timeout=60).status_code == 200
