"""The OpenAI adapter: any server that speaks OpenAI chat completions, through the official SDK.

Structured output is sent the way ``structured_mode`` says, an explicit setting (the
constructor's argument, else ``SCENARIST_<PREFIX>_STRUCTURED_OUTPUT``, e.g.
``SCENARIST_OPENAI_STRUCTURED_OUTPUT=json_object``):

- ``json_schema``: ``response_format={"type": "json_schema", ...}`` (``strict: false``,
  so any JSON Schema is accepted; we validate the answer ourselves);
- ``json_object``: JSON mode, ``{"type": "json_object", "schema": ...}`` plus the schema
  in a system instruction (llama-cpp-python constrains decoding with that ``schema``);
- ``instruction``: the system instruction alone;
- ``auto`` (the default): ``json_schema``, and when the server refuses it (a 400 or 422
  that mentions the response format, or llama-cpp-python's 500 naming
  ``response_format``) the *same call* falls back to ``json_object``, then ``instruction``.

Nothing is remembered between calls: which request a call sends depends on the call and
the configuration only, never on what earlier calls in the process learnt, so a cassette
recorded in one order replays in any order, subset or concurrency. A server that refuses
``json_schema`` costs one refused request per call in ``auto``; the first fallback logs a
warning naming the setting that avoids it. An explicit mode that the server refuses is a
:class:`ProviderError` saying which mode to set.

Answers are parsed strictly (:mod:`scenarist.providers._structured`); a malformed answer is
asked again ``json_retries`` times (``chat(json_retries=0)`` for callers with a retry
policy of their own, the judges), then :class:`StructuredOutputError`, which carries the
refused answers. A refusal (``message.refusal``) is returned as ``ChatResponse.refusal``
with no ``parsed`` value and is not retried: asking again rarely changes a refusal, and the
caller decides.

One SDK client is made per call (and closed after it), so an adapter is safe to share
between event loops; the SDK's own retries are off (see :mod:`scenarist.providers._retry`).
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any, Literal, get_args

from scenarist.providers._retry import (
    RetryPolicy,
    Transient,
    call_with_retries,
    is_retryable_status,
    retry_after_s,
)
from scenarist.providers._structured import (
    StructuredOutputError,
    json_instruction,
    parse_structured,
)
from scenarist.providers.base import ChatResponse, Message, ProviderError
from scenarist.providers.pricing import cost_usd

__all__ = ["OpenAIProvider", "StructuredMode", "structured_mode_setting"]

logger = logging.getLogger("scenarist.providers")

StructuredMode = Literal["auto", "json_schema", "json_object", "instruction"]
MODES: tuple[str, ...] = get_args(StructuredMode)
_FALLBACK: dict[StructuredMode, StructuredMode] = {
    "json_schema": "json_object",
    "json_object": "instruction",
}


def import_sdk(module: str) -> Any:
    """Import an LLM SDK, or raise ProviderError with the exact install command."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ProviderError(
            f"the {module} provider needs the {module!r} package: pip install 'scenarist[{module}]'"
        ) from None


