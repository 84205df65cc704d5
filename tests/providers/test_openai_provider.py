"""The OpenAI adapter through the official SDK against FakeLLMServer (real HTTP, 127.0.0.1)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from tests.helpers.limits import HANG_S

from scenarist.providers import OpenAIProvider, ProviderError, StructuredOutputError
from scenarist.testing import FakeLLMServer, FakeRequest, Reply, ScriptedLLM

pytestmark = pytest.mark.anyio

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"}]
VERDICT = {
    "type": "object",
    "properties": {"passed": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["passed", "reason"],
}


def provider(server: FakeLLMServer, **options: Any) -> OpenAIProvider:
    options.setdefault("backoff_s", 0.01)
    return OpenAIProvider("gpt-4o-mini", base_url=server.openai_url, api_key="sk-test", **options)


async def test_openai_chat_returns_text_tokens_and_cost(server: FakeLLMServer) -> None:
    server.script.add(Reply("Hello there.", tokens_in=12, tokens_out=5))
    answer = await provider(server).chat(MESSAGES)
    assert answer.text == "Hello there."
    assert (answer.model, answer.tokens_in, answer.tokens_out) == ("gpt-4o-mini", 12, 5)
    assert answer.cost_usd == pytest.approx(12 * 0.15e-6 + 5 * 0.6e-6)
    assert answer.parsed is None and answer.refusal is None
    (request,) = server.requests
    assert request.body["messages"] == MESSAGES
    assert request.body["temperature"] == 0.0
    assert "response_format" not in request.body
    assert request.headers["authorization"] == "Bearer sk-test"


async def test_openai_structured_output_uses_json_schema(server: FakeLLMServer) -> None:
    server.script.add('{"passed": true, "reason": "fine"}')
    answer = await provider(server).chat(MESSAGES, json_schema=VERDICT, max_tokens=50)
    assert answer.parsed == {"passed": True, "reason": "fine"}
    body = server.requests[0].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == VERDICT
    assert body["max_tokens"] == 50


async def test_openai_fenced_json_is_accepted(server: FakeLLMServer) -> None:
    server.script.add('```json\n{"passed": false, "reason": "no"}\n```')
    answer = await provider(server).chat(MESSAGES, json_schema=VERDICT)
    assert answer.parsed == {"passed": False, "reason": "no"}


async def test_openai_malformed_json_is_asked_again_then_fails(server: FakeLLMServer) -> None:
    server.script.add("Sure! passed: yes", '{"passed": "yes"}')
    with pytest.raises(StructuredOutputError) as caught:
        await provider(server, json_retries=1).chat(MESSAGES, json_schema=VERDICT)
    assert len(server.requests) == 2
    message = str(caught.value)
    assert "openai/gpt-4o-mini gave no usable structured answer in 2 attempt(s)" in message
    assert "does not match the schema" in message


async def test_openai_malformed_then_valid_json_succeeds(server: FakeLLMServer) -> None:
    server.script.add("not json", '{"passed": true, "reason": "ok"}')
    answer = await provider(server, json_retries=1).chat(MESSAGES, json_schema=VERDICT)
    assert answer.parsed == {"passed": True, "reason": "ok"}


async def test_openai_falls_back_when_json_schema_is_rejected(server: FakeLLMServer) -> None:
    def reply(request: FakeRequest) -> Reply:
        kind = (request.body.get("response_format") or {}).get("type")
        if kind == "json_schema":
            return Reply(status=400, error="response_format 'json_schema' is not supported")
        return Reply('{"passed": true, "reason": "json mode"}')

    server.script = ScriptedLLM(reply)
    adapter = provider(server)
    answer = await adapter.chat(MESSAGES, json_schema=VERDICT)
    assert answer.parsed == {"passed": True, "reason": "json mode"}
    rejected, second = server.requests
    assert rejected.body["response_format"]["type"] == "json_schema"
    assert second.body["response_format"] == {"type": "json_object", "schema": VERDICT}
    assert "JSON Schema" in second.body["messages"][0]["content"]
    # nothing remembered: the next call sends the same two requests (order-independent replay)
    assert adapter.structured_mode == "auto"
    await adapter.chat(MESSAGES, json_schema=VERDICT)
    assert [r.body["response_format"]["type"] for r in server.requests[2:]] == [
        "json_schema",
        "json_object",
    ]


LLAMA_CPP_REJECTION = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)


async def test_openai_falls_back_on_llama_cpp_servers_500_about_response_format(
    server: FakeLLMServer,
) -> None:
    """llama-cpp-python's server rejects ``json_schema`` with a 500 (seen with 0.3.36)."""

    def reply(request: FakeRequest) -> Reply:
        kind = (request.body.get("response_format") or {}).get("type")
        if kind == "json_schema":
            return Reply(status=500, error=LLAMA_CPP_REJECTION)
        return Reply('{"passed": true, "reason": "json mode"}')

    server.script = ScriptedLLM(reply)
    adapter = provider(server, max_retries=0)
    answer = await adapter.chat(MESSAGES, json_schema=VERDICT)
    assert answer.parsed == {"passed": True, "reason": "json mode"}
    assert [r.body["response_format"]["type"] for r in server.requests] == [
        "json_schema",
        "json_object",
    ]


