"""Every HTTP client an agent may use, written as users write agents, recorded in a
cassette against the fake provider and replayed strictly: the same answers, not one
request reaching the server, the recorded cost kept and nothing spent; a changed request
fails loudly, naming the call and how to re-record, and never goes live."""

from __future__ import annotations

import asyncio
import contextvars
import json
import urllib.request
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import aiohttp
import anthropic
import httpx
import httpx2
import openai
import pytest
import requests
import urllib3
from tests.integrations.conftest import active_run, llm_spans
from tests.replay.cassette_support import ANTHROPIC_KEY, OPENAI_KEY, echo_script

from scenarist.errors import LiveCallBlockedError, ReplayMissError
from scenarist.replay import cassette
from scenarist.testing import FakeLLMServer, TestClient

MODEL, CLAUDE = "gpt-4o-mini", "claude-3-5-haiku-latest"
Ask = Callable[[str, str], str]
AskAsync = Callable[[str, str], Awaitable[str]]


def _chat(question: str, stream: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"model": MODEL, "messages": [{"role": "user", "content": question}]}
    if stream:  # usage in the last event: what a stream is priced by
        body.update(stream=True, stream_options={"include_usage": True})
    return body


def _sse_text(lines: list[str]) -> str:
    """The text of an OpenAI chat stream read as lines (``data: {...}``)."""
    text = ""
    for line in lines:
        if line.startswith("data: {"):
            for choice in json.loads(line[6:])["choices"]:
                text += choice["delta"].get("content") or ""
    return text


def _openai(base: str) -> openai.OpenAI:
    return openai.OpenAI(api_key=OPENAI_KEY, base_url=base + "/v1", max_retries=0)


def _anthropic(base: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=ANTHROPIC_KEY, base_url=base, max_retries=0)


# -- sync agents ---------------------------------------------------------------------------


def openai_create(base: str, question: str) -> str:
    with _openai(base) as llm:
        reply = llm.chat.completions.create(**_chat(question))
    return reply.choices[0].message.content or ""


def openai_stream(base: str, question: str) -> str:
    with _openai(base) as llm:
        chunks = llm.chat.completions.create(**_chat(question, stream=True))
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def openai_raw_response(base: str, question: str) -> str:
    with _openai(base) as llm:
        raw = llm.chat.completions.with_raw_response.create(**_chat(question))
        assert raw.headers.get("x-request-id", "").startswith("req_fake_")
        return raw.parse().choices[0].message.content or ""


def openai_streaming_response(base: str, question: str) -> str:
    with (
        _openai(base) as llm,
        llm.chat.completions.with_streaming_response.create(**_chat(question, True)) as reply,
    ):
        return _sse_text(list(reply.iter_lines()))


def anthropic_create(base: str, question: str) -> str:
    with _anthropic(base) as llm:
        reply = llm.messages.create(
            model=CLAUDE, max_tokens=64, messages=[{"role": "user", "content": question}]
        )
    return "".join(block.text for block in reply.content if block.type == "text")


def anthropic_stream(base: str, question: str) -> str:
    with (
        _anthropic(base) as llm,
        llm.messages.stream(
            model=CLAUDE, max_tokens=64, messages=[{"role": "user", "content": question}]
        ) as stream,
    ):
        return "".join(stream.text_stream)


def anthropic_raw_response(base: str, question: str) -> str:
    with _anthropic(base) as llm:
        raw = llm.messages.with_raw_response.create(
            model=CLAUDE, max_tokens=64, messages=[{"role": "user", "content": question}]
        )
        message = raw.parse()
    return "".join(block.text for block in message.content if block.type == "text")


def httpx_post(base: str, question: str) -> str:
    with httpx.Client(base_url=base) as http:
        reply = http.post("/v1/chat/completions", json=_chat(question))
        reply.raise_for_status()
    return str(reply.json()["choices"][0]["message"]["content"])


