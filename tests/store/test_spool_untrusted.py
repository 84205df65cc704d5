"""The spool is data, not instructions (issue 29, items 8 and 9), through a real server.

A spool folder under the working directory is what a cloned repository can ship: files
planted there never send the key to another host, never replay a method or a path, and
are never sent at all without the local signature. Spooled uploads keep their project;
what the key cannot send is set aside with the reason instead of retried for ever; two
``scenarist sync`` at once deliver each upload once."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.server.conftest import LiveServer, make_run_log
from typer.testing import CliRunner

from scenarist._sync import run_sync
from scenarist.cli.app import app as cli
from scenarist.errors import UserError
from scenarist.server.app import create_app
from scenarist.store import admin
from scenarist.store.remote import RemoteStore
from scenarist.store.sql.store import SqlStore


class Switchable:
    """The real app behind a switch: ``down`` answers 503 (the server restarting), every
    POST that reaches the app is counted, and with ``hold`` set the first POST waits until
    the event is set (``holding`` says it arrived)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.state = app.state
        self.down = False
        self.posts: list[str] = []
        self.hold: threading.Event | None = None
        self.holding = threading.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.down:
            await send({"type": "http.response.start", "status": 503, "headers": []})
            await send({"type": "http.response.body", "body": b"restarting"})
            return
        if scope["type"] == "http" and scope["method"] == "POST":
            self.posts.append(scope["path"])
            if self.hold is not None and len(self.posts) == 1:
                self.holding.set()
                await asyncio.get_running_loop().run_in_executor(None, self.hold.wait)
        await self.app(scope, receive, send)


