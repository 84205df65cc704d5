"""The Anthropic adapter: Claude models through the official ``anthropic`` SDK.

Structured output uses a **forced tool call**: the schema becomes the input schema of one
tool, ``answer``, and ``tool_choice`` makes the model call it; the tool's input is the
answer. This is the mechanism every Claude model supports, and the API returns the input
already decoded, so there is no JSON text to mis-parse. Tool inputs must be objects, so a
schema of another type is wrapped as ``{"value": ...}`` and unwrapped again. A server that
answers with text instead (a proxy ignoring tools) is parsed strictly as JSON. The answer
is validated against the schema; a malformed one is asked again ``json_retries`` times.
A refusal (``stop_reason == "refusal"``) is returned in ``ChatResponse.refusal``.

``temperature`` is not sent: the anthropic 2.x SDK no longer has the parameter (current
Claude models choose their own sampling), so the argument is accepted and ignored.
Anthropic has no embeddings API: :meth:`AnthropicProvider.embed` raises ProviderError.
"""

from __future__ import annotations

import json
import os
from typing import Any

from scenarist.providers._retry import (
    RetryPolicy,
    Transient,
    call_with_retries,
    is_retryable_status,
    retry_after_s,
)
from scenarist.providers._structured import StructuredOutputError, parse_structured, validate
from scenarist.providers.base import ChatResponse, Message, ProviderError
from scenarist.providers.openai_provider import import_sdk
from scenarist.providers.pricing import cost_usd

__all__ = ["AnthropicProvider"]

DEFAULT_MAX_TOKENS = 1024
_TOOL = "answer"


class AnthropicProvider:
    """Chat with a Claude model (``anthropic/<model>``); the key is ``ANTHROPIC_API_KEY``."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        timeout_s: float | None = 60.0,
        max_concurrency: int = 8,
        json_retries: int = 1,
    ) -> None:
        self._sdk = import_sdk("anthropic")
        self.model = model
        self.base_url = base_url or os.environ.get("SCENARIST_ANTHROPIC_BASE_URL") or None
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise ProviderError(
                f"anthropic/{model} needs an API key: set the ANTHROPIC_API_KEY environment "
                "variable (or pass api_key=...)"
            )
        self._api_key = key
        self.policy = RetryPolicy(max_retries, backoff_s, 30.0, timeout_s, max_concurrency)
        self.json_retries = json_retries

    @property
    def name(self) -> str:
        return f"anthropic/{self.model}"

    def __repr__(self) -> str:
        return f"AnthropicProvider({self.name!r}, base_url={self.base_url!r})"

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
        json_retries: int | None = None,
    ) -> ChatResponse:
        """The answer; with ``json_schema``, validated, a malformed one asked again
        ``json_retries`` times (default: the adapter's)."""
        retries = self.json_retries if json_retries is None else json_retries
        refused: list[ChatResponse] = []
        client = self._sdk.AsyncAnthropic(
            api_key=self._api_key,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.policy.timeout_s,
        )
        request = self._request(messages, temperature, max_tokens, json_schema)
        last: StructuredOutputError | None = None
        async with client:
            for _ in range(retries + 1):
                response = await call_with_retries(
                    lambda: self._create(client, request),
                    self.policy,
                    key=f"anthropic@{client.base_url}",
                    describe=f"{self.name} chat",
                    on_error=ProviderError,
                )
                if json_schema is None or response.refusal is not None:
                    return response
                try:
                    parsed = _structured(response, json_schema)
                except StructuredOutputError as exc:
                    last = exc
                    refused.append(response)
                    continue
                return response.model_copy(update={"parsed": parsed})
        error = StructuredOutputError(
            f"{self.name} gave no usable structured answer in {retries + 1} attempt(s): {last}"
        )
        error.responses = tuple(refused)
        raise error

    def _request(
        self,
        messages: list[Message],
        temperature: float,
        max_tokens: int | None,
        json_schema: dict[str, Any] | None,
    ) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": m["role"], "content": m["content"]}
                for m in messages
                if m["role"] != "system"
            ],
            "max_tokens": max_tokens or DEFAULT_MAX_TOKENS,
        }
        if system:
            request["system"] = system
        if json_schema is not None:
            request["tools"] = [
                {
                    "name": _TOOL,
                    "description": "Give your answer by calling this tool.",
                    "input_schema": _as_object_schema(json_schema),
                }
            ]
            request["tool_choice"] = {"type": "tool", "name": _TOOL}
        return request

    async def _create(self, client: Any, request: dict[str, Any]) -> ChatResponse:
        try:
            message = await client.messages.create(**request)
        except self._sdk.APIStatusError as exc:
            text = f"HTTP {exc.status_code}: {getattr(exc, 'message', exc)}"
            if is_retryable_status(exc.status_code):
                raise Transient(text, retry_after_s(exc.response.headers)) from None
            raise ProviderError(f"{self.name} chat failed: {text}") from None
        except self._sdk.APIConnectionError as exc:  # timeouts included
            raise Transient(f"connection error: {exc}") from None
        usage = message.usage
        cached = getattr(usage, "cache_read_input_tokens", None) or 0
        written = getattr(usage, "cache_creation_input_tokens", None) or 0
        tokens_in = (getattr(usage, "input_tokens", None) or 0) + cached + written
        tokens_out = getattr(usage, "output_tokens", None)
        model = message.model or self.model
        text = "".join(b.text for b in message.content if getattr(b, "type", "") == "text")
        refused = message.stop_reason == "refusal"
        return ChatResponse(
            text="" if refused else text,
            model=model,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost_usd=cost_usd(
                "anthropic", model, tokens_in, tokens_out, cache_read_tokens=cached,
                cache_write_tokens=written, api_url=str(client.base_url),
            ),
            refusal=(text or "the model refused to answer") if refused else None,
            raw=message,
        )  # fmt: skip

    async def embed(self, texts: list[str]) -> list[list[float]]:
        raise ProviderError(
            f"{self.name} cannot embed texts: Anthropic has no embeddings API; use an "
            "embedding model such as 'openai/text-embedding-3-small' or 'local/e5-small'"
        )


def _as_object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    if schema.get("type") == "object":
        return schema
    return {"type": "object", "properties": {"value": schema}, "required": ["value"]}


def _structured(response: ChatResponse, schema: dict[str, Any]) -> Any:
    """The forced tool call's input (unwrapped), else the text parsed strictly."""
    for block in getattr(response.raw, "content", ()):
        if getattr(block, "type", "") == "tool_use" and block.name == _TOOL:
            value = block.input
            if schema.get("type") != "object":
                if not isinstance(value, dict) or "value" not in value:
                    raise StructuredOutputError(
                        f"the answer tool was called without 'value': {json.dumps(value)!r}"
                    )
                value = value["value"]
            validate(value, schema)
            return value
    return parse_structured(response.text, schema)