def httpx2_stream_lines(base: str, question: str) -> str:
    with (
        httpx2.Client(base_url=base) as http,
        http.stream("POST", "/v1/chat/completions", json=_chat(question, True)) as reply,
    ):
        return _sse_text(list(reply.iter_lines()))


def httpx_stream_lines(base: str, question: str) -> str:
    with (
        httpx.Client(base_url=base) as http,
        http.stream("POST", "/v1/chat/completions", json=_chat(question, True)) as reply,
    ):
        return _sse_text(list(reply.iter_lines()))


def requests_session(base: str, question: str) -> str:
    with requests.Session() as http:
        http.headers["Authorization"] = f"Bearer {OPENAI_KEY}"
        reply = http.post(base + "/v1/chat/completions", json=_chat(question), timeout=30)
        reply.raise_for_status()
    return str(reply.json()["choices"][0]["message"]["content"])


def requests_stream_lines(base: str, question: str) -> str:
    reply = requests.post(
        base + "/v1/chat/completions", json=_chat(question, True), stream=True, timeout=30
    )
    with reply:
        return _sse_text(list(reply.iter_lines(decode_unicode=True)))


def urllib3_request(base: str, question: str) -> str:
    with urllib3.PoolManager() as http:
        reply = http.request("POST", base + "/v1/chat/completions", json=_chat(question))
    return str(reply.json()["choices"][0]["message"]["content"])


SYNC_AGENTS = [
    openai_create,
    openai_stream,
    openai_raw_response,
    openai_streaming_response,
    anthropic_create,
    anthropic_stream,
    anthropic_raw_response,
    httpx_post,
    httpx_stream_lines,
    httpx2_stream_lines,
    requests_session,
    requests_stream_lines,
    urllib3_request,
]


# -- async agents --------------------------------------------------------------------------


async def async_openai_stream(base: str, question: str) -> str:
    async with openai.AsyncOpenAI(api_key=OPENAI_KEY, base_url=base + "/v1", max_retries=0) as llm:
        chunks = await llm.chat.completions.create(**_chat(question, stream=True))
        return "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])


async def async_anthropic_aiohttp(base: str, question: str) -> str:
    async with anthropic.AsyncAnthropic(
        api_key=ANTHROPIC_KEY,
        base_url=base,
        max_retries=0,
        http_client=anthropic.DefaultAioHttpClient(),
    ) as llm:
        reply = await llm.messages.create(
            model=CLAUDE, max_tokens=64, messages=[{"role": "user", "content": question}]
        )
    return "".join(block.text for block in reply.content if block.type == "text")


async def async_httpx_aiter_bytes(base: str, question: str) -> str:
    async with (
        httpx.AsyncClient(base_url=base) as http,
        http.stream("POST", "/v1/chat/completions", json=_chat(question, True)) as reply,
    ):
        raw = b"".join([chunk async for chunk in reply.aiter_bytes()])
    return _sse_text(raw.decode().splitlines())


async def aiohttp_json(base: str, question: str) -> str:
    async with (
        aiohttp.ClientSession() as http,
        http.post(base + "/v1/chat/completions", json=_chat(question)) as reply,
    ):
        reply.raise_for_status()
        return str((await reply.json())["choices"][0]["message"]["content"])


async def aiohttp_iter_chunked(base: str, question: str) -> str:
    async with (
        aiohttp.ClientSession() as http,
        http.post(base + "/v1/chat/completions", json=_chat(question, True)) as reply,
    ):
        raw = b"".join([chunk async for chunk in reply.content.iter_chunked(7)])
    return _sse_text(raw.decode().splitlines())


ASYNC_AGENTS = [
    async_openai_stream,
    async_anthropic_aiohttp,
    async_httpx_aiter_bytes,
    aiohttp_json,
    aiohttp_iter_chunked,
]


def _as_sync(ask: AskAsync) -> Ask:
    def run(base: str, question: str) -> str:
        return asyncio.run(ask(base, question))

    run.__name__ = ask.__name__
    return run