class Decoy:
    """Another host (127.0.0.12 on loopback) that records every request it gets and
    answers 200, as a server an attacker controls would."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.12", 0))
        self.socket.listen()
        self.socket.settimeout(0.05)
        self.port = self.socket.getsockname()[1]
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(30)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                self.received.append(data)
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.socket.close()


@pytest.fixture
def decoy() -> Iterator[Decoy]:
    listener = Decoy()
    yield listener
    listener.close()


@pytest.fixture
def switchable(database_url: str) -> Iterator[tuple[Switchable, LiveServer]]:
    wrapper = Switchable(create_app(database_url))
    with LiveServer(wrapper) as server:
        yield wrapper, server


def _spool_dir() -> Path:
    return Path(os.environ["SCENARIST_HOME"]) / "spool"


def _plant(name: str, document: dict[str, Any]) -> Path:
    """A file written into the spool folder by someone else (a cloned repository)."""
    folder = _spool_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(document))
    return path


def _sync(url: str, key: str | None, *args: str) -> Any:
    env = {"SCENARIST_URL": url, "SCENARIST_API_KEY": key}
    return CliRunner().invoke(cli, ["sync", *args], env=env)  # type: ignore[arg-type]


def _spool_while_down(
    wrapper: Switchable, url: str, key: str | None, project: str | None, run_id: str
) -> None:
    """A run log uploaded while the server answers 503: it waits in the spool."""
    wrapper.down = True
    try:
        store = RemoteStore(url, key, retries=0, project=project)
        uploaded = run_sync(store.upload_run_log, make_run_log(run_id))
        assert uploaded.spooled is not None
    finally:
        wrapper.down = False


@pytest.mark.parametrize("trick", ["port", "userinfo"])
def test_a_planted_path_never_sends_the_key_to_another_host(
    trick: str, decoy: Decoy, live_server: LiveServer, database_url: str
) -> None:
    _, key = admin.create_key(["ingest", "read"], database_url=database_url)
    if trick == "port":  # http://127.0.0.1 + "2:PORT/x" = http://127.0.0.12:PORT/x
        url, path = "http://127.0.0.1", f"2:{decoy.port}/x"
    else:  # http://127.0.0.1:PORT + "@127.0.0.12:PORT/x": the first part is userinfo
        url, path = live_server.url, f"@127.0.0.12:{decoy.port}/x"
    _plant(
        "00000000000000000001-trace-planted.json",
        {"spool_format": 1, "kind": "trace", "payload_id": "t", "method": "POST",
         "path": path, "body": {"trace_id": "t"}, "server_url": url},
    )  # fmt: skip
    # the new format, naming the other host as its origin: kept, never sent there
    _plant(
        "00000000000000000002-run_log-planted.json",
        {"spool_format": 2, "kind": "run_log", "payload_id": "r",
         "origin": f"http://127.0.0.12:{decoy.port}", "project": None, "body": {},
         "spooled_at": "2026-01-01T00:00:00Z", "reason": "", "signature": "0" * 64},
    )  # fmt: skip

    done = _sync(url, key)
    assert decoy.received == [], decoy.received  # not a byte, so never the key
    assert "planted" in done.output and "not sent" in done.output, done.output
    assert done.exit_code == 2


def test_a_planted_delete_is_never_sent(live_server: LiveServer, database_url: str) -> None:
    owner, owner_key = admin.create_key(["admin", "ingest", "read"], database_url=database_url)
    _plant(
        "00000000000000000001-trace-planted.json",
        {"spool_format": 1, "kind": "trace", "payload_id": "x", "method": "DELETE",
         "path": f"/api/keys/{owner.key_id}", "body": None, "server_url": live_server.url},
    )  # fmt: skip
    # the new format with a method slipped in, and one with a forged signature
    _plant(
        "00000000000000000002-trace-planted.json",
        {"spool_format": 2, "kind": "trace", "payload_id": "y", "method": "DELETE",
         "path": f"/api/keys/{owner.key_id}", "origin": live_server.url, "project": None,
         "body": {}, "spooled_at": "2026-01-01T00:00:00Z", "signature": "0" * 64},
    )  # fmt: skip
    _plant(
        "00000000000000000003-run_log-planted.json",
        {"spool_format": 2, "kind": "run_log", "payload_id": "z", "origin": live_server.url,
         "project": None, "body": json.loads(make_run_log("planted").model_dump_json()),
         "spooled_at": "2026-01-01T00:00:00Z", "reason": "", "signature": "0" * 64},
    )  # fmt: skip

    done = _sync(live_server.url, owner_key)
    keys = {k.key_id: k for k in admin.list_keys(database_url)}
    assert keys[owner.key_id].revoked_at is None, done.output  # the owner's key still works
    assert done.exit_code == 2, done.output
    assert run_sync(SqlStore(database_url).get_run, "planted") is None  # nothing uploaded
    assert done.output.count("not sent") == 3, done.output
    assert "signature" in done.output and "older scenarist" in done.output
    assert sorted(p.name for p in (_spool_dir() / "rejected").iterdir()) == [
        "00000000000000000001-trace-planted.json",
        "00000000000000000002-trace-planted.json",
        "00000000000000000003-run_log-planted.json",
    ]
    assert "sent 0" in _sync(live_server.url, owner_key).output  # reported once, set aside


def test_spooled_uploads_keep_their_project(
    switchable: tuple[Switchable, LiveServer], database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrapper, server = switchable
    _, key = admin.create_key(["ingest", "read"], projects=["alpha", "beta"],
                              database_url=database_url)  # fmt: skip
    _spool_while_down(wrapper, server.url, key, "alpha", "run-alpha")
    monkeypatch.setenv("SCENARIST_PROJECT", "beta")
    _spool_while_down(wrapper, server.url, key, None, "run-beta")
    monkeypatch.delenv("SCENARIST_PROJECT")

    done = _sync(server.url, key)  # no project named now: each upload carries its own
    assert done.exit_code == 0, done.output
    assert "sent 2" in done.output
    alpha = SqlStore(database_url, project="alpha")
    beta = SqlStore(database_url, project="beta")
    assert run_sync(alpha.get_run, "run-alpha") is not None
    assert run_sync(beta.get_run, "run-beta") is not None
    assert run_sync(SqlStore(database_url, project="default").count_runs) == 0


def test_uploads_the_key_cannot_send_are_set_aside_with_the_reason(
    switchable: tuple[Switchable, LiveServer], database_url: str
) -> None:
    wrapper, server = switchable
    _, key = admin.create_key(["ingest", "read"], projects=["alpha"], database_url=database_url)
    _spool_while_down(wrapper, server.url, key, "gamma", "run-gamma")  # not the key's
    _spool_while_down(wrapper, server.url, key, "alpha", "run-alpha")

    done = _sync(server.url, key)
    assert "sent 1" in done.output, done.output
    assert "403" in done.output and "gamma" in done.output
    assert "rejected" in done.output
    assert done.exit_code == 2  # something needs the user
    assert len(list((_spool_dir() / "rejected").glob("*.json"))) == 1
    assert run_sync(SqlStore(database_url, project="alpha").get_run, "run-alpha") is not None

    posts = len(wrapper.posts)
    again = _sync(server.url, key)
    assert again.exit_code == 0, again.output
    assert "sent 0 spooled" in again.output
    assert len(wrapper.posts) == posts  # not retried

    _, wider = admin.create_key(["ingest"], projects=["gamma"], database_url=database_url)
    retried = _sync(server.url, wider, "--retry-rejected")  # the user fixed the key
    assert retried.exit_code == 0 and "sent 1" in retried.output, retried.output
    assert run_sync(SqlStore(database_url, project="gamma").get_run, "run-gamma") is not None


def test_a_spooled_upload_changed_afterwards_is_not_sent(
    switchable: tuple[Switchable, LiveServer], decoy: Decoy, database_url: str
) -> None:
    wrapper, server = switchable
    _, key = admin.create_key(["ingest", "read"], database_url=database_url)
    _spool_while_down(wrapper, server.url, key, None, "run-1")
    [path] = sorted(_spool_dir().glob("*.json"))
    document = json.loads(path.read_text())
    document["origin"] = f"http://127.0.0.12:{decoy.port}"  # sent there on purpose...
    path.write_text(json.dumps(document))
    done = _sync(f"http://127.0.0.12:{decoy.port}", key)  # ...by a sync pointed there
    assert decoy.received == []
    assert "signature does not match" in done.output, done.output
    assert wrapper.posts == []


def test_a_key_the_server_refuses_moves_nothing(
    switchable: tuple[Switchable, LiveServer], database_url: str
) -> None:
    wrapper, server = switchable
    _, key = admin.create_key(["ingest", "read"], database_url=database_url)
    _spool_while_down(wrapper, server.url, key, None, "run-1")
    done = _sync(server.url, "sk_scen_wrong")
    assert done.exit_code == 2
    assert "401" in done.output and "SCENARIST_API_KEY" in done.output, done.output
    assert not (_spool_dir() / "rejected").exists()  # the key is wrong, not the upload
    assert "sent 1" in _sync(server.url, key).output


def test_two_syncs_at_once_send_each_upload_once(
    switchable: tuple[Switchable, LiveServer], database_url: str, tmp_path: Path
) -> None:
    wrapper, server = switchable
    for n in range(4):
        _spool_while_down(wrapper, server.url, None, None, f"run-{n}")
    wrapper.hold = threading.Event()
    env = {**os.environ, "SCENARIST_URL": server.url}
    command = [sys.executable, "-m", "scenarist", "sync"]
    first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert wrapper.holding.wait(120), "the first sync never sent anything"
        # the first sync is now sending its first upload: a second one starts
        second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    finally:
        wrapper.hold.set()
    out, _ = first.communicate(timeout=120)
    assert wrapper.posts == ["/api/runs"] * 4, second.stdout  # each upload sent once
    assert first.returncode == 0, out
    assert "Traceback" not in second.stdout + second.stderr, second.stderr
    assert "another `scenarist sync`" in second.stdout + second.stderr
    assert b"sent 4" in out
    assert run_sync(SqlStore(database_url).count_runs) == 4


def test_a_run_that_uploads_never_sends_planted_files(
    decoy: Decoy, live_server: LiveServer, database_url: str, tmp_path: Path
) -> None:
    """The store sends its server's spool after its first successful upload: the path a
    plain `scenarist run` in a cloned repository takes."""
    _, key = admin.create_key(["ingest", "read", "admin"], database_url=database_url)
    _plant(
        "00000000000000000001-trace-planted.json",
        {"spool_format": 1, "kind": "trace", "payload_id": "t", "method": "POST",
         "path": f"@127.0.0.12:{decoy.port}/x", "body": {}, "server_url": live_server.url},
    )  # fmt: skip
    suite = tmp_path / "suite_uploaded.py"
    suite.write_text(
        "from scenarist import Equals, Scenario\n"
        'ok = Scenario("s").interact("hi", "hi").check(Equals(expected_value="hi"))\n'
    )
    env = {"SCENARIST_URL": live_server.url, "SCENARIST_API_KEY": key}
    done = CliRunner().invoke(cli, ["run", str(suite)], env=env)
    assert done.exit_code == 0, done.output
    assert decoy.received == []
    assert [p.name for p in (_spool_dir() / "rejected").iterdir()] == [
        "00000000000000000001-trace-planted.json"
    ]


def test_a_spool_file_is_signed_data_and_the_secret_is_the_accounts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scenarist.server.threaded import free_port
    from scenarist.store.spool import spool_secret_path

    monkeypatch.delenv("SCENARIST_SPOOL_SECRET_FILE")  # the default place, in a home here
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    down = f"http://user:pw@LOCALHOST:{free_port()}/"
    store = RemoteStore(down, "sk_scen_x", retries=0, project="alpha")
    uploaded = run_sync(store.upload_run_log, make_run_log("run-1"))
    assert uploaded.spooled is not None
    document = json.loads(Path(uploaded.spooled).read_text())
    assert sorted(document) == [
        "body", "kind", "origin", "payload_id", "project", "reason", "signature",
        "spool_format", "spooled_at",
    ]  # fmt: skip
    assert document["kind"] == "run_log" and document["project"] == "alpha"
    assert document["origin"] == f"http://localhost:{store.origin.rsplit(':', 1)[1]}"
    assert "pw" not in document["origin"]
    secret = spool_secret_path()
    assert secret == tmp_path / "config" / "scenarist" / "spool-secret"
    assert secret.parent != _spool_dir() and (secret.stat().st_mode & 0o777) == 0o600
    secret.write_text("")
    with pytest.raises(UserError, match=r"spool secret .* is empty"):
        run_sync(store.upload_run_log, make_run_log("run-2"))