class OpenAIProvider:
    """Chat and embeddings on an OpenAI-compatible server (``openai/<model>``).

    ``base_url`` defaults to ``SCENARIST_OPENAI_BASE_URL``, then ``OPENAI_BASE_URL``,
    then OpenAI's. ``api_key`` defaults to the environment variable ``api_key_env``
    (``OPENAI_API_KEY``); a custom ``base_url`` without any key sends a placeholder,
    because local servers usually need none.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: str = "openai",
        api_key_env: str = "OPENAI_API_KEY",
        max_retries: int = 3,
        backoff_s: float = 0.5,
        timeout_s: float | None = 60.0,
        max_concurrency: int = 8,
        json_retries: int = 1,
        structured_mode: StructuredMode | None = None,
    ) -> None:
        self._sdk = import_sdk("openai")
        self.model = model
        self.provider = provider
        self.base_url = (
            base_url
            or os.environ.get("SCENARIST_OPENAI_BASE_URL")
            or os.environ.get("OPENAI_BASE_URL")
            or None
        )
        key = api_key or os.environ.get(api_key_env)
        if not key and self.base_url is None:
            raise ProviderError(
                f"{provider}/{model} needs an API key: set the {api_key_env} environment "
                "variable (or pass api_key=...)"
            )
        self._api_key = key or "unused"
        self.policy = RetryPolicy(max_retries, backoff_s, 30.0, timeout_s, max_concurrency)
        self.json_retries = json_retries
        self.structured_mode: StructuredMode = _mode(structured_mode, provider)

    @property
    def name(self) -> str:
        return f"{self.provider}/{self.model}"

    def __repr__(self) -> str:
        return f"OpenAIProvider({self.name!r}, base_url={self.base_url!r})"

    def _client(self) -> Any:
        return self._sdk.AsyncOpenAI(
            api_key=self._api_key,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.policy.timeout_s,
        )

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
        json_retries: int | None = None,
    ) -> ChatResponse:
        """The answer; with ``json_schema``, parsed and validated, a malformed one asked
        again ``json_retries`` times (default: the adapter's)."""
        retries = self.json_retries if json_retries is None else json_retries
        refused: list[ChatResponse] = []
        async with self._client() as client:
            last: StructuredOutputError | None = None
            for _ in range(retries + 1):
                response = await call_with_retries(
                    lambda: self._create(client, messages, temperature, max_tokens, json_schema),
                    self.policy,
                    key=f"{self.provider}@{client.base_url}",
                    describe=f"{self.name} chat",
                    on_error=ProviderError,
                )
                if json_schema is None or response.refusal is not None:
                    return response
                try:
                    parsed = parse_structured(response.text, json_schema)
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

    async def _create(
        self,
        client: Any,
        messages: list[Message],
        temperature: float,
        max_tokens: int | None,
        json_schema: dict[str, Any] | None,
    ) -> ChatResponse:
        mode: StructuredMode = (
            "json_schema" if self.structured_mode == "auto" else self.structured_mode
        )
        while True:
            request: dict[str, Any] = {
                "model": self.model,
                "messages": _with_instruction(messages, json_schema, mode),
                "temperature": temperature,
            }
            if max_tokens is not None:
                request["max_tokens"] = max_tokens
            if json_schema is not None and mode == "json_schema":
                request["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": json_schema, "strict": False},
                }
            elif json_schema is not None and mode == "json_object":
                # "schema" is llama-cpp-python's extension (it constrains decoding to the
                # schema); other servers ignore it, or reject it and we fall back again.
                request["response_format"] = {"type": "json_object", "schema": json_schema}
            try:
                completion = await client.chat.completions.create(**request)
            except self._sdk.APIStatusError as exc:
                if "response_format" in request and _about_format(exc):
                    if self.structured_mode == "auto" and mode in _FALLBACK:
                        self._warn_fallback(mode, _FALLBACK[mode], str(client.base_url))
                        mode = _FALLBACK[mode]
                        continue
                    raise self._format_refused(mode, exc) from None
                raise self._status_error(exc) from None
            except self._sdk.APIConnectionError as exc:  # timeouts included
                raise Transient(f"connection error: {exc}") from None
            return self._response(completion, str(client.base_url))

    def _warn_fallback(self, refused: str, using: str, base_url: str) -> None:
        key = (self.provider, base_url, refused)
        if key in _warned:
            return
        _warned.add(key)
        logger.warning(
            "%s refused response_format %r, so each structured call falls back to %r after "
            "one refused request; set %s=%s to send it directly",
            self.name,
            refused,
            using,
            structured_mode_setting(self.provider),
            using,
        )

    def _format_refused(self, mode: str, exc: Any) -> ProviderError:
        setting = structured_mode_setting(self.provider)
        return ProviderError(
            f"{self.name} refused response_format {mode!r} "
            f"(HTTP {exc.status_code}: {_error_message(exc)}); set {setting} to one the "
            f"server accepts: json_object (JSON mode, e.g. llama-cpp-python), instruction "
            f"(the schema in the prompt only) or auto (try json_schema, fall back per call)"
        )

    def _status_error(self, exc: Any) -> Exception:
        message = f"HTTP {exc.status_code}: {_error_message(exc)}"
        if is_retryable_status(exc.status_code):
            return Transient(message, retry_after_s(exc.response.headers))
        return ProviderError(f"{self.name} chat failed: {message}")

    def _response(self, completion: Any, api_url: str) -> ChatResponse:
        if not completion.choices:
            raise ProviderError(f"{self.name} answered with no choices")
        message = completion.choices[0].message
        usage = completion.usage
        tokens_in = getattr(usage, "prompt_tokens", None)
        tokens_out = getattr(usage, "completion_tokens", None)
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) or 0
        model = completion.model or self.model
        return ChatResponse(
            text=message.content or "",
            model=model,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost_usd=cost_usd(
                self.provider, model, tokens_in, tokens_out, cache_read_tokens=cached,
                api_url=api_url,
            ),
            refusal=getattr(message, "refusal", None) or None,
            raw=completion,
        )  # fmt: skip

    async def embed(self, texts: list[str]) -> list[list[float]]:
        async def attempt() -> list[list[float]]:
            try:
                result = await client.embeddings.create(model=self.model, input=texts)
            except self._sdk.APIStatusError as exc:
                raise self._status_error(exc) from None
            except self._sdk.APIConnectionError as exc:
                raise Transient(f"connection error: {exc}") from None
            ordered = sorted(result.data, key=lambda item: item.index)
            return [[float(x) for x in item.embedding] for item in ordered]

        async with self._client() as client:
            return await call_with_retries(
                attempt,
                self.policy,
                key=f"{self.provider}@{client.base_url}",
                describe=f"{self.name} embeddings",
                on_error=ProviderError,
            )