ALL_AGENTS = [
    *(pytest.param(a, id=a.__name__) for a in SYNC_AGENTS),
    *(pytest.param(_as_sync(a), id=a.__name__) for a in ASYNC_AGENTS),
]


# -- record, then replay -------------------------------------------------------------------


@pytest.mark.parametrize("ask", ALL_AGENTS)
def test_each_client_replays_what_it_recorded_with_no_request_reaching_the_server(
    ask: Ask, tmp_path: Path
) -> None:
    path = tmp_path / "tape.jsonl"
    with FakeLLMServer(echo_script()) as server:
        with active_run() as recording, cassette(path, "record") as tape:
            first = ask(server.url, "Where is my parcel? ✈ «ça» 包裹")
            second = ask(server.url, "And my refund?")
        assert tape.stats.live == 2
        assert first.startswith("echo 1: ") and second.startswith("echo 2: ")
        hits = len(server.requests)

        with active_run() as replaying, cassette(path, "replay") as tape:
            assert ask(server.url, "Where is my parcel? ✈ «ça» 包裹") == first
            assert ask(server.url, "And my refund?") == second
        assert len(server.requests) == hits  # not one request reached the server
        assert tape.stats.faithful, tape.stats

        with pytest.raises(ReplayMissError) as missed, cassette(path, "replay"):
            ask(server.url, "Where is my parcel? (asked otherwise)")
        assert len(server.requests) == hits
    message = str(missed.value)
    assert "POST /v1/chat/completions" in message or "POST /v1/messages" in message
    assert "asked otherwise" in message and "mode='refresh'" in message

    recorded, replayed = llm_spans(recording), llm_spans(replaying)
    assert len(recorded) == len(replayed) == 2
    for live, again in zip(recorded, replayed, strict=True):
        assert live.cost_usd is not None and live.cost_usd > 0
        assert again.cost_usd == 0.0 and again.metadata["replayed"] is True
        assert again.metadata["recorded_cost_usd"] == live.cost_usd
        assert (again.model, again.tokens_in, again.tokens_out) == (
            live.model,
            live.tokens_in,
            live.tokens_out,
        )
    text = path.read_text()
    for secret in (OPENAI_KEY, ANTHROPIC_KEY, "Bearer", "authorization", "x-api-key"):
        assert secret.lower() not in text.lower()


