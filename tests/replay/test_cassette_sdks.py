"""Cassettes with the official SDKs: record against the fake server, replay with no network."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
from tests.helpers.lazy_modules import lazy_module
from tests.replay.cassette_support import (
    ANTHROPIC_KEY,
    ANTHROPIC_MODEL,
    OPENAI_KEY,
    OPENAI_MODEL,
    ConnectionCounter,
    assert_no_secrets,
    echo_script,
)

from scenarist.errors import ReplayMissError
from scenarist.replay import cassette
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM
from scenarist.tracing import RunContext
from scenarist.tracing.http import capture_active

anthropic = lazy_module("anthropic")  # ~3 s of CPU: imported by the worker that runs these

QUESTIONS = ["Where is my parcel?", "Can I get a refund?"]


def openai_client(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key=OPENAI_KEY, max_retries=0)


def anthropic_client(base_url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=base_url, api_key=ANTHROPIC_KEY, max_retries=0)


def openai_agent(llm: openai.OpenAI, questions: list[str] = QUESTIONS) -> list[str]:
    """Plain calls and a stream with usage, the way an agent would make them."""
    answers = []
    for question in questions:
        reply = llm.chat.completions.create(
            model=OPENAI_MODEL, messages=[{"role": "user", "content": question}]
        )
        answers.append(reply.choices[0].message.content or "")
    stream = llm.chat.completions.create(
        model=OPENAI_MODEL,
        messages=[{"role": "user", "content": "stream it"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    answers.append("".join(c.choices[0].delta.content or "" for c in stream if c.choices))
    return answers


def test_openai_sync_and_stream_replay_with_zero_connections(tmp_path: Path) -> None:
    path = tmp_path / "openai.jsonl"
    with FakeLLMServer(echo_script()) as server:
        with cassette(path) as tape, openai_client(server.openai_url) as llm:
            recorded = openai_agent(llm)
        assert tape.stats.live == 3 and not tape.replaying
        assert len(server.requests) == 3
    assert recorded[0] == "echo 1: Where is my parcel?"
    with ConnectionCounter() as port, cassette(path) as tape, openai_client(port.openai_url) as llm:
        assert tape.replaying
        replayed = openai_agent(llm)
    assert replayed == recorded
    assert port.connections == 0
    assert tape.stats.to_dict() | {"path": ""} == {
        "path": "",
        "mode": "replay",
        "replayed": 3,
        "missed": 0,
        "live": 0,
        "unused": 0,
        "refused": 0,
    }
    assert tape.stats.faithful
    assert not capture_active()
    assert_no_secrets(path)


def test_replay_after_the_server_is_stopped_uses_its_closed_port(tmp_path: Path) -> None:
    path = tmp_path / "stopped.jsonl"
    with FakeLLMServer(echo_script()) as server:
        url = server.openai_url
        with cassette(path), openai_client(url) as llm:
            recorded = openai_agent(llm)
    with cassette(path, "replay"), openai_client(url) as llm:  # nothing listens there now
        assert openai_agent(llm) == recorded
    assert server.requests and len(server.requests) == 3  # all from the recording session


@pytest.mark.anyio
async def test_openai_async_and_async_stream_replay(tmp_path: Path) -> None:
    path = tmp_path / "async.jsonl"

    async def agent(base_url: str) -> list[str]:
        async with openai.AsyncOpenAI(base_url=base_url, api_key=OPENAI_KEY, max_retries=0) as llm:
            reply = await llm.chat.completions.create(
                model=OPENAI_MODEL, messages=[{"role": "user", "content": "async hi"}]
            )
            stream = await llm.chat.completions.create(
                model=OPENAI_MODEL,
                messages=[{"role": "user", "content": "async stream"}],
                stream=True,
            )
            pieces = [c.choices[0].delta.content or "" async for c in stream if c.choices]
            return [reply.choices[0].message.content or "", "".join(pieces)]

    with FakeLLMServer(echo_script()) as server:
        async with cassette(path, "record"):
            recorded = await agent(server.openai_url)
    assert recorded == ["echo 1: async hi", "echo 2: async stream"]
    with ConnectionCounter() as port:
        async with cassette(path, "replay") as tape:
            assert await agent(port.openai_url) == recorded
    assert (port.connections, tape.stats.replayed) == (0, 2)


def anthropic_agent(llm: anthropic.Anthropic) -> list[Any]:
    message = llm.messages.create(
        model=ANTHROPIC_MODEL, max_tokens=64, messages=[{"role": "user", "content": "Hello"}]
    )
    with llm.messages.stream(
        model=ANTHROPIC_MODEL, max_tokens=64, messages=[{"role": "user", "content": "Stream"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    return [message.model_dump(), text, final.model_dump()]


def test_anthropic_message_and_stream_replay(tmp_path: Path) -> None:
    path = tmp_path / "anthropic.jsonl"
    with (
        FakeLLMServer(echo_script()) as server,
        cassette(path) as tape,
        anthropic_client(server.anthropic_url) as llm,
    ):
        recorded = anthropic_agent(llm)
    assert tape.stats.live == 2
    assert recorded[1] == "echo 2: Stream"
    with ConnectionCounter() as port, cassette(path) as tape, anthropic_client(port.url) as llm:
        assert anthropic_agent(llm) == recorded
    assert (port.connections, tape.stats.replayed, tape.stats.missed) == (0, 2, 0)
    lines = path.read_text().splitlines()
    stream_record = json.loads(lines[2])["response"]
    assert stream_record["events"][0].startswith("event: message_start\ndata: ")
    assert stream_record["headers"] == {"content-type": "text/event-stream"}
    assert_no_secrets(path)


def test_anthropic_miss_raises_replay_miss_error_even_when_the_sdk_wraps_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "anthropic-miss.jsonl"
    with (
        FakeLLMServer(echo_script()) as server,
        cassette(path),
        anthropic_client(server.anthropic_url) as llm,
    ):
        anthropic_agent(llm)
    with (
        ConnectionCounter() as port,
        pytest.raises(ReplayMissError, match="last message 'Goodbye'") as caught,
        cassette(path, "replay") as tape,
        anthropic_client(port.url) as llm,
    ):
        llm.messages.create(
            model=ANTHROPIC_MODEL, max_tokens=64, messages=[{"role": "user", "content": "Goodbye"}]
        )
    # anthropic turns transport exceptions into APIConnectionError; leaving the cassette
    # raises the miss itself, so the message that says what to do is the one shown.
    assert isinstance(caught.value.__context__, anthropic.APIConnectionError)
    assert '-      "content": "Hello",' in str(caught.value)
    assert '+      "content": "Goodbye",' in str(caught.value)
    assert (port.connections, tape.stats.missed, tape.stats.unused) == (0, 1, 2)


def test_replayed_calls_in_a_run_are_llm_spans_marked_replayed(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    script = ScriptedLLM(default=Reply("Fine.", tokens_in=12, tokens_out=5))
    with FakeLLMServer(script) as server, cassette(path):
        ctx = RunContext(input="record")
        with ctx.recorder, openai_client(server.openai_url) as llm:
            openai_agent(llm, QUESTIONS[:1])
    live_plain, live_stream = [s for s in ctx.spans if s.kind == "llm"]
    assert live_plain.cost_usd is not None and live_plain.cost_usd > 0
    assert "replayed" not in live_plain.metadata
    with ConnectionCounter() as port, cassette(path):
        ctx = RunContext(input="replay")
        with ctx.recorder, openai_client(port.openai_url) as llm:
            openai_agent(llm, QUESTIONS[:1])
    plain, streamed = [s for s in ctx.spans if s.kind == "llm"]
    for span, live in ((plain, live_plain), (streamed, live_stream)):
        assert span.status == "success"
        assert span.metadata["replayed"] is True
        assert (span.model, span.tokens_in, span.tokens_out) == (OPENAI_MODEL, 12, 5)
        assert span.cost_usd == 0.0
        assert span.metadata["recorded_cost_usd"] == pytest.approx(live.cost_usd)
        assert span.output == live.output
    assert streamed.metadata["stream"] is True
    assert streamed.metadata["stream_sse"] == live_stream.metadata["stream_sse"]


def test_a_miss_in_a_run_is_an_error_span_and_never_a_live_call(tmp_path: Path) -> None:
    path = tmp_path / "miss-span.jsonl"
    with (
        FakeLLMServer(echo_script()) as server,
        cassette(path),
        openai_client(server.openai_url) as llm,
    ):
        openai_agent(llm, QUESTIONS[:1])
    ctx = RunContext(input="replay")
    with (
        ConnectionCounter() as port,
        pytest.raises(ReplayMissError),
        cassette(path, "replay"),
        ctx.recorder,
        openai_client(port.openai_url) as llm,
    ):
        openai_agent(llm, ["a question never recorded"])
    (span,) = [s for s in ctx.spans if s.kind == "llm"]
    assert span.status == "error"
    assert span.error is not None and span.error.type == "ReplayMissError"
    assert port.connections == 0
