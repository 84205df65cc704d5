"""The Anthropic adapter through the official SDK against FakeLLMServer."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from scenarist.providers import AnthropicProvider, ProviderError, StructuredOutputError
from scenarist.testing import FakeLLMServer, Reply, ToolCall

pytestmark = pytest.mark.anyio

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"}]
VERDICT = {
    "type": "object",
    "properties": {"passed": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["passed", "reason"],
}


def provider(server: FakeLLMServer, **options: Any) -> AnthropicProvider:
    options.setdefault("backoff_s", 0.01)
    return AnthropicProvider(
        "claude-3-5-haiku-latest", base_url=server.anthropic_url, api_key="sk-ant", **options
    )


async def test_anthropic_chat_sends_system_apart_and_prices_the_call(
    server: FakeLLMServer,
) -> None:
    server.script.add(Reply("Hello.", tokens_in=10, tokens_out=2))
    answer = await provider(server).chat(MESSAGES)
    assert (answer.text, answer.tokens_in, answer.tokens_out) == ("Hello.", 10, 2)
    assert answer.cost_usd is not None and answer.cost_usd > 0
    body = server.requests[0].body
    assert body["system"] == "Be brief."
    assert body["messages"] == [{"role": "user", "content": "Hi?"}]
    assert body["max_tokens"] == 1024 and "temperature" not in body
    assert "tools" not in body


async def test_anthropic_structured_output_is_a_forced_tool_call(server: FakeLLMServer) -> None:
    server.script.add(Reply(tool_calls=[ToolCall("answer", {"passed": True, "reason": "ok"})]))
    answer = await provider(server).chat(MESSAGES, json_schema=VERDICT)
    assert answer.parsed == {"passed": True, "reason": "ok"}
    body = server.requests[0].body
    assert body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert body["tools"][0]["input_schema"] == VERDICT


async def test_anthropic_non_object_schema_is_wrapped(server: FakeLLMServer) -> None:
    server.script.add(Reply(tool_calls=[ToolCall("answer", {"value": ["a", "b"]})]))
    schema = {"type": "array", "items": {"type": "string"}}
    answer = await provider(server).chat(MESSAGES, json_schema=schema)
    assert answer.parsed == ["a", "b"]
    assert server.requests[0].body["tools"][0]["input_schema"]["required"] == ["value"]


async def test_anthropic_text_answer_is_parsed_strictly(server: FakeLLMServer) -> None:
    server.script.add('{"passed": false, "reason": "text"}')
    answer = await provider(server).chat(MESSAGES, json_schema=VERDICT)
    assert answer.parsed == {"passed": False, "reason": "text"}


async def test_anthropic_invalid_tool_input_fails_after_retries(server: FakeLLMServer) -> None:
    server.script.add(*[Reply(tool_calls=[ToolCall("answer", {"passed": "maybe"})])] * 2)
    with pytest.raises(StructuredOutputError, match=r"in 2 attempt\(s\)"):
        await provider(server, json_retries=1).chat(MESSAGES, json_schema=VERDICT)
    assert len(server.requests) == 2


async def test_anthropic_refusal_is_surfaced(server: FakeLLMServer) -> None:
    server.script.add(Reply(refusal="I won't do that."))
    answer = await provider(server).chat(MESSAGES, json_schema=VERDICT)
    assert answer.refusal == "I won't do that."
    assert answer.parsed is None


async def test_anthropic_429_honours_retry_after(server: FakeLLMServer, waits: list[float]) -> None:
    server.script.add(Reply(status=429, headers={"retry-after": "0.3"}), "done")
    answer = await provider(server, backoff_s=5.0).chat(MESSAGES)
    assert answer.text == "done"
    assert waits == [0.3]  # the server's 0.3 s, not the 5 s backoff
    assert len(server.requests) == 2


async def test_anthropic_server_errors_exhaust_retries(server: FakeLLMServer) -> None:
    server.script.add(*[Reply(status=500, error="boom")] * 2)
    with pytest.raises(ProviderError, match=r"after 2 attempt\(s\): HTTP 500"):
        await provider(server, max_retries=1).chat(MESSAGES)


async def test_anthropic_has_no_embeddings(server: FakeLLMServer) -> None:
    with pytest.raises(ProviderError, match="no embeddings API"):
        await provider(server).embed(["x"])


def test_anthropic_missing_key_names_the_variable() -> None:
    with pytest.raises(ProviderError, match="set the ANTHROPIC_API_KEY environment variable"):
        AnthropicProvider("claude-3-5-haiku-latest")


def test_anthropic_missing_sdk_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ProviderError, match=r"pip install 'scenarist\[anthropic\]'"):
        AnthropicProvider("claude-3-5-haiku-latest", api_key="k")