async def test_openai_other_500s_are_not_taken_for_a_format_rejection(
    server: FakeLLMServer,
) -> None:
    server.script.add(Reply(status=500, error="invalid json in the model output"))
    adapter = provider(server, max_retries=0)
    with pytest.raises(ProviderError, match="HTTP 500"):
        await adapter.chat(MESSAGES, json_schema=VERDICT)
    assert len(server.requests) == 1


async def test_openai_refusal_is_surfaced_without_retry(server: FakeLLMServer) -> None:
    server.script.add(Reply(refusal="I can't help with that."))
    answer = await provider(server).chat(MESSAGES, json_schema=VERDICT)
    assert answer.refusal == "I can't help with that."
    assert answer.parsed is None and answer.text == ""
    assert len(server.requests) == 1


async def test_openai_429_honours_retry_after(server: FakeLLMServer, waits: list[float]) -> None:
    server.script.add(Reply(status=429, error="slow down", headers={"retry-after": "0.4"}), "ok")
    answer = await provider(server, backoff_s=5.0).chat(MESSAGES)
    assert answer.text == "ok"
    assert len(server.requests) == 2
    assert waits == [0.4]  # the server's 0.4 s, not the 5 s backoff


async def test_openai_server_errors_exhaust_retries(server: FakeLLMServer) -> None:
    server.script.add(*[Reply(status=503, error="overloaded")] * 3)
    with pytest.raises(ProviderError) as caught:
        await provider(server, max_retries=2).chat(MESSAGES)
    assert len(server.requests) == 3
    assert "openai/gpt-4o-mini chat failed after 3 attempt(s): HTTP 503: overloaded" in str(
        caught.value
    )


async def test_openai_client_errors_are_not_retried(server: FakeLLMServer) -> None:
    server.script.add(Reply(status=401, error="bad key"))
    with pytest.raises(ProviderError, match="HTTP 401: bad key"):
        await provider(server).chat(MESSAGES)
    assert len(server.requests) == 1


async def test_openai_timeout_is_retried_then_reported(server: FakeLLMServer) -> None:
    # The server answers only once the test is over: without the timeout the call would
    # hang (until pytest's own timeout), whatever the machine's speed.
    over = threading.Event()

    def never_in_time(request: FakeRequest) -> Reply:
        over.wait(HANG_S)
        return Reply("late")

    server.script = ScriptedLLM(never_in_time)
    try:
        with pytest.raises(ProviderError, match=r"after 2 attempt\(s\): no answer within"):
            await provider(server, timeout_s=0.15, max_retries=1).chat(MESSAGES)
        # The client may give up before the server's thread has read the last request (a
        # loaded machine): it was sent all the same, and is counted once the server has it.
        _wait_for(lambda: len(server.requests) >= 2)
        assert len(server.requests) == 2
    finally:
        over.set()


def _wait_for(condition: Callable[[], bool], limit_s: float = HANG_S) -> None:
    """Poll ``condition`` (in the fake server's thread) until it holds or ``limit_s``
    passes; the test's assertion then says which."""
    deadline = time.monotonic() + limit_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.005)


async def test_openai_concurrency_is_limited_per_server(server: FakeLLMServer) -> None:
    # The fake runs script functions one at a time, but records each request on arrival:
    # requests arrived and not yet answered are the ones in flight.
    state = {"done": 0, "peak": 0}

    def counted(request: FakeRequest) -> Reply:
        _wait_for(lambda: len(server.requests) - state["done"] >= 2 or len(server.requests) == 6)
        time.sleep(0.05)  # a chance for a third request to arrive, were the limit broken
        state["peak"] = max(state["peak"], len(server.requests) - state["done"])
        state["done"] += 1
        return Reply("ok")

    server.script = ScriptedLLM(counted)
    one, two = provider(server, max_concurrency=2), provider(server, max_concurrency=2)
    answers = await asyncio.gather(*[(one if i % 2 else two).chat(MESSAGES) for i in range(6)])
    assert [a.text for a in answers] == ["ok"] * 6
    assert state["peak"] == 2


async def test_openai_without_a_tight_limit_calls_run_together(server: FakeLLMServer) -> None:
    state = {"done": 0, "peak": 0}

    def counted(request: FakeRequest) -> Reply:
        _wait_for(lambda: len(server.requests) == 4)  # never, were the calls one at a time
        state["peak"] = max(state["peak"], len(server.requests) - state["done"])
        state["done"] += 1
        return Reply("ok")

    server.script = ScriptedLLM(counted)
    adapter = provider(server, max_concurrency=8)
    await asyncio.gather(*[adapter.chat(MESSAGES) for _ in range(4)])
    assert state["peak"] == 4


async def test_openai_embeddings(server: FakeLLMServer) -> None:
    adapter = OpenAIProvider("text-embedding-3-small", base_url=server.openai_url, api_key="k")
    vectors = await adapter.embed(["a", "b", "a"])
    assert len(vectors) == 3 and len(vectors[0]) == 8
    assert vectors[0] == vectors[2] != vectors[1]


def test_openai_missing_key_names_the_variable() -> None:
    with pytest.raises(ProviderError, match="set the OPENAI_API_KEY environment variable"):
        OpenAIProvider("gpt-4o-mini")


def test_openai_custom_base_url_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCENARIST_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert OpenAIProvider("llama").base_url == "http://127.0.0.1:9/v1"


def test_openai_missing_sdk_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ProviderError, match=r"pip install 'scenarist\[openai\]'"):
        OpenAIProvider("gpt-4o-mini", api_key="k")
