"""LLM calls made from threads started without the agent's context (a bare ``Thread``,
``ThreadPoolExecutor.submit``, ``loop.run_in_executor``) while a strict replay or a
``TestClient`` run is active: served by the one active replay, refused otherwise, counted
every time, and never sent to the server."""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests
from tests.helpers.thread_paths import bare_thread, pool_submit
from tests.replay.cassette_support import OPENAI_KEY, echo_script

from scenarist import Client, RunContext
from scenarist.errors import LiveCallBlockedError, ReplayMissError
from scenarist.replay import cassette
from scenarist.replay.step_replay import ReplayOptions
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer, TestClient

MOCKED = ReplayOptions(mock_llm_responses=True)  # Veval's default replays live

MODEL = "gpt-4o-mini"


def _chat(question: str) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": question}]}


def ask_httpx(base: str, question: str) -> str:
    with httpx.Client(base_url=base) as http:
        reply = http.post("/v1/chat/completions", json=_chat(question))
        reply.raise_for_status()
    return str(reply.json()["choices"][0]["message"]["content"])


def ask_requests(base: str, question: str) -> str:
    headers = {"Authorization": f"Bearer {OPENAI_KEY}"}
    reply = requests.post(
        base + "/v1/chat/completions", json=_chat(question), headers=headers, timeout=30
    )
    reply.raise_for_status()
    return str(reply.json()["choices"][0]["message"]["content"])