_warned: set[tuple[str, str, str]] = set()


def structured_mode_setting(provider: str) -> str:
    """The environment variable that sets a provider prefix's structured-output mode."""
    return f"SCENARIST_{re.sub(r'[^A-Z0-9]', '_', provider.upper())}_STRUCTURED_OUTPUT"


def _mode(value: str | None, provider: str) -> StructuredMode:
    """The configured mode: the argument, else the prefix's variable, else ``auto``."""
    setting = structured_mode_setting(provider)
    where = "structured_mode" if value is not None else setting
    if value is None:
        value = os.environ.get(setting, "").strip().lower() or "auto"
    if value not in MODES:
        raise ProviderError(
            f"{where}={value!r} is not a structured-output mode; use one of {', '.join(MODES)}"
        )
    mode: StructuredMode = value  # type: ignore[assignment]
    return mode


def _with_instruction(
    messages: list[Message], schema: dict[str, Any] | None, mode: StructuredMode
) -> list[Message]:
    """The messages, with the schema spelled out when the API cannot enforce it."""
    if schema is None or mode == "json_schema":
        return list(messages)
    return [{"role": "system", "content": json_instruction(schema)}, *messages]


def _about_format(exc: Any) -> bool:
    """Whether a refused request was refused because of its ``response_format``.

    Most servers answer 400 or 422; llama-cpp-python's server answers 500 with its
    validation error (``('body', 'response_format', 'type') ... Input should be 'text' or
    'json_object'``), so a 500 counts too when its message names ``response_format``.
    """
    text = _error_message(exc).lower()
    if exc.status_code in (400, 422):
        return "response_format" in text or "json" in text
    return exc.status_code == 500 and "response_format" in text


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(getattr(exc, "message", exc))
