"""LLM calls made with ``aiohttp``: recorded in cassettes and served strictly (JSON and
SSE, OpenAI and Anthropic, error statuses, concurrent lanes), served from recorded traces
(inside tracked steps too), refused by ``TestClient``; never sent to the network."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from tests.integrations.conftest import active_run, llm_spans
from tests.replay.cassette_support import ConnectionCounter, echo_script

from scenarist import Client, ReplayOptions, RunContext, ScenarioItem, TraceAssert
from scenarist.errors import ReplayMissError
from scenarist.model.record import TraceRecord
from scenarist.replay import cassette
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer, FakeRequest, Reply, ScriptedLLM, TestClient

MOCKED = ReplayOptions(mock_llm_responses=True)  # Veval's default replays live

pytestmark = pytest.mark.anyio

ANSWER = "It left the depot this morning."
OPENAI_MODEL = "gpt-4o-mini"
ANTHROPIC_MODEL = "claude-3-5-haiku-latest"

Ask = Callable[[str, str], Awaitable[Any]]
"""An agent's call: (server base URL, question) -> what the caller read."""


def _openai_body(question: str, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": OPENAI_MODEL,
        "messages": [{"role": "user", "content": question}],
    }
    if stream:
        body.update(stream=True, stream_options={"include_usage": True})
    return body


def _events(raw: bytes) -> list[Any]:
    return [json.loads(line[6:]) for line in raw.splitlines() if line.startswith(b"data: {")]


async def openai_json(base: str, question: str) -> Any:
    async with (
        aiohttp.ClientSession() as http,
        http.post(base + "/v1/chat/completions", json=_openai_body(question, False)) as reply,
    ):
        return await reply.json()


async def openai_sse(base: str, question: str) -> Any:
    async with (
        aiohttp.ClientSession() as http,
        http.post(base + "/v1/chat/completions", json=_openai_body(question, True)) as reply,
    ):
        raw = b"".join([line async for line in reply.content])
    deltas = [e["choices"][0]["delta"].get("content") or "" for e in _events(raw) if e["choices"]]
    return "".join(deltas)


async def _anthropic(base: str, question: str, stream: bool) -> bytes:
    body = {
        "model": ANTHROPIC_MODEL,
        "max_tokens": 64,
        "messages": [{"role": "user", "content": question}],
        "stream": stream,
    }
    headers = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}
    async with (
        aiohttp.ClientSession(headers=headers) as http,
        http.post(
            base + "/v1/messages",
            data=json.dumps(body),
            headers={"content-type": "application/json"},
        ) as reply,
    ):
        return await reply.read()


async def anthropic_json(base: str, question: str) -> Any:
    return json.loads(await _anthropic(base, question, False))["content"][0]["text"]


async def anthropic_sse(base: str, question: str) -> Any:
    events = _events(await _anthropic(base, question, True))
    return "".join(e["delta"].get("text", "") for e in events if e["type"] == "content_block_delta")


CALLS = [
    pytest.param(openai_json, id="openai-json"),
    pytest.param(openai_sse, id="openai-sse"),
    pytest.param(anthropic_json, id="anthropic-json"),
    pytest.param(anthropic_sse, id="anthropic-sse"),
]


@pytest.mark.parametrize("ask", CALLS)
async def test_recorded_then_replayed_strictly_with_the_network_closed(
    ask: Ask, tmp_path: Path
) -> None:
    path = tmp_path / "tape.jsonl"
    script = ScriptedLLM(default=Reply(ANSWER, tokens_in=7, tokens_out=6))
    with FakeLLMServer(script) as server, active_run() as ctx, cassette(path, "record") as tape:
        live = await ask(server.url, "Where is my parcel?")
    assert ANSWER in json.dumps(live)
    assert tape.stats.live == 1
    (recorded,) = llm_spans(ctx)
    assert (recorded.tokens_in, recorded.tokens_out) == (7, 6)
    with ConnectionCounter() as port, active_run() as replay, cassette(path, "replay") as tape:
        assert await ask(port.url, "Where is my parcel?") == live
    assert port.connections == 0
    assert tape.stats.faithful and (tape.stats.replayed, tape.stats.live) == (1, 0)
    (served,) = llm_spans(replay)
    assert served.metadata["replayed"] is True and served.cost_usd == 0.0
    assert served.metadata["recorded_cost_usd"] == recorded.cost_usd
    assert (served.output, served.tokens_in, served.tokens_out) == (recorded.output, 7, 6)


async def _status_and_error(base: str) -> tuple[int, Any, int | None]:
    """What an agent sees of an error answer: status, body, ``raise_for_status``'s status."""
    async with aiohttp.ClientSession() as http:
        url = base + "/v1/chat/completions"
        async with http.post(url, json=_openai_body("q", False)) as reply:
            body = await reply.json()
            try:
                reply.raise_for_status()
            except aiohttp.ClientResponseError as error:
                return reply.status, body, error.status
            return reply.status, body, None


