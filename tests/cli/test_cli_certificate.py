"""The replay certificate of ``scenarist run``: replayed / missed / refused / live calls
and the guarantee, in the console, the run log and JUnit; ``--fail-on-live``.

The agent calls the fake provider on loopback; the fake provider counts what reached it,
so a certificate is held to what really happened."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.replay.cassette_support import echo_script
from typer.testing import Result

from scenarist.testing import FakeLLMServer

Cli = Callable[..., Result]
Write = Callable[[str, str], Path]

AGENT = """
import asyncio, json, os, socket, threading, urllib.request
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import httpx
from scenarist import Scenario, StringMatching

BASE = os.environ["FAKE_URL"]
BODY = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "q"}]})


def with_httpx():
    reply = httpx.post(BASE + "/v1/chat/completions", content=BODY)
    return reply.json()["choices"][0]["message"]["content"]


def with_urllib():
    request = urllib.request.Request(BASE + "/v1/chat/completions", data=BODY.encode())
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())["choices"][0]["message"]["content"]


def with_socket():
    url = urlsplit(BASE)
    head = (f"POST /v1/chat/completions HTTP/1.1\\r\\nHost: {url.netloc}\\r\\n"
            f"content-length: {len(BODY)}\\r\\nconnection: close\\r\\n\\r\\n")
    with socket.socket() as sock:
        sock.connect((url.hostname, url.port))
        sock.sendall(head.encode() + BODY.encode())
        return sock.recv(65536).decode()


def bare_thread(call):
    out = []
    thread = threading.Thread(target=lambda: out.append(_safe(call)))
    thread.start()
    thread.join()
    return out[0]


def pool(call):
    with ThreadPoolExecutor(1) as workers:
        return workers.submit(_safe, call).result()


def executor(call):
    async def main():
        return await asyncio.get_running_loop().run_in_executor(None, _safe, call)
    with ThreadPoolExecutor(1) as workers:  # a thread of its own for asyncio.run
        return workers.submit(asyncio.run, main()).result()


def _safe(call):
    try:
        return call()
    except Exception as error:
        return f"refused: {type(error).__name__}"


CALLS = {"httpx": with_httpx, "urllib": with_urllib, "socket": with_socket}
STARTS = {"bare_thread": bare_thread, "pool": pool, "executor": executor}


def agent(inputs):
    MODE = os.environ.get("AGENT_MODE", "httpx")  # read now: the module may be cached
    if MODE == "httpx":
        return "answer: " + with_httpx()
    start, call = MODE.split(":")
    with_httpx()  # the recorded call, replayed
    return "answer: " + str(STARTS[start](CALLS[call]))


asks = Scenario("asks").interact("hello").check(StringMatching(keyword="answer")).with_target(agent)
"""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(echo_script()) as fake:
        monkeypatch.setenv("FAKE_URL", fake.url)
        monkeypatch.setenv("AGENT_MODE", "httpx")
        yield fake


def _log(home: Path) -> list[dict[str, object]]:
    (path,) = sorted((home / "home" / "runs").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)[-1:]
    return [json.loads(line) for line in path.read_text().splitlines()]


def _junit(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    suite = ET.parse(path).getroot()
    case = suite.find("testcase")
    assert case is not None

    def props(element: ET.Element) -> dict[str, str]:
        return {
            p.get("name", ""): p.get("value", "")
            for p in element.findall("properties/property")
            if p.get("name", "").startswith("replay.")
        }

    return props(suite), props(case)


def test_a_replay_certifies_zero_live_calls_everywhere(
    cli: Cli, write: Write, home: Path, server: FakeLLMServer
) -> None:
    path = str(write("flows/asks.py", AGENT))
    assert cli("run", path, "--record").exit_code == 0
    sent = len(server.requests)
    result = cli("run", path, "--replay", "--junit", "out.xml")
    assert result.exit_code == 0, result.output
    assert len(server.requests) == sent
    expected = "1 replayed, 0 missed, 0 refused, 0 live (guarantee: in-process)"
    assert f"replay certificate: {expected}" in result.stdout
    header, scenario = _log(home)[:2]
    certificate = {"replayed": 1, "missed": 0, "refused": 0, "live": 0}
    assert header["certificate"] == {**certificate, "guarantee": "in-process"}
    assert scenario["certificate"] == {**certificate, "guarantee": "in-process"}
    suite, case = _junit(home / "out.xml")
    for props in (suite, case):
        assert props == {
            "replay.replayed": "1",
            "replay.missed": "0",
            "replay.refused": "0",
            "replay.live": "0",
            "replay.guarantee": "in-process",
        }


def test_a_call_that_went_out_is_certified_live_and_fails_on_request(
    cli: Cli, write: Write, home: Path, server: FakeLLMServer
) -> None:
    """A recording sends its call: the certificate says live=1, never 0, and
    ``--fail-on-live`` fails the run, named in the verdict line."""
    path = str(write("flows/asks.py", AGENT))
    recorded = cli("run", path, "--record", "--junit", "out.xml")
    assert recorded.exit_code == 0, recorded.output
    assert len(server.requests) == 1
    assert "0 refused, 1 live (guarantee: none)" in recorded.stdout
    assert _log(home)[0]["certificate"]["live"] == 1  # type: ignore[index]
    assert _junit(home / "out.xml")[1]["replay.live"] == "1"
    failed = cli("run", path, "--record", "--fail-on-live")
    assert failed.exit_code == 1, failed.output
    assert "1 LLM call(s) went live" in failed.stdout.splitlines()[-1]
    assert "--fail-on-live" in failed.stdout.splitlines()[-1]


@pytest.mark.parametrize("start", ["bare_thread", "pool", "executor"])
@pytest.mark.parametrize("call", ["urllib", "socket"])
def test_a_call_sneaked_from_a_thread_is_refused_and_certified(
    cli: Cli,
    write: Write,
    home: Path,
    server: FakeLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    start: str,
    call: str,
) -> None:
    path = str(write("flows/asks.py", AGENT))
    assert cli("run", path, "--record").exit_code == 0
    sent = len(server.requests)
    monkeypatch.setenv("AGENT_MODE", f"{start}:{call}")
    result = cli("run", path, "--replay", "--junit", "out.xml")
    assert len(server.requests) == sent, "the sneaked call reached the provider"
    assert result.exit_code == 2, result.output  # the cassette stopped the file
    assert "1 replayed, 0 missed, 1 refused, 0 live (guarantee: in-process)" in result.stdout
    assert _log(home)[0]["certificate"]["refused"] == 1  # type: ignore[index]
    assert _junit(home / "out.xml")[0]["replay.refused"] == "1"


def test_no_fail_on_live_and_sandbox_need_their_context(cli: Cli, write: Write) -> None:
    path = str(write("flows/asks.py", AGENT))
    alone = cli("run", path, "--sandbox")
    assert alone.exit_code == 2 and "--sandbox isolates a replay: add --replay" in alone.stderr
