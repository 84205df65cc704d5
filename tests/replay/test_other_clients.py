"""LLM calls through ``requests`` and plain ``urllib3``: captured as spans, recorded in a
cassette and replayed strictly with the network closed, JSON and streamed; served from a
recorded trace too."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
import urllib3
from tests.integrations.conftest import active_run, llm_spans
from tests.replay.cassette_support import ConnectionCounter

from scenarist.errors import ReplayMissError
from scenarist.replay import cassette
from scenarist.replay.step_replay import ReplayOptions
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM

MOCKED = ReplayOptions(mock_llm_responses=True)  # Veval's default replays live

ANSWER = "It left the depot this morning."


def body(text: str, stream: bool) -> dict[str, Any]:
    request = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]}
    if stream:
        request.update(stream=True, stream_options={"include_usage": True})
    return request


def _text(raw: bytes, stream: bool) -> str:
    if not stream:
        return str(json.loads(raw)["choices"][0]["message"]["content"])
    chunks = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith(b"data: {")]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


def with_requests(base: str, question: str, stream: bool) -> str:
    url = base + "/v1/chat/completions"
    with requests.Session() as http:
        reply = http.post(url, json=body(question, stream), stream=stream, timeout=60)
        assert reply.status_code == 200, reply.text
        if stream:  # read as an SDK would: line by line as the events arrive
            return _text(b"\n".join(reply.iter_lines()), stream)
        return _text(reply.content, stream)


def with_urllib3(base: str, question: str, stream: bool) -> str:
    with urllib3.PoolManager() as http:
        reply = http.request(
            "POST",
            base + "/v1/chat/completions",
            body=json.dumps(body(question, stream)).encode(),
            headers={"content-type": "application/json"},
            preload_content=not stream,
        )
        raw = b"".join(reply.stream(64)) if stream else reply.data
        assert reply.status == 200, raw
        return _text(raw, stream)


CLIENTS = [pytest.param(with_requests, id="requests"), pytest.param(with_urllib3, id="urllib3")]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("send", CLIENTS)
def test_recorded_then_replayed_strictly_with_the_network_closed(
    send: Callable[[str, str, bool], str], stream: bool, tmp_path: Path
) -> None:
    path = tmp_path / "tape.jsonl"
    script = ScriptedLLM(default=Reply(ANSWER, tokens_in=7, tokens_out=6))
    with FakeLLMServer(script) as server, active_run() as ctx, cassette(path, "record") as tape:
        assert send(server.url, "Where is my parcel?", stream) == ANSWER
    assert tape.stats.live == 1
    (span,) = llm_spans(ctx)
    assert (span.name, span.model, span.tokens_in, span.tokens_out) == (
        "openai.chat.completions",
        "gpt-4o-mini",
        7,
        6,
    )
    assert span.output["choices"][0]["message"]["content"] == ANSWER
    with ConnectionCounter() as port, active_run() as replay, cassette(path, "replay") as tape:
        assert send(port.url, "Where is my parcel?", stream) == ANSWER
    assert port.connections == 0 and tape.stats.faithful
    (served,) = llm_spans(replay)
    assert served.metadata["replayed"] and served.cost_usd == 0.0


@pytest.mark.parametrize("send", CLIENTS)
def test_a_changed_request_is_a_miss_not_a_live_call(
    send: Callable[[str, str, bool], str], tmp_path: Path
) -> None:
    path = tmp_path / "miss.jsonl"
    with FakeLLMServer(ScriptedLLM(default=Reply(ANSWER))) as server, cassette(path, "record"):
        send(server.url, "Where is my parcel?", False)
    with (
        ConnectionCounter() as port,
        pytest.raises(ReplayMissError, match=r"last message 'Where is my refund\?'"),
        cassette(path, "replay"),
    ):
        send(port.url, "Where is my refund?", False)
    assert port.connections == 0


@pytest.mark.anyio
@pytest.mark.parametrize("send", CLIENTS)
async def test_a_recorded_trace_serves_the_calls(send: Callable[[str, str, bool], str]) -> None:
    from scenarist import Client, RunContext
    from scenarist.store import MemoryStore

    client = Client(store=MemoryStore())

    def agent_for(base: str) -> Any:
        def agent(ctx: RunContext) -> str:
            return send(base, str(ctx.input), True)

        return agent

    with FakeLLMServer(ScriptedLLM(default=Reply(ANSWER))) as server:
        assert await client.run_async("clients", agent_for(server.url), input="q") == ANSWER
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    assert record.spans[0].kind == "llm"
    with ConnectionCounter() as port:
        result = await client.replay_async(record, agent_for(port.url), MOCKED)
    assert result.passed, result.failures
    assert result.output == ANSWER and port.connections == 0 and result.fidelity.live == 0


@pytest.mark.parametrize("send", CLIENTS)
def test_a_compressed_response_is_captured_recorded_and_replayed(
    send: Callable[[str, str, bool], str], tmp_path: Path
) -> None:
    """The live body is read decoded: its span, its recording and its replay too."""
    from tests.integrations.conftest import _GzipHandler, serving

    path = tmp_path / "gzip.jsonl"

    def ask(base: str) -> Any:
        url = base + "/v1/messages"
        if send is with_requests:
            return requests.post(url, json={"model": "x"}, timeout=60).json()
        with urllib3.PoolManager() as http:
            return http.request("POST", url, json={"model": "x"}).json()

    with serving(_GzipHandler) as url, active_run() as ctx, cassette(path, "record") as tape:
        live = ask(url)
    assert live["model"] == "claude-3-5-haiku-latest"
    (span,) = llm_spans(ctx)
    assert "capture_error" not in span.metadata
    assert (span.output, span.tokens_in, span.tokens_out) == (live, 13, 2)
    assert tape.stats.live == 1
    with ConnectionCounter() as port, cassette(path, "replay") as tape:
        assert ask(port.url) == live
    assert port.connections == 0 and tape.stats.faithful
