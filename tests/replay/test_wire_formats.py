"""Wire formats beyond chat completions and messages: OpenAI Responses, Azure OpenAI
deployment paths, Gemini generateContent, Ollama chat/generate, each JSON and streamed.
Captured over real HTTP from the fake server (model, tokens, the assembled answer), then
replayed from a cassette, and from the recorded trace, with the network closed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import httpx2
import pytest
from tests.integrations.conftest import active_run, llm_spans
from tests.replay.cassette_support import ConnectionCounter

from scenarist.replay import cassette
from scenarist.replay.step_replay import ReplayOptions
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM

MOCKED = ReplayOptions(mock_llm_responses=True)  # Veval's default replays live

GEMINI = "/v1beta/models/gemini-2.0-flash"


class Format(NamedTuple):
    path: str
    body: dict[str, Any]
    answer: Callable[[bytes], str]  # the text of a raw response body
    span: str
    model: str


def _json(raw: bytes) -> Any:
    return json.loads(raw)


def _sse(raw: bytes) -> list[Any]:
    lines = raw.decode().replace("\r\n", "\n").split("\n")
    return [json.loads(line[6:]) for line in lines if line.startswith("data: {")]


def _lines(raw: bytes) -> list[Any]:
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def _gemini_text(chunks: list[Any]) -> str:
    return "".join(
        p.get("text", "") for c in chunks for p in c["candidates"][0]["content"]["parts"]
    )


MESSAGES = [{"role": "user", "content": "Where is my parcel?"}]
CONTENTS = [{"role": "user", "parts": [{"text": "Where is my parcel?"}]}]

FORMATS = {
    "responses": Format(
        "/v1/responses",
        {"model": "gpt-4.1-mini", "input": "Where is my parcel?"},
        lambda raw: _json(raw)["output"][0]["content"][0]["text"],
        "openai.responses",
        "gpt-4.1-mini",
    ),
    "responses-sse": Format(
        "/v1/responses",
        {"model": "gpt-4.1-mini", "input": "Where is my parcel?", "stream": True},
        lambda raw: "".join(e.get("delta", "") for e in _sse(raw)),
        "openai.responses",
        "gpt-4.1-mini",
    ),
    "azure": Format(
        "/openai/deployments/support-bot/chat/completions?api-version=2024-10-21",
        {"messages": MESSAGES},
        lambda raw: _json(raw)["choices"][0]["message"]["content"],
        "openai.chat.completions",
        "fake-model",
    ),
    "azure-sse": Format(
        "/openai/deployments/support-bot/chat/completions?api-version=2024-10-21",
        {"messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}},
        lambda raw: "".join(
            c["choices"][0]["delta"].get("content") or "" for c in _sse(raw) if c["choices"]
        ),
        "openai.chat.completions",
        "fake-model",
    ),
    "gemini": Format(
        GEMINI + ":generateContent",
        {"contents": CONTENTS},
        lambda raw: _gemini_text([_json(raw)]),
        "gemini.generate_content",
        "gemini-2.0-flash",
    ),
    "gemini-sse": Format(
        GEMINI + ":streamGenerateContent?alt=sse",
        {"contents": CONTENTS},
        lambda raw: _gemini_text(_sse(raw)),
        "gemini.stream_generate_content",
        "gemini-2.0-flash",
    ),
    "gemini-array": Format(
        GEMINI + ":streamGenerateContent",
        {"contents": CONTENTS},
        lambda raw: _gemini_text(_json(raw)),
        "gemini.stream_generate_content",
        "gemini-2.0-flash",
    ),
    "ollama-chat": Format(
        "/api/chat",
        {"model": "llama3.2", "messages": MESSAGES, "stream": False},
        lambda raw: _json(raw)["message"]["content"],
        "ollama.chat",
        "llama3.2",
    ),
    "ollama-chat-ndjson": Format(
        "/api/chat",
        {"model": "llama3.2", "messages": MESSAGES},
        lambda raw: "".join(c["message"]["content"] for c in _lines(raw)),
        "ollama.chat",
        "llama3.2",
    ),
    "ollama-generate": Format(
        "/api/generate",
        {"model": "llama3.2", "prompt": "Where is my parcel?", "stream": False},
        lambda raw: _json(raw)["response"],
        "ollama.generate",
        "llama3.2",
    ),
    "ollama-generate-ndjson": Format(
        "/api/generate",
        {"model": "llama3.2", "prompt": "Where is my parcel?"},
        lambda raw: "".join(c["response"] for c in _lines(raw)),
        "ollama.generate",
        "llama3.2",
    ),
}
ANSWER = "It left the depot this morning."


def _call(base: str, fmt: Format) -> str:
    with httpx2.Client() as http, http.stream("POST", base + fmt.path, json=fmt.body) as reply:
        assert reply.status_code == 200, reply.read()
        return fmt.answer(reply.read())


@pytest.mark.parametrize("name", FORMATS)
def test_captured_then_replayed_with_the_network_closed(name: str, tmp_path: Path) -> None:
    fmt = FORMATS[name]
    path = tmp_path / f"{name}.jsonl"
    script = ScriptedLLM(default=Reply(ANSWER, tokens_in=7, tokens_out=6))
    with FakeLLMServer(script) as server, active_run() as ctx, cassette(path, "record"):
        assert _call(server.url, fmt) == ANSWER
    (span,) = llm_spans(ctx)
    assert (span.name, span.model, span.tokens_in, span.tokens_out) == (
        fmt.span,
        fmt.model,
        7,
        6,
    )
    assert ANSWER in json.dumps(span.output)  # the assembled answer, not raw chunks
    with ConnectionCounter() as port, active_run() as replay, cassette(path, "replay") as tape:
        assert _call(port.url, fmt) == ANSWER
    assert port.connections == 0 and tape.stats.faithful
    (served,) = llm_spans(replay)
    assert served.metadata["replayed"] and (served.tokens_in, served.tokens_out) == (7, 6)


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["gemini-sse", "gemini-array", "ollama-chat-ndjson", "responses"])
async def test_a_recorded_trace_serves_the_format_with_the_network_closed(name: str) -> None:
    from scenarist import Client, RunContext
    from scenarist.store import MemoryStore

    fmt = FORMATS[name]
    script = ScriptedLLM(default=Reply(ANSWER, tokens_in=7, tokens_out=6))
    client = Client(store=MemoryStore())

    def agent_for(base: str) -> Any:
        async def agent(ctx: RunContext) -> str:
            async with httpx2.AsyncClient() as http:
                reply = await http.post(base + fmt.path, json=fmt.body)
            return fmt.answer(reply.content)

        return agent

    with FakeLLMServer(script) as server:
        assert await client.run_async("formats", agent_for(server.url), input="q") == ANSWER
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    with ConnectionCounter() as port:
        result = await client.replay_async(record, agent_for(port.url), MOCKED)
    assert result.passed, result.failures
    assert result.output == ANSWER and port.connections == 0
    assert result.fidelity.live == 0