@pytest.mark.parametrize("status", [400, 429, 500, 503])
async def test_error_statuses_are_recorded_and_replayed_with_their_status(
    status: int, tmp_path: Path
) -> None:
    path = tmp_path / "errors.jsonl"
    script = ScriptedLLM([Reply(status=status, error="over capacity")])
    with FakeLLMServer(script) as server, cassette(path, "record"):
        live = await _status_and_error(server.url)
    assert live[0] == live[2] == status and live[1]["error"]["message"] == "over capacity"
    with ConnectionCounter() as port, active_run() as ctx, cassette(path, "replay") as tape:
        assert await _status_and_error(port.url) == live
        async with aiohttp.ClientSession(raise_for_status=True) as strict:
            with pytest.raises(ReplayMissError):  # served once: a second call is a miss
                await strict.post(port.url + "/v1/chat/completions", json=_openai_body("q", False))
        tape.misses.clear()  # that miss was the point
    assert port.connections == 0
    (span, missed) = llm_spans(ctx)
    assert span.status == "error" and span.metadata["http_status"] == status
    assert missed.error is not None and missed.error.type == "ReplayMissError"


async def test_a_changed_request_is_a_miss_never_sent(tmp_path: Path) -> None:
    path = tmp_path / "miss.jsonl"
    with FakeLLMServer(ScriptedLLM(default=Reply(ANSWER))) as server, cassette(path, "record"):
        await openai_json(server.url, "Where is my parcel?")
    tape = cassette(path, "replay")
    with ConnectionCounter() as port:
        with pytest.raises(ReplayMissError, match=r"last message 'Where is my refund\?'") as miss:
            async with tape:
                await openai_json(port.url, "Where is my refund?")
        assert port.connections == 0
    assert "POST /v1/chat/completions" in str(miss.value)
    stats = tape.stats
    assert (stats.missed, stats.replayed, stats.unused, stats.live) == (1, 0, 1, 0)
    assert not stats.faithful


async def test_a_response_never_read_is_served_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "unread.jsonl"
    with FakeLLMServer(ScriptedLLM(default=Reply(ANSWER))) as server, cassette(path, "record"):
        await openai_sse(server.url, "q")
    with ConnectionCounter() as port, active_run() as ctx, cassette(path, "replay") as tape:
        async with aiohttp.ClientSession() as http:
            url = port.url + "/v1/chat/completions"
            reply = await http.post(url, json=_openai_body("q", True))
            assert reply.status == 200  # and the body is never read
    assert port.connections == 0 and tape.stats.faithful
    (span,) = llm_spans(ctx)
    assert span.status == "success" and span.output["choices"][0]["message"]["content"] == ANSWER


def lane_agent(rng: random.Random) -> Callable[[str], Any]:
    """Two calls with the same prompt, each after a random pause (the timing varies)."""

    def make(base: str) -> Any:
        async def agent(ctx: RunContext) -> list[str]:
            answers = []
            for _ in range(2):
                await asyncio.sleep(rng.random() / 200)
                reply = await openai_json(base, "What is the refund policy?")
                answers.append(reply["choices"][0]["message"]["content"])
            return answers

        return agent

    return make


async def test_twenty_parallel_items_each_replay_their_own_responses(tmp_path: Path) -> None:
    path = tmp_path / "lanes.jsonl"
    client = Client(store=MemoryStore())
    items = [ScenarioItem(name=f"customer-{i}", input="refund?") for i in range(20)]

    async def outputs(agent: Any) -> dict[str, Any]:
        result = await client.run_scenario_async("lanes", agent, items=items, max_concurrency=20)
        assert [r.failures for r in result.results] == [[]] * 20
        return {str(r.item.name): r.output for r in result.results}

    with FakeLLMServer(echo_script()) as server, cassette(path, "record"):
        recorded = await outputs(lane_agent(random.Random(1))(server.url))
    assert len({a for pair in recorded.values() for a in pair}) == 40  # all distinct
    for seed in (2, 3):  # other timings: the arrival order differs from the recording
        with ConnectionCounter() as nowhere, cassette(path, "replay") as tape:
            replayed = await outputs(lane_agent(random.Random(seed))(nowhere.url))
        assert replayed == recorded
        assert nowhere.connections == 0
        assert tape.stats.faithful and tape.stats.replayed == 40


# -- recorded traces -----------------------------------------------------------------------


