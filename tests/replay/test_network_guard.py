"""A strict replay refuses live traffic nothing served (urllib, requests, httpx, aiohttp on
paths the capture does not know), names host and path, counts it in ``live``; allow-listed
loopback services pass."""

from __future__ import annotations

import inspect
import json
import urllib.request
from typing import Any

import httpx2
import pytest
import requests
from tests.replay.sdk_agents import ask

from scenarist import Client, ReplayOptions, RunContext
from scenarist.errors import UserError
from scenarist.model.record import TraceRecord
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM

pytestmark = pytest.mark.anyio

SEARCH = {"query": "where is my parcel"}  # a service the capture does not know


def _urllib(url: str) -> str:
    request = urllib.request.Request(
        url + "/search", data=json.dumps(SEARCH).encode(), method="POST"
    )
    with urllib.request.urlopen(request) as response:
        return response.status and "ok"


def _requests(url: str) -> str:
    return str(requests.post(url + "/search", json=SEARCH, timeout=60).status_code)


def _httpx(url: str) -> str:
    with httpx2.Client() as http:
        return str(http.post(url + "/search", json=SEARCH).status_code)


async def _aiohttp(url: str) -> str:
    import aiohttp

    async with aiohttp.ClientSession() as http, http.post(url + "/search", json=SEARCH) as reply:
        return str(reply.status)


def agent_with(send: Any, server_url: str, openai_url: str) -> Any:
    async def agent(ctx: RunContext) -> str:
        answer = await ctx.track_step_async("answer", ctx.input, lambda: ask(openai_url, "q"))
        try:
            extra = send(server_url)  # unknown to the capture: not recorded, not served
            if inspect.isawaitable(extra):
                extra = await extra
        except Exception as error:  # an agent that swallows errors still fails the replay
            extra = type(error).__name__
        return f"{answer} {extra}"

    return agent


async def _recorded(client: Client, server: FakeLLMServer) -> TraceRecord:
    async def agent(ctx: RunContext) -> str:
        return str(
            await ctx.track_step_async("answer", ctx.input, lambda: ask(server.openai_url, "q"))
        )

    await client.run_async("guarded", agent, input="q")
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    return record


@pytest.mark.parametrize(
    "send", [_urllib, _requests, _httpx, _aiohttp], ids=["urllib", "requests", "httpx", "aiohttp"]
)
async def test_strict_replay_refuses_unserved_traffic_naming_host_and_path(send: Any) -> None:
    client = Client(store=MemoryStore())
    with FakeLLMServer(ScriptedLLM(default=Reply("ok"))) as server:
        record = await _recorded(client, server)
        before = len(server.requests)
        agent = agent_with(send, server.url, server.openai_url)
        result = await client.replay_async(
            record, agent, ReplayOptions(mock_llm_responses=True, on_divergence="serve")
        )
        assert len(server.requests) == before  # nothing reached the server
        host = server.url.removeprefix("http://")
    refused = [f for f in result.failures if "refused a live connection" in f]
    assert refused and f"to {host}/search" in refused[0], result.failures
    assert not result.passed
    assert result.fidelity.live == 1 and not result.fidelity.is_faithful
    assert "LiveCallBlockedError" in str(result.output)  # what the agent's call raised


async def test_allow_listed_loopback_services_pass() -> None:
    client = Client(store=MemoryStore())
    with FakeLLMServer(ScriptedLLM(default=Reply("ok"))) as server:
        record = await _recorded(client, server)
        host = server.url.removeprefix("http://")
        before = len(server.requests)
        result = await client.replay_async(
            record,
            agent_with(_httpx, server.url, server.openai_url),
            ReplayOptions(mock_llm_responses=True, allow_network=[host]),
        )
        assert len(server.requests) == before + 1  # the allowed call went through
    assert result.failures == [] and result.fidelity.live == 0


def test_only_loopback_can_be_allow_listed() -> None:
    from scenarist.tracing.http._network_guard import NetworkGuard
    from scenarist.tracing.recorder import RunRecorder

    with pytest.raises(UserError, match=r"'db\.example\.com:5432' is not a loopback address"):
        NetworkGuard(RunRecorder("t"), "x", ["db.example.com:5432"])