@pytest.mark.anyio
async def test_one_agent_mixing_clients_replays_each_call_in_order(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"

    async def agent(base: str) -> list[str]:
        answers = [await aiohttp_json(base, "same question")]
        answers.append(await asyncio.to_thread(requests_session, base, "same question"))
        answers.append(await async_openai_stream(base, "same question"))
        answers.append(await asyncio.to_thread(urllib3_request, base, "same question"))
        answers.append(await async_httpx_aiter_bytes(base, "same question"))
        return answers

    with FakeLLMServer(echo_script()) as server:
        with cassette(path, "record"):
            recorded = await agent(server.url)
        hits = len(server.requests)
        with cassette(path, "replay") as tape:
            assert await agent(server.url) == recorded
        assert len(server.requests) == hits
    # identical requests (the stream flag aside), each answered by its own recording
    assert [a.split(":")[0] for a in recorded] == [f"echo {n}" for n in range(1, 6)]
    assert tape.stats.faithful, tape.stats


@pytest.mark.parametrize(
    "ask", [openai_create, requests_session, urllib3_request, httpx_post, openai_stream]
)
def test_identical_prompts_from_many_threads_each_get_a_recorded_answer(
    ask: Ask, tmp_path: Path
) -> None:
    path = tmp_path / "threads.jsonl"

    def fan_out(base: str) -> list[str]:
        with ThreadPoolExecutor(8) as pool:  # each thread in the agent's context
            futures = [
                pool.submit(contextvars.copy_context().run, ask, base, "same") for _ in range(16)
            ]
            return [future.result() for future in futures]

    with FakeLLMServer(echo_script()) as server:
        with cassette(path, "record"):
            recorded = fan_out(server.url)
        hits = len(server.requests)
        with cassette(path, "replay") as tape:
            replayed = fan_out(server.url)
        assert len(server.requests) == hits
    assert sorted(recorded) == sorted(replayed)
    assert len(set(replayed)) == 16  # each thread its own recording, none served twice
    assert tape.stats.faithful, tape.stats


@pytest.mark.anyio
async def test_identical_prompts_from_many_tasks_replay_in_recorded_order(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tasks.jsonl"

    async def fan_out(base: str) -> list[str]:
        asks = [aiohttp_json, async_openai_stream] * 6
        return list(await asyncio.gather(*(ask(base, "same") for ask in asks)))

    with FakeLLMServer(echo_script()) as server:
        with cassette(path, "record"):
            recorded = await fan_out(server.url)
        hits = len(server.requests)
        with cassette(path, "replay") as tape:
            replayed = await fan_out(server.url)
        assert len(server.requests) == hits
    assert sorted(recorded) == sorted(replayed)
    assert len(set(replayed)) == 12
    assert tape.stats.faithful, tape.stats


# -- what the capture does not see ---------------------------------------------------------


def test_urllib_request_is_not_captured_and_a_strict_replay_refuses_it(tmp_path: Path) -> None:
    """The standard library's ``urllib.request`` has no hook: recording leaves no span and
    no recording (documented), and a strict replay refuses the call before it connects."""
    path = tmp_path / "urllib.jsonl"

    def ask(base: str) -> str:
        request = urllib.request.Request(
            base + "/v1/chat/completions",
            data=json.dumps(_chat("hello")).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as reply:
            return str(json.loads(reply.read())["choices"][0]["message"]["content"])

    with FakeLLMServer(echo_script()) as server:
        with active_run() as ctx, cassette(path, "record") as tape:
            assert ask(server.url) == "echo 1: hello"
        assert llm_spans(ctx) == [] and tape.stats.live == 0
        hits = len(server.requests)
        tape = cassette(path, "replay")
        with pytest.raises(LiveCallBlockedError, match="/v1/chat/completions"):
            _refused_inside(tape, lambda: ask(server.url))
        assert len(server.requests) == hits
    assert tape.stats.refused == 1


def _refused_inside(tape: Any, call: Callable[[], Any]) -> None:
    """``call`` refused inside the cassette, and the cassette failing when left."""
    with tape, pytest.raises(LiveCallBlockedError):
        call()


def test_a_call_from_an_executor_thread_never_goes_live_during_a_replay(tmp_path: Path) -> None:
    path = tmp_path / "executor.jsonl"

    async def agent(base: str) -> str:  # a sync SDK call off the event loop, as often done
        return await asyncio.get_running_loop().run_in_executor(None, openai_create, base, "q")

    with FakeLLMServer(echo_script()) as server:
        with cassette(path, "record"):
            recorded = asyncio.run(agent(server.url))
        hits = len(server.requests)
        try:
            with cassette(path, "replay"):
                assert asyncio.run(agent(server.url)) == recorded
        except (ReplayMissError, LiveCallBlockedError):
            pass  # refused: fine too, as long as nothing reached the server
        assert len(server.requests) == hits


def test_the_test_client_blocks_an_urllib_request_llm_call() -> None:
    with FakeLLMServer(echo_script()) as server:

        def agent(ctx: Any) -> str:
            request = urllib.request.Request(
                server.openai_url + "/chat/completions",
                data=json.dumps(_chat(str(ctx.input))).encode(),
                headers={"content-type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as reply:
                return str(json.loads(reply.read())["choices"][0]["message"]["content"])

        client = TestClient()
        with pytest.raises(LiveCallBlockedError, match="TestClient blocked a live LLM call"):
            client.run("urllib-agent", agent, input="hello")
        assert len(server.requests) == 0
    assert client.blocked