def _script() -> ScriptedLLM:
    def reply(request: FakeRequest) -> Reply:
        text = "refunds" if request.text.startswith("classify") else "Refunds take 5 days."
        return Reply(text, tokens_in=20, tokens_out=5)

    return ScriptedLLM(reply)


def support_agent(base: str, *, answer_suffix: str = "") -> Any:
    """classify (an aiohttp JSON call), lookup (a tool), answer (an aiohttp stream)."""

    async def classify(question: str) -> str:
        reply = await openai_json(base, f"classify: {question}")
        return str(reply["choices"][0]["message"]["content"])

    async def agent(ctx: RunContext) -> str:
        question = str(ctx.input)
        label = await ctx.track_step_async("classify", question, lambda: classify(question))
        policy = await ctx.track_step_async("lookup", label, lambda: f"policy for {label}")
        prompt = f"answer {question} with {policy}{answer_suffix}"
        return str(await ctx.track_step_async("answer", prompt, lambda: openai_sse(base, prompt)))

    return agent


async def _record(client: Client, agent: Callable[[str], Any]) -> tuple[TraceRecord, Any]:
    with FakeLLMServer(_script()) as server:
        output = await client.run_async("support", agent(server.url), input="refund?")
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    return record, output


async def test_a_trace_backed_item_replays_aiohttp_calls_in_tracked_steps() -> None:
    client = Client(store=MemoryStore())
    record, live = await _record(client, support_agent)
    assert [s.name for s in record.spans if s.kind == "llm"] == ["openai.chat.completions"] * 2
    with ConnectionCounter() as nowhere:
        result = await client.run_scenario_async(
            "replay",
            support_agent(nowhere.url),
            [TraceAssert.no_errors(), TraceAssert.max_llm_calls(2), TraceAssert.max_steps(3)],
            items=[ScenarioItem(name="production", trace_id=record.trace_id)],
        )
    item = result.results[0]
    assert item.passed, item.failures
    assert item.output == live == "Refunds take 5 days."
    assert nowhere.connections == 0
    fidelity = item.replay.fidelity
    assert fidelity.live == 0 and fidelity.is_faithful


async def test_a_step_that_reruns_gets_its_aiohttp_call_from_the_recording() -> None:
    client = Client(store=MemoryStore())
    record, _ = await _record(client, support_agent)
    with ConnectionCounter() as nowhere:
        result = await client.replay_async(
            record.trace_id,
            support_agent(nowhere.url, answer_suffix=" (new prompt)"),
            ReplayOptions(mock_llm_responses=True, on_divergence="live"),
        )
    assert nowhere.connections == 0
    assert result.output == "Refunds take 5 days."  # the recorded answer, though the step ran
    outcomes = [(b.step, b.outcome) for b in result.fidelity.bindings]
    assert outcomes == [("classify", "matched"), ("lookup", "matched"), ("answer", "live")]
    assert not any("Replay never made" in f for f in result.failures), result.failures


def plain_agent(base: str, *, suffix: str = "") -> Any:
    async def agent(ctx: RunContext) -> str:
        return str(await openai_sse(base, f"{ctx.input}{suffix}"))

    return agent


async def test_calls_outside_any_step_replay_from_the_trace() -> None:
    client = Client(store=MemoryStore())
    record, live = await _record(client, plain_agent)
    assert [s.kind for s in record.spans] == ["llm"]
    with ConnectionCounter() as nowhere:
        result = await client.replay_async(record, plain_agent(nowhere.url), MOCKED)
    assert result.passed, result.failures
    assert result.output == live and nowhere.connections == 0
    assert result.fidelity.live == 0 and result.fidelity.is_faithful


async def test_a_changed_call_in_a_trace_replay_fails_and_is_never_sent() -> None:
    client = Client(store=MemoryStore())
    with FakeLLMServer(_script()) as server:
        await client.run_async("support", plain_agent(server.url), input="refund?")
        (record,) = client.store.traces.values()  # type: ignore[attr-defined]
        before = len(server.requests)
        result = await client.replay_async(
            record, plain_agent(server.url, suffix=" (changed)"), MOCKED
        )
        assert len(server.requests) == before  # the server is up, and nothing reached it
    assert not result.passed
    assert any("no recorded LLM call matches" in f for f in result.failures), result.failures
    # the agent raised the miss: Veval's order names the exception first, and stops there
    assert result.failures[0].startswith("Replay threw exception: Replay of trace")


async def test_the_test_client_blocks_live_aiohttp_calls_and_names_them() -> None:
    client = TestClient()
    with FakeLLMServer(ScriptedLLM([Reply("live answer")])) as server:
        result = await client.run_scenario_async(
            "blocked", plain_agent(server.url), items=[ScenarioItem(input="hi")]
        )
        assert server.requests == []  # nothing reached the provider
    (failure,) = result.results[0].failures
    assert failure.startswith("Agent threw exception: TestClient blocked a live LLM call: POST")
    assert "/v1/chat/completions (model 'gpt-4o-mini')" in failure


