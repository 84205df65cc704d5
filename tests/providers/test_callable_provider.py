"""CallableProvider: plain functions as providers, sync or async."""

from __future__ import annotations

from typing import Any

import pytest

from scenarist.providers import CallableProvider, ChatResponse, ProviderError, StructuredOutputError

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
HI = [{"role": "user", "content": "hi"}]


async def test_callable_sync_string_answer() -> None:
    def fn(messages: list[dict[str, str]]) -> str:
        return "echo " + messages[-1]["content"]

    answer = await CallableProvider(fn).chat(HI)
    assert answer.text == "echo hi"
    assert CallableProvider(fn).name == "callable/fn"


async def test_callable_async_receives_only_declared_keywords() -> None:
    seen: dict[str, Any] = {}

    async def fn(messages: list[dict[str, str]], json_schema: Any = None) -> dict[str, Any]:
        seen["schema"] = json_schema
        return {"ok": True}

    answer = await CallableProvider(fn, name="rules/v1").chat(HI, json_schema=SCHEMA)
    assert answer.parsed == {"ok": True} and answer.text == '{"ok": true}'
    assert seen["schema"] == SCHEMA


async def test_callable_string_is_parsed_when_a_schema_is_asked() -> None:
    answer = await CallableProvider(lambda m, **kw: '{"ok": false}').chat(HI, json_schema=SCHEMA)
    assert answer.parsed == {"ok": False}
    with pytest.raises(StructuredOutputError):
        await CallableProvider(lambda m: "nope").chat(HI, json_schema=SCHEMA)


async def test_callable_chat_response_is_used_as_is() -> None:
    response = ChatResponse(text="x", refusal="no")
    assert await CallableProvider(lambda m: response).chat(HI, json_schema=SCHEMA) is response


async def test_callable_wrong_return_type_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="returned int"):
        await CallableProvider(lambda m: 3).chat(HI)


async def test_callable_embeddings() -> None:
    adapter = CallableProvider(embed_fn=lambda texts: [[len(t), 1] for t in texts])
    assert await adapter.embed(["ab", "c"]) == [[2.0, 1.0], [1.0, 1.0]]
    with pytest.raises(ProviderError, match="no chat function"):
        await adapter.chat(HI)
    with pytest.raises(ProviderError, match="no embedding function"):
        await CallableProvider(lambda m: "x").embed(["a"])
