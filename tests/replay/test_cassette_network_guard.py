"""A cassette in replay mode lets nothing it did not serve leave: urllib, requests, raw
sockets, httpx and aiohttp to non-LLM paths are refused naming host and path, counted in
``stats.refused`` and ``stats.live``; allow-listed loopback services pass; recording is
unguarded."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import urllib.request
from pathlib import Path
from typing import Any

import httpx2
import pytest
import requests
from tests.replay.test_cassette import answer, body, record

from scenarist.errors import LiveCallBlockedError, UserError
from scenarist.replay import cassette
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM

SEARCH = {"query": "where is my parcel"}  # a service the capture does not know


def _urllib(url: str) -> Any:
    request = urllib.request.Request(
        url + "/search", data=json.dumps(SEARCH).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.status


def _requests(url: str) -> Any:
    return requests.post(url + "/search", json=SEARCH, timeout=60).status_code


def _httpx(url: str) -> Any:
    with httpx2.Client() as http:
        return http.post(url + "/search", json=SEARCH).status_code


def _aiohttp(url: str) -> Any:
    import aiohttp

    async def post() -> int:
        async with aiohttp.ClientSession() as http, http.post(url + "/search", json=SEARCH) as r:
            return r.status

    return asyncio.run(post())


def _socket(url: str) -> Any:
    host, port = url.removeprefix("http://").split(":")
    with socket.socket() as sock:  # what database drivers end up doing
        sock.settimeout(5)
        sock.connect((host, int(port)))
        return sock.getpeername()


@pytest.fixture
def server() -> Any:
    with FakeLLMServer(ScriptedLLM(default=Reply("ok"))) as fake:
        yield fake


@pytest.mark.parametrize(
    "send",
    [_urllib, _requests, _httpx, _aiohttp, _socket],
    ids=["urllib", "requests", "httpx", "aiohttp", "socket"],
)
def test_replay_refuses_what_the_cassette_did_not_serve(
    send: Any, server: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "guarded.jsonl"
    record(path, server.openai_url, "q")
    before = len(server.requests)
    host = server.url.removeprefix("http://")

    def agent() -> str:
        with httpx2.Client() as http:
            reply = answer(http.post(server.openai_url + "/chat/completions", json=body("q")))
        with contextlib.suppress(Exception):  # an agent that swallows errors still fails
            send(server.url)
        return reply

    tape = cassette(path, "replay")
    refused = f"refused a live connection to {host}"
    with pytest.raises(LiveCallBlockedError, match=refused) as raised, tape:
        assert agent() == "ok"
    assert len(server.requests) == before  # nothing reached the server
    if send is not _socket:
        assert f"to {host}/search" in str(raised.value)
    assert "cassette(..., allow_network=" in str(raised.value)
    stats = tape.stats
    assert (stats.replayed, stats.refused, stats.live) == (1, 1, 1)
    assert not stats.faithful and stats.to_dict()["refused"] == 1
    assert tape.refusals == [str(raised.value)]


def test_the_refusal_reaches_the_agent_and_propagates(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "raised.jsonl"
    record(path, server.openai_url, "q")
    with pytest.raises(LiveCallBlockedError, match="/search"), cassette(path, "replay"):
        _requests(server.url)


def test_allow_listed_loopback_services_pass(server: FakeLLMServer, tmp_path: Path) -> None:
    path = tmp_path / "allowed.jsonl"
    record(path, server.openai_url, "q")
    host = server.url.removeprefix("http://")
    before = len(server.requests)
    with cassette(path, "replay", allow_network=[host]) as tape, httpx2.Client() as http:
        assert answer(http.post(server.openai_url + "/chat/completions", json=body("q"))) == "ok"
        assert http.get(server.openai_url + "/models").status_code == 200
        assert _requests(server.url) in (200, 404)
    assert len(server.requests) >= before + 1  # the allowed calls went through
    assert tape.stats.refused == 0 and tape.stats.live == 0 and tape.stats.faithful


def test_only_loopback_can_be_allow_listed(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"'api\.example\.com:443' is not a loopback address"):
        cassette(tmp_path / "x.jsonl", allow_network=["api.example.com:443"])


def test_recording_is_not_guarded(server: FakeLLMServer, tmp_path: Path) -> None:
    with cassette(tmp_path / "rec.jsonl", "record") as tape:
        assert _requests(server.url) in (200, 404)
    assert tape.stats.refused == 0


def test_tasks_inherit_the_guard_and_other_code_is_untouched(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "tasks.jsonl"
    record(path, server.openai_url, "q")

    async def main() -> Any:
        with cassette(path, "replay") as tape:
            refused = asyncio.create_task(asyncio.to_thread(_requests, server.url))
            with contextlib.suppress(LiveCallBlockedError):
                await refused
        return tape

    with pytest.raises(LiveCallBlockedError):
        asyncio.run(main())
    assert _requests(server.url) in (200, 404)  # outside any cassette: not guarded


async def _remote_store_reads_under_a_replay(path: Path, url: str) -> int:
    from scenarist.store import RemoteStore

    store = RemoteStore(url, retries=0, sync_spool_on_start=False)
    with cassette(path, "replay") as tape:  # the fake server answers 404: "no such trace"
        assert await store.get_trace("t1") is None
    return tape.stats.refused


def test_scenarist_stores_are_not_refused(server: FakeLLMServer, tmp_path: Path) -> None:
    """A suite replayed from cassettes still writes its results to its (remote) store."""
    path = tmp_path / "store.jsonl"
    record(path, server.openai_url, "q")
    assert asyncio.run(_remote_store_reads_under_a_replay(path, server.url)) == 0


def test_a_pooled_aiohttp_connection_is_refused_too(server: FakeLLMServer, tmp_path: Path) -> None:
    """A session connected before the replay reuses its socket: there is no connect to
    refuse, so the request itself is refused, naming host and path, and never sent."""
    import aiohttp

    path = tmp_path / "pooled.jsonl"
    record(path, server.openai_url, "q")
    host = server.url.removeprefix("http://")

    async def agent() -> tuple[int, Any]:
        async with aiohttp.ClientSession() as http:
            async with http.post(server.url + "/search", json=SEARCH) as reply:
                assert reply.status == 404  # connected, and the connection pooled
            before = len(server.requests)
            tape = cassette(path, "replay")
            with pytest.raises(LiveCallBlockedError, match=f"to {host}/search"), tape:
                await http.post(server.url + "/search", json=SEARCH)
            return len(server.requests) - before, tape.stats

    sent, stats = asyncio.run(agent())
    assert sent == 0
    assert (stats.refused, stats.live, stats.unused) == (1, 1, 1)