@pytest.mark.parametrize(
    ("ask", "words"), [(openai_json, 60_000), (openai_sse, 4_000)], ids=["json", "sse"]
)
async def test_a_large_answer_arrives_whole(ask: Ask, words: int, tmp_path: Path) -> None:
    """Bodies past aiohttp's read buffer (~600 KB of JSON, ~800 KB of events: one per
    word) pause the writing until the caller reads on."""
    path = tmp_path / "large.jsonl"
    text = " ".join(f"word{i}" for i in range(words))
    with FakeLLMServer(ScriptedLLM(default=Reply(text))) as server, cassette(path, "record"):
        live = await ask(server.url, "q")
    assert text in json.dumps(live)
    with ConnectionCounter() as port, active_run() as ctx, cassette(path, "replay") as tape:
        assert await ask(port.url, "q") == live
    assert tape.stats.faithful
    (span,) = llm_spans(ctx)
    assert span.output["choices"][0]["message"]["content"] == text


async def _openai_sdk(base: str, stream: bool) -> str:
    import openai

    http = openai.DefaultAioHttpClient()  # the SDK's aiohttp transport, not httpx's
    async with openai.AsyncOpenAI(
        api_key="sk-test", base_url=base + "/v1", max_retries=0, http_client=http
    ) as llm:
        messages: Any = [{"role": "user", "content": "Where is my parcel?"}]
        if not stream:
            reply = await llm.chat.completions.create(model=OPENAI_MODEL, messages=messages)
            return reply.choices[0].message.content or ""
        chunks = await llm.chat.completions.create(
            model=OPENAI_MODEL,
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
        )
        return "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])


async def _anthropic_sdk(base: str, stream: bool) -> str:
    import anthropic

    http = anthropic.DefaultAioHttpClient()
    async with anthropic.AsyncAnthropic(
        api_key="sk-ant-test", base_url=base, max_retries=0, http_client=http
    ) as llm:
        messages: Any = [{"role": "user", "content": "Where is my parcel?"}]
        if not stream:
            reply = await llm.messages.create(
                model=ANTHROPIC_MODEL, max_tokens=64, messages=messages
            )
            return "".join(block.text for block in reply.content if block.type == "text")
        async with llm.messages.stream(
            model=ANTHROPIC_MODEL, max_tokens=64, messages=messages
        ) as events:
            return "".join([text async for text in events.text_stream])


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("sdk", [_openai_sdk, _anthropic_sdk], ids=["openai", "anthropic"])
async def test_the_sdks_aiohttp_clients_are_captured_once_and_replayed(
    sdk: Callable[[str, bool], Awaitable[str]], stream: bool, tmp_path: Path
) -> None:
    path = tmp_path / "sdk.jsonl"
    script = ScriptedLLM(default=Reply(ANSWER, tokens_in=7, tokens_out=6))
    with FakeLLMServer(script) as server, active_run() as ctx, cassette(path, "record") as tape:
        assert await sdk(server.url, stream) == ANSWER
    (span,) = llm_spans(ctx)  # one span: the httpx transport is aiohttp's, hooked there only
    assert (span.tokens_in, span.tokens_out, tape.stats.live) == (7, 6, 1)
    with ConnectionCounter() as port, active_run() as replay, cassette(path, "replay") as tape:
        assert await sdk(port.url, stream) == ANSWER
    assert port.connections == 0 and tape.stats.faithful
    (served,) = llm_spans(replay)
    assert served.metadata["replayed"] is True


async def test_a_streamed_request_body_is_read_whole_and_served(tmp_path: Path) -> None:
    """An async generator as ``data=`` is sent chunked: the call is still the same call."""
    path = tmp_path / "chunked.jsonl"
    with FakeLLMServer(ScriptedLLM(default=Reply(ANSWER))) as server, cassette(path, "record"):
        live = await openai_json(server.url, "Where is my parcel?")
    raw = json.dumps(_openai_body("Where is my parcel?", False)).encode()

    async def pieces() -> Any:
        for at in range(0, len(raw), 10):
            yield raw[at : at + 10]

    with ConnectionCounter() as port, active_run() as ctx, cassette(path, "replay") as tape:
        async with (
            aiohttp.ClientSession() as http,
            http.post(port.url + "/v1/chat/completions", data=pieces()) as reply,
        ):
            assert reply.request_info.headers.get("transfer-encoding") == "chunked"
            assert await reply.json() == live
    assert port.connections == 0 and tape.stats.faithful
    (span,) = llm_spans(ctx)
    assert span.input == _openai_body("Where is my parcel?", False)
