"""A provider made of plain Python functions: tests, custom clients, rule-based fakes.

``fn(messages, **kw)`` receives the chat messages and the keyword arguments ``temperature``,
``max_tokens`` and ``json_schema`` (only those it declares, or all of them with
``**kwargs``), sync or ``async``, and returns:

* a ``str``: the answer's text (parsed strictly as JSON when a schema was requested);
* a ``dict`` or ``list``: an already-decoded structured answer (validated against the
  schema when one was requested; its text is the JSON);
* a :class:`ChatResponse`, used as is (``parsed`` is filled in when missing).

``embed_fn(texts)`` (sync or ``async``) supplies embeddings; without it ``embed`` raises.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from scenarist.providers._structured import StructuredOutputError, parse_structured, validate
from scenarist.providers.base import ChatResponse, Message, ProviderError

__all__ = ["CallableProvider"]


class CallableProvider:
    """Wrap ``fn(messages, **kw)`` (and optionally ``embed_fn(texts)``) as a Provider."""

    def __init__(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        embed_fn: Callable[[list[str]], Any] | None = None,
        name: str | None = None,
    ) -> None:
        if fn is None and embed_fn is None:
            raise ValueError("CallableProvider needs fn (chat), embed_fn (embeddings) or both")
        self.fn = fn
        self.embed_fn = embed_fn
        label = getattr(fn or embed_fn, "__name__", None) or type(fn or embed_fn).__name__
        self._name = name or f"callable/{label}"
        self._keywords = _accepted_keywords(fn) if fn is not None else frozenset()

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"CallableProvider({self._name!r})"

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
        json_retries: int | None = None,
    ) -> ChatResponse:
        """The function's answer (asked once: ``json_retries`` is accepted for the common
        signature; a callable has no retry of its own)."""
        if self.fn is None:
            raise ProviderError(f"{self._name} has no chat function; pass fn=...")
        options = {"temperature": temperature, "max_tokens": max_tokens, "json_schema": json_schema}
        answer = self.fn(
            list(messages), **{k: v for k, v in options.items() if k in self._keywords}
        )
        if inspect.isawaitable(answer):
            answer = await answer
        return _to_response(answer, json_schema, self._name)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if self.embed_fn is None:
            raise ProviderError(f"{self._name} has no embedding function; pass embed_fn=...")
        vectors = self.embed_fn(list(texts))
        if inspect.isawaitable(vectors):
            vectors = await vectors
        result = [[float(x) for x in vector] for vector in vectors]
        if len(result) != len(texts):
            raise ProviderError(
                f"{self._name} returned {len(result)} embedding(s) for {len(texts)} text(s)"
            )
        return result


def _accepted_keywords(fn: Callable[..., Any]) -> frozenset[str]:
    names = {"temperature", "max_tokens", "json_schema"}
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return frozenset()
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return frozenset(names)
    return frozenset(p.name for p in parameters if p.name in names)


def _to_response(answer: Any, schema: dict[str, Any] | None, name: str) -> ChatResponse:
    try:
        return _parsed_response(answer, schema, name)
    except StructuredOutputError as exc:  # keep the refused answer for the caller
        if isinstance(answer, ChatResponse):
            exc.responses = (answer,)
        elif isinstance(answer, str):
            exc.responses = (ChatResponse(text=answer, model=name),)
        raise


def _parsed_response(answer: Any, schema: dict[str, Any] | None, name: str) -> ChatResponse:
    if isinstance(answer, ChatResponse):
        if schema is not None and answer.parsed is None and answer.refusal is None:
            return answer.model_copy(update={"parsed": parse_structured(answer.text, schema)})
        return answer
    if isinstance(answer, str):
        parsed = parse_structured(answer, schema) if schema is not None else None
        return ChatResponse(text=answer, parsed=parsed, model=name)
    if isinstance(answer, dict | list):
        if schema is not None:
            validate(answer, schema)
        return ChatResponse(text=json.dumps(answer), parsed=answer, model=name)
    raise ProviderError(
        f"{name} returned {type(answer).__name__}; expected str, dict or ChatResponse"
    )