def ask_urllib(base: str, question: str) -> str:
    request = urllib.request.Request(
        base + "/v1/chat/completions",
        data=json.dumps(_chat(question)).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        return str(json.loads(reply.read())["choices"][0]["message"]["content"])


def ask_aiohttp(base: str, question: str) -> str:
    import aiohttp

    async def post() -> str:
        async with (
            aiohttp.ClientSession() as http,
            http.post(base + "/v1/chat/completions", json=_chat(question)) as reply,
        ):
            return str((await reply.json())["choices"][0]["message"]["content"])

    return asyncio.run(post())


def run_in_executor(call: Callable[[], str]) -> str:
    async def main() -> str:
        return await asyncio.get_running_loop().run_in_executor(None, call)

    return asyncio.run(main())


STARTERS = [bare_thread, pool_submit, run_in_executor]


def _record(path: Path, base: str, ask: Callable[[str, str], str]) -> str:
    with cassette(path, "record"):  # in the agent's context: recorded
        return ask(base, "q")


@pytest.mark.parametrize("start", STARTERS)
@pytest.mark.parametrize("ask", [ask_httpx, ask_requests, ask_aiohttp])
def test_a_lone_replay_serves_a_context_less_call(
    tmp_path: Path, start: Callable[[Callable[[], str]], str], ask: Callable[[str, str], str]
) -> None:
    path = tmp_path / "tape.jsonl"
    with FakeLLMServer(echo_script()) as server:
        recorded = _record(path, server.url, ask)
        hits = len(server.requests)
        with cassette(path, "replay") as tape:
            assert start(lambda: ask(server.url, "q")) == recorded
        assert len(server.requests) == hits
    assert tape.stats.replayed == 1 and tape.stats.live == 0 and tape.stats.faithful


@pytest.mark.parametrize("start", STARTERS)
def test_a_context_less_call_the_lone_replay_lacks_is_its_miss(
    tmp_path: Path, start: Callable[[Callable[[], str]], str]
) -> None:
    path = tmp_path / "tape.jsonl"
    with FakeLLMServer(echo_script()) as server:
        _record(path, server.url, ask_httpx)
        hits = len(server.requests)
        tape = cassette(path, "replay")
        with (
            pytest.raises(ReplayMissError),
            tape,
            pytest.raises((ReplayMissError, httpx.HTTPError)),
        ):
            start(lambda: ask_httpx(server.url, "another question"))
        assert len(server.requests) == hits
    assert tape.stats.missed == 1 and not tape.stats.faithful


@pytest.mark.parametrize("start", STARTERS)
def test_a_context_less_urllib_call_is_refused_and_counted(
    tmp_path: Path, start: Callable[[Callable[[], str]], str]
) -> None:
    """``urllib.request`` has no hook: nothing can serve it, so it is refused (counted
    on the replay, which fails when left) before it connects."""
    path = tmp_path / "tape.jsonl"
    with FakeLLMServer(echo_script()) as server:
        _record(path, server.url, ask_httpx)
        hits = len(server.requests)
        tape = cassette(path, "replay")
        with (
            pytest.raises(LiveCallBlockedError, match="outside the replay's context"),
            tape,
            pytest.raises(OSError),  # urllib wraps it in URLError
        ):
            start(lambda: ask_urllib(server.url, "q"))
        assert len(server.requests) == hits
    assert tape.stats.refused == 1 and tape.stats.live == 1 and not tape.stats.faithful


@pytest.mark.parametrize("ask", [ask_httpx, ask_requests, ask_aiohttp, ask_urllib])
def test_two_concurrent_replays_refuse_a_context_less_call_and_both_count_it(
    tmp_path: Path, ask: Callable[[str, str], str]
) -> None:
    with FakeLLMServer(echo_script()) as server:
        paths = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
        for path in paths:
            _record(path, server.url, ask_httpx)
        hits = len(server.requests)
        tapes = [cassette(path, "replay") for path in paths]
        entered, release = threading.Barrier(3), threading.Event()
        errors: list[BaseException] = []

        def replay(tape: Any) -> None:  # each replay in its own thread and context
            try:
                with tape:
                    entered.wait()
                    release.wait()
            except BaseException as error:
                errors.append(error)

        threads = [
            threading.Thread(target=contextvars.copy_context().run, args=(replay, tape))
            for tape in tapes
        ]
        for thread in threads:
            thread.start()
        entered.wait()
        try:
            with pytest.raises((LiveCallBlockedError, OSError, httpx.HTTPError)) as refused:
                pool_submit(lambda: ask(server.url, "q"))
        finally:
            release.set()
            for thread in threads:
                thread.join()
        assert len(server.requests) == hits
    assert isinstance(refused.value, LiveCallBlockedError) or ask is ask_urllib
    assert len(errors) == 2 and all(isinstance(e, LiveCallBlockedError) for e in errors)
    for tape in tapes:
        assert tape.stats.refused == 1 and not tape.stats.faithful, tape.stats
        assert "2 strict replays are active" in tape.refusals[0]


def test_context_less_calls_are_untouched_when_no_strict_replay_is_active(
    tmp_path: Path,
) -> None:
    """A recording is not strict: a thread outside it goes live, unrecorded, as before."""
    with FakeLLMServer(echo_script()) as server:
        with cassette(tmp_path / "tape.jsonl", "record") as tape:
            for ask in (ask_httpx, ask_requests, ask_urllib):
                assert pool_submit(lambda ask=ask: ask(server.url, "q")).startswith("echo")
        assert len(server.requests) == 3
    assert tape.stats.live == 0


def test_a_context_less_non_llm_request_still_passes_during_a_replay(tmp_path: Path) -> None:
    """Only LLM calls are caught outside the replay's context: the process's other
    threads (servers, exporters, store pools) keep their connections."""
    path = tmp_path / "tape.jsonl"
    with FakeLLMServer(echo_script()) as server:
        _record(path, server.url, ask_httpx)

        def models() -> str:
            with urllib.request.urlopen(server.url + "/v1/models", timeout=30) as reply:
                return str(reply.status)

        with cassette(path, "replay") as tape:
            assert pool_submit(models) == "200"
    assert tape.stats.refused == 0


@pytest.mark.parametrize("ask", [ask_httpx, ask_requests, ask_urllib])
def test_the_test_client_blocks_a_context_less_llm_call(
    ask: Callable[[str, str], str],
) -> None:
    with FakeLLMServer(echo_script()) as server:

        def agent(ctx: Any) -> str:
            return pool_submit(lambda: ask(server.url, str(ctx.input)))

        client = TestClient()
        with pytest.raises(LiveCallBlockedError, match="TestClient blocked a live LLM call"):
            client.run("threaded-agent", agent, input="hello")
        assert len(server.requests) == 0
    assert len(client.blocked) == 1


@pytest.mark.parametrize("start", STARTERS)
def test_a_strict_trace_replay_serves_a_context_less_call_from_its_recording(
    start: Callable[[Callable[[], str]], str],
) -> None:
    client = Client(store=MemoryStore())
    with FakeLLMServer(echo_script()) as server:

        def recorded_agent(ctx: RunContext) -> str:
            label = ctx.track_step("label", ctx.input, lambda: "q")
            return ask_httpx(server.url, label)  # in the run's context: recorded

        async def threaded_agent(ctx: RunContext) -> str:
            label = await ctx.track_step_async("label", ctx.input, lambda: "q")
            # off the loop (to_thread keeps the context), then a thread without it
            return await asyncio.to_thread(start, lambda: ask_httpx(server.url, label))

        live = client.run("threaded", recorded_agent, input="hi")
        (record,) = client.store.traces.values()  # type: ignore[attr-defined]
        hits = len(server.requests)
        result = client.replay(record, threaded_agent, MOCKED)
        assert len(server.requests) == hits
    assert result.output == live and result.passed, result.failures
    assert result.fidelity.is_faithful


def test_a_strict_trace_replay_counts_a_context_less_miss() -> None:
    client = Client(store=MemoryStore())
    with FakeLLMServer(echo_script()) as server:

        def agent(ctx: RunContext) -> str:
            ctx.track_step("label", ctx.input, lambda: "q")
            return pool_submit(lambda: ask_httpx(server.url, "never recorded"))

        client.run("threaded", lambda ctx: ctx.track_step("label", ctx.input, lambda: "q"), "hi")
        (record,) = client.store.traces.values()  # type: ignore[attr-defined]
        hits = len(server.requests)
        result = client.replay(record, agent, MOCKED)
        assert len(server.requests) == hits
    assert not result.passed
    assert any("no recorded LLM call matches" in failure for failure in result.failures)


def test_a_test_client_replay_run_blocks_an_urllib_llm_call_its_recording_lacks() -> None:
    recorder = Client(store=MemoryStore())
    recorder.run("agent", lambda ctx: ctx.track_step("label", ctx.input, lambda: "q"), "hi")
    (record,) = recorder.store.traces.values()  # type: ignore[attr-defined]
    with FakeLLMServer(echo_script()) as server:

        def agent(ctx: RunContext) -> str:
            ctx.track_step("label", ctx.input, lambda: "q")
            return ask_urllib(server.url, "q")

        client = TestClient().with_replay(record)
        with pytest.raises(LiveCallBlockedError, match="TestClient blocked a live LLM call"):
            client.run("agent", agent, input="hi")
        assert len(server.requests) == 0
    assert len(client.blocked) == 1 and client.last_status == "error"


def test_a_context_less_aiohttp_call_sent_as_is_is_refused_not_sent(tmp_path: Path) -> None:
    """An aiohttp request waiting for ``100-continue`` is not taken by the hook: from a
    thread outside the replay's context it is refused at the guard, never sent."""
    import aiohttp

    path = tmp_path / "tape.jsonl"

    def ask() -> str:
        async def post(base: str) -> str:
            async with (
                aiohttp.ClientSession() as http,
                http.post(base + "/v1/chat/completions", json=_chat("q"), expect100=True) as r,
            ):
                return str(r.status)

        return asyncio.run(post(server.url))

    with FakeLLMServer(echo_script()) as server:
        _record(path, server.url, ask_httpx)
        hits = len(server.requests)
        tape = cassette(path, "replay")
        with pytest.raises(LiveCallBlockedError), tape, pytest.raises(LiveCallBlockedError):
            pool_submit(ask)
        assert len(server.requests) == hits
    assert tape.stats.refused == 1
